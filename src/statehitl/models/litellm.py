"""LiteLLM, with Strands' ``LiteLLMModel`` arguments, through a LiteLLM proxy's OpenAI-compatible endpoint.

Strands embeds the ``litellm`` library, which calls each provider itself. statehitl takes no such
dependency: it sends the conversation to a LiteLLM proxy (``litellm --config config.yaml``, which
then routes ``model_id`` to its provider) over HTTP, through the adapter every OpenAI-compatible
provider shares. So ``client_args["api_base"]`` names the proxy (default: ``LITELLM_PROXY_API_BASE``,
else http://localhost:4000, the proxy's own default), and a ``litellm_proxy/`` prefix on the model id,
which tells the library to go through a proxy, is taken off before the proxy sees the id.
"""

from __future__ import annotations

import os
from typing import Any, TypedDict

from statehitl.models._http import Endpoint
from statehitl.models.base import require_known_options
from statehitl.models.openai import ChatCompletionsModel

__all__ = ["LiteLLMModel"]

_PROXY_PREFIX = "litellm_proxy/"
_DEFAULT_PROXY = "http://localhost:4000"
_CLIENT_ARGS = ("api_key", "api_base", "base_url", "timeout", "use_litellm_proxy", "extra_headers")
_TIMEOUT = 600.0
"""litellm's own default request timeout, in seconds (here: for each wait for data)."""


class LiteLLMModel(ChatCompletionsModel):
    """A model behind a LiteLLM proxy; ``model_id`` is the name the proxy routes (``"openai/gpt-4o"``).

    ``client_args`` may hold ``api_key`` (default ``LITELLM_PROXY_API_KEY``), ``api_base`` (or
    ``base_url``), ``timeout`` (seconds for each wait for data), ``extra_headers`` and
    ``use_litellm_proxy`` (adds the ``litellm_proxy/`` prefix to the configured id, as in Strands).
    ``params`` are sent as request fields over the defaults.
    """

    class LiteLLMConfig(TypedDict, total=False):
        """What the constructor and ``update_config`` take."""

        model_id: str
        params: dict[str, Any] | None

    _refused_hint = ("LiteLLMModel talks to a LiteLLM proxy (statehitl does not embed the litellm library): start "
                     "one (`litellm --config config.yaml`), or point client_args={'api_base': ...} at yours")
    _not_found_hint = "check api_base (the proxy's address) and that the proxy serves the model id"

    def __init__(self, client_args: dict[str, Any] | None = None, **model_config: Any) -> None:
        self.client_args = dict(client_args or {})
        require_known_options("LiteLLMModel client_args", self.client_args, _CLIENT_ARGS)
        self.config: LiteLLMModel.LiteLLMConfig = {}
        self.update_config(**model_config)
        if not self.config.get("model_id"):
            raise TypeError("LiteLLMModel needs model_id=, the model the proxy routes, such as 'openai/gpt-4o'")
        args = self.client_args
        base = (args.get("api_base") or args.get("base_url") or os.environ.get("LITELLM_PROXY_API_BASE")
                or _DEFAULT_PROXY)
        endpoint = Endpoint.parse(base, "/chat/completions", owner="LiteLLMModel api_base", example=_DEFAULT_PROXY)
        timeout = args.get("timeout")
        self._connect(endpoint, api_key=args.get("api_key") or os.environ.get("LITELLM_PROXY_API_KEY"),
                      timeout=_TIMEOUT if timeout is None else float(timeout), headers=args.get("extra_headers"))

    def update_config(self, **model_config: Any) -> None:
        require_known_options("LiteLLMModel.update_config()", model_config, self.LiteLLMConfig.__annotations__)
        self.config.update(model_config)  # type: ignore[typeddict-item]
        model_id = self.config.get("model_id")
        if self.client_args.get("use_litellm_proxy") and model_id and not model_id.startswith(_PROXY_PREFIX):
            self.config["model_id"] = _PROXY_PREFIX + model_id

    def get_config(self) -> LiteLLMModel.LiteLLMConfig:
        return self.config

    def _request_fields(self) -> tuple[str, dict[str, Any]]:
        return self.config["model_id"].removeprefix(_PROXY_PREFIX), self.config.get("params") or {}
