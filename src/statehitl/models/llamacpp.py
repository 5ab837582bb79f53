"""llama.cpp's ``llama-server``, with Strands' ``LlamaCppModel`` arguments, over its OpenAI-compatible endpoint.

The server takes its own sampling options (``top_k``, ``repeat_penalty``, ``grammar``, ``mirostat``...)
beside the OpenAI ones in the same request, so ``params`` go into the body as they are. A prompt
longer than the server's context is a ``ContextWindowOverflowException``; a server that is busy or
still loading its model (HTTP 503) a ``ModelThrottledException``, as in Strands.
"""

from __future__ import annotations

from typing import Any, TypedDict

from statehitl.models._http import Endpoint
from statehitl.models.base import require_known_options
from statehitl.models.openai import ChatCompletionsModel

__all__ = ["LlamaCppModel"]

_DEFAULT_URL = "http://localhost:8080"
_TIMEOUT = 30.0
"""Strands' default, in seconds: for connecting and for each wait for data."""


class LlamaCppModel(ChatCompletionsModel):
    """A model served by ``llama-server`` at ``base_url`` (the server's root, without ``/v1``).

    ``timeout`` is seconds, or Strands' ``(connect, read)`` tuple, whose read part bounds each wait for
    data. ``model_id`` defaults to ``"default"`` (the server serves the model it loaded); ``params``
    are sent as request fields over the defaults.
    """

    class LlamaCppConfig(TypedDict, total=False):
        """What the constructor and ``update_config`` take."""

        model_id: str
        params: dict[str, Any] | None

    _refused_hint = "Is llama-server running there? (`llama-server -m model.gguf --port 8080`)"
    _not_found_hint = "check base_url: the server's root, such as http://localhost:8080, without /v1"

    def __init__(
        self,
        base_url: str = _DEFAULT_URL,
        timeout: float | tuple[float, ...] | None = None,
        **model_config: Any,
    ) -> None:
        self.config: LlamaCppModel.LlamaCppConfig = {"model_id": "default"}
        self.update_config(**model_config)
        if isinstance(timeout, tuple):
            timeout = timeout[1] if len(timeout) > 1 else (timeout[0] if timeout else None)
        endpoint = Endpoint.parse(base_url.rstrip("/"), "/v1/chat/completions", owner="LlamaCppModel base_url",
                                  example=_DEFAULT_URL)
        self._connect(endpoint, api_key=None, timeout=_TIMEOUT if timeout is None else float(timeout))

    def update_config(self, **model_config: Any) -> None:
        require_known_options("LlamaCppModel", model_config, self.LlamaCppConfig.__annotations__)
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> LlamaCppModel.LlamaCppConfig:
        return self.config

    def _request_fields(self) -> tuple[str, dict[str, Any]]:
        return self.config["model_id"], self.config.get("params") or {}
