"""Ollama, with Strands' ``OllamaModel`` arguments, over Ollama's OpenAI-compatible endpoint.

Strands talks to Ollama's native ``/api/chat`` through the ``ollama`` package; statehitl sends the
same conversation to ``/v1/chat/completions`` on the same server with the standard library, through
the adapter every OpenAI-compatible provider shares. Two of Strands' settings have no field there:
``keep_alive`` and most of ``options`` (``top_k``, ``num_ctx``...), which that endpoint ignores. They
are accepted, so Strands code runs unchanged, and a warning names each one and where to set it on
the server instead; the ``options`` that do have a field (``num_predict``, ``temperature``, ``top_p``,
``stop``, ``seed`` and the two penalties) are sent as that field.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, TypedDict
from urllib.parse import urlsplit

from statehitl.models._http import Endpoint
from statehitl.models.base import require_known_options
from statehitl.models.openai import ChatCompletionsModel

__all__ = ["OllamaModel"]

_DEFAULT_HOST = "http://localhost:11434"
_OPTION_FIELDS = {
    "num_predict": "max_tokens", "temperature": "temperature", "top_p": "top_p", "stop": "stop", "seed": "seed",
    "frequency_penalty": "frequency_penalty", "presence_penalty": "presence_penalty",
}
"""Ollama ``options`` that the OpenAI-compatible endpoint takes, under the field it takes them as."""
_CLIENT_ARGS = ("timeout", "headers")
_TIMEOUT = 300.0
"""Seconds for each wait for data. The ollama client waits forever; a bound turns a hung server into an
error instead of a stuck agent, and this one is longer than loading even a large model takes."""


class OllamaModel(ChatCompletionsModel):
    """A model served by Ollama at ``host`` (default: ``OLLAMA_HOST``, else http://localhost:11434).

    ``model_id`` names the model (``"llama3.1"``); ``temperature``, ``top_p``, ``max_tokens`` and
    ``stop_sequences`` become request fields, ``additional_args`` are sent as extra request fields over
    everything else. ``ollama_client_args`` may hold ``timeout`` (seconds for each wait for data) and
    ``headers``.
    """

    class OllamaConfig(TypedDict, total=False):
        """What the constructor and ``update_config`` take: Strands' Ollama settings."""

        additional_args: dict[str, Any] | None
        keep_alive: str | None
        max_tokens: int | None
        model_id: str
        options: dict[str, Any] | None
        stop_sequences: list[str] | None
        temperature: float | None
        top_p: float | None

    _refused_hint = "Is Ollama running there? (`ollama serve`)"
    _not_found_hint = "pull the model first (`ollama pull <model>`), or check host"

    def __init__(
        self, host: str | None = None, *, ollama_client_args: dict[str, Any] | None = None, **model_config: Any
    ) -> None:
        require_known_options("OllamaModel", model_config, self.OllamaConfig.__annotations__)
        if not model_config.get("model_id"):
            raise TypeError("OllamaModel needs model_id=, the name Ollama serves the model under, such as 'llama3.1'")
        client_args = dict(ollama_client_args or {})
        require_known_options("OllamaModel ollama_client_args", client_args, _CLIENT_ARGS)
        self.host = host
        self.client_args = client_args
        self.config: OllamaModel.OllamaConfig = {}
        self._configure(model_config, stacklevel=4)
        endpoint = Endpoint.parse(_server_url(host), "/v1/chat/completions", owner="OllamaModel host",
                                  example=_DEFAULT_HOST)
        timeout = client_args.get("timeout")
        self._connect(endpoint, api_key=None, timeout=_TIMEOUT if timeout is None else float(timeout),
                      headers=client_args.get("headers"))

    def update_config(self, **model_config: Any) -> None:
        require_known_options("OllamaModel.update_config()", model_config, self.OllamaConfig.__annotations__)
        self._configure(model_config, stacklevel=4)

    def _configure(self, model_config: dict[str, Any], *, stacklevel: int) -> None:
        """Take ``model_config``; ``stacklevel`` points the warning at the caller's line, not at this module."""
        _warn_unsent(model_config, stacklevel)
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> OllamaModel.OllamaConfig:
        return self.config

    def _request_fields(self) -> tuple[str, dict[str, Any]]:
        config = self.config
        fields = {_OPTION_FIELDS[name]: value for name, value in (config.get("options") or {}).items()
                  if name in _OPTION_FIELDS}
        for name, field in (("max_tokens", "max_tokens"), ("temperature", "temperature"), ("top_p", "top_p"),
                            ("stop_sequences", "stop")):
            value = config.get(name)
            if value is not None:
                fields[field] = value
        fields.update(config.get("additional_args") or {})
        return config["model_id"], fields


def _server_url(host: str | None) -> str:
    """``host`` as the ollama client reads it: a missing scheme is http, and then a missing port 11434."""
    raw = host or os.environ.get("OLLAMA_HOST") or _DEFAULT_HOST
    if "://" in raw:
        return raw
    url = urlsplit(f"http://{raw}")
    return f"http://{raw}" if url.port is not None else f"http://{raw.rstrip('/')}:11434"


def _warn_unsent(config: dict[str, Any], stacklevel: int) -> None:
    """Say which settings Ollama's OpenAI-compatible endpoint cannot take, and where they go instead."""
    unsent = [f"options[{name!r}]" for name in (config.get("options") or {}) if name not in _OPTION_FIELDS]
    if config.get("keep_alive") is not None:
        unsent.insert(0, "keep_alive")
    if unsent:
        warnings.warn(
            f"OllamaModel: {', '.join(unsent)} cannot be sent to Ollama's OpenAI-compatible endpoint and will not "
            "apply; set them on the server instead (OLLAMA_KEEP_ALIVE, OLLAMA_CONTEXT_LENGTH, or PARAMETER lines in "
            "a Modelfile)",
            UserWarning,
            stacklevel=stacklevel,
        )
