"""Anthropic's Messages API over plain HTTP, with Strands' ``AnthropicModel`` arguments.

Strands wraps the ``anthropic`` package; statehitl sends the same request with the standard library
(``POST /v1/messages`` with ``"stream": true``) and translates the server-sent events into Converse
stream events as they arrive, so the agent assembles Claude's reply as it does Bedrock's: text,
tool uses (their input streamed as JSON fragments), extended thinking with its signature, stop
reasons under Strands' names, and token usage.

Like the ``anthropic`` client, a request the API refuses with a retryable status (429 rate limits,
529 overload, 5xx, 408, 409) is sent again up to ``max_retries`` times (default 2) before its error
is raised, waiting as the API asks; throttling and overload then surface as
``ModelThrottledException`` and a prompt that does not fit as ``ContextWindowOverflowException``.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from email.message import Message as HeaderMap
from typing import Any, TypedDict

from statehitl.models._http import Endpoint, stream_lines
from statehitl.models.base import Model, iterate_in_thread, require_known_options
from statehitl.models.errors import ContextWindowOverflowException, ModelError, ModelThrottledException
from statehitl.models.streaming import delta_event
from statehitl.types.content import ContentBlock, Messages
from statehitl.types.streaming import StreamEvent
from statehitl.types.tools import ToolSpec

__all__ = ["AnthropicModel"]

_API_URL = "https://api.anthropic.com"
_API_VERSION = "2023-06-01"
_TIMEOUT = 600.0
"""The anthropic client's default, in seconds (here: for connecting and for each wait for data)."""
_MAX_RETRIES = 2
_CLIENT_ARGS = ("api_key", "auth_token", "base_url", "timeout", "max_retries", "default_headers")
_STOP_REASONS = {
    "end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens", "stop_sequence": "stop_sequence",
    "refusal": "content_filtered", "model_context_window_exceeded": "max_tokens", "pause_turn": "end_turn",
}
"""Anthropic's stop reasons as Strands names them; a refusal is content the model would not produce."""
_OVERFLOW_MESSAGES = (
    "prompt is too long", "input is too long", "input length exceeds context window",
    "input and output tokens exceed your context limit",
)
_TEXT_DOCUMENTS = {"txt", "md", "csv", "html"}


class AnthropicModel(Model):
    """Claude through Anthropic's API. ``model_id`` (``"claude-sonnet-4-5"``) and ``max_tokens`` are required.

    ``params`` are sent as request fields over the defaults (``temperature``, ``thinking``, ...).
    ``client_args`` are the ``anthropic.Anthropic`` client's: ``api_key`` (default
    ``ANTHROPIC_API_KEY``) or ``auth_token`` (a bearer token, default ``ANTHROPIC_AUTH_TOKEN``),
    ``base_url`` (default ``ANTHROPIC_BASE_URL``, else Anthropic's API), ``timeout`` (seconds for each
    wait for data), ``max_retries`` and ``default_headers`` (``anthropic-beta``...).
    """

    class AnthropicConfig(TypedDict, total=False):
        """What the constructor and ``update_config`` take."""

        max_tokens: int
        model_id: str
        params: dict[str, Any] | None

    def __init__(self, *, client_args: dict[str, Any] | None = None, **model_config: Any) -> None:
        self.config: AnthropicModel.AnthropicConfig = {}
        self.update_config(**model_config)
        missing = [name for name in ("model_id", "max_tokens") if self.config.get(name) is None]
        if missing:
            raise TypeError(f"AnthropicModel needs {' and '.join(f'{name}=' for name in missing)} (such as "
                            "model_id='claude-sonnet-4-5', max_tokens=4096)")
        args = dict(client_args or {})
        require_known_options("AnthropicModel client_args", args, _CLIENT_ARGS)
        self.client_args = args
        base_url = args.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or _API_URL
        self.endpoint = Endpoint.parse(base_url, "/v1/messages", owner="AnthropicModel base_url", example=_API_URL)
        self.timeout = _TIMEOUT if args.get("timeout") is None else float(args["timeout"])
        self.max_retries = _MAX_RETRIES if args.get("max_retries") is None else int(args["max_retries"])
        self._headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
                         "anthropic-version": _API_VERSION, **(args.get("default_headers") or {})}
        api_key = args.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
        auth_token = args.get("auth_token") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if api_key:
            self._headers["x-api-key"] = api_key
        elif auth_token:
            self._headers["Authorization"] = f"Bearer {auth_token}"

    def update_config(self, **model_config: Any) -> None:
        require_known_options("AnthropicModel", model_config, self.AnthropicConfig.__annotations__)
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> AnthropicModel.AnthropicConfig:
        return self.config

    def format_request(
        self, messages: Messages, tool_specs: list[ToolSpec] | None = None, system_prompt: str | None = None
    ) -> dict[str, Any]:
        """The JSON body of the Messages API request for this conversation."""
        body: dict[str, Any] = {
            "model": self.config["model_id"],
            "max_tokens": self.config["max_tokens"],
            "messages": _anthropic_messages(messages),
            "stream": True,
        }
        if system_prompt:
            body["system"] = system_prompt
        if tool_specs:
            body["tools"] = [
                {"name": spec["name"], "description": spec["description"], "input_schema": spec["inputSchema"]["json"]}
                for spec in tool_specs
            ]
        body.update(self.config.get("params") or {})
        return body

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]:
        """POST the conversation in a worker thread and yield Converse events as Anthropic's arrive."""
        body = json.dumps(self.format_request(messages, tool_specs, system_prompt)).encode()
        async for event in iterate_in_thread(functools.partial(self._events, body)):
            yield event

    def _events(self, body: bytes) -> Iterator[StreamEvent]:
        if "x-api-key" not in self._headers and "Authorization" not in self._headers:
            raise ModelError("AnthropicModel has no API key: set ANTHROPIC_API_KEY, or pass client_args={'api_key': "
                             "...} (or 'auth_token' for a bearer token)")
        started = time.perf_counter()
        converter = _EventConverter(self._where)
        lines = stream_lines(self.endpoint, body, self._headers, timeout=self.timeout,
                             status_error=self._status_error, max_retries=self.max_retries,
                             refused_hint="Check base_url, or the proxy in between")
        for payload in _sse_payloads(lines):
            yield from converter.feed(payload)
        yield from converter.finish(latency_ms=int((time.perf_counter() - started) * 1000))

    @property
    def _where(self) -> str:
        return f"Anthropic (model {self.config['model_id']!r} at {self.endpoint.base_url})"

    def _status_error(self, status: int, body: bytes, headers: HeaderMap) -> ModelError:
        kind, detail = _error_detail(body)
        request_id = headers.get("request-id")
        detail += f" (request-id {request_id})" if request_id else ""
        where = self._where
        retried = f" after {self.max_retries} retries" if self.max_retries and status in (429, 529) else ""
        if status == 429 or kind == "rate_limit_error":
            return ModelThrottledException(f"{where} is rate limiting requests{retried}: {detail}. Wait and retry, "
                                           "slow down, or ask Anthropic for higher rate limits")
        if status == 529 or kind == "overloaded_error":
            return ModelThrottledException(f"{where} is overloaded{retried}: {detail}. Wait and retry")
        if status in (400, 413) and any(marker in detail.lower() for marker in _OVERFLOW_MESSAGES):
            return ContextWindowOverflowException(f"the conversation is too long for {where}: {detail}")
        if status == 401:
            return ModelError(f"{where} refused the credentials (HTTP 401): {detail}; check ANTHROPIC_API_KEY or "
                              "client_args['api_key']")
        if status == 403:
            return ModelError(f"{where} denied the request (HTTP 403): {detail}; the API key may lack access to "
                              "this model or feature")
        if status == 404:
            return ModelError(f"{where} answered HTTP 404: {detail}; check model_id, and base_url if you set it")
        return ModelError(f"{where} answered HTTP {status} ({kind or 'error'}): {detail}")


def _sse_payloads(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The JSON of each ``data:`` line; each names its own ``type``, so the ``event:`` lines are not needed."""
    for raw in lines:
        if raw.startswith(b"data:"):
            try:
                yield json.loads(raw[5:])
            except ValueError:
                raise ModelError(f"Anthropic sent an unreadable stream line: {raw[:200]!r}") from None


class _EventConverter:
    """Messages API events in, Converse events out.

    Block starts and stops map one to one, except for blocks with no Converse counterpart (server
    tool results, ...), whose events are skipped by index. Usage arrives in two parts: input tokens
    in ``message_start``, the (cumulative) output count in ``message_delta``.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.started = False
        self.skipped: set[int] = set()
        self.stop_reason = "end_turn"
        self.usage: dict[str, int] = {}

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        events: list[StreamEvent] = []
        if not self.started and kind in ("message_start", "content_block_start"):
            events.append({"messageStart": {"role": "assistant"}})
            self.started = True
        if kind == "message_start":
            self._count((event.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            events += self._start(event["index"], event["content_block"])
        elif kind == "content_block_delta":
            if event["index"] not in self.skipped:
                events += _delta(event["delta"])
        elif kind == "content_block_stop":
            if event["index"] not in self.skipped:
                events.append({"contentBlockStop": {}})
        elif kind == "message_delta":
            reason = (event.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop_reason = _STOP_REASONS.get(reason, "end_turn")
            self._count(event.get("usage"))
        elif kind == "error":
            raise _stream_error(event.get("error") or {}, self.where)
        return events  # ping, message_stop and event types added later carry nothing to translate

    def finish(self, latency_ms: int) -> list[StreamEvent]:
        events: list[StreamEvent] = [] if self.started else [{"messageStart": {"role": "assistant"}}]
        usage: dict[str, int] = {
            "inputTokens": self.usage.get("input_tokens", 0),
            "outputTokens": self.usage.get("output_tokens", 0),
        }
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        for ours, theirs in (("cacheReadInputTokens", "cache_read_input_tokens"),
                             ("cacheWriteInputTokens", "cache_creation_input_tokens")):
            if self.usage.get(theirs):
                usage[ours] = self.usage[theirs]
        events.append({"messageStop": {"stopReason": self.stop_reason}})
        events.append({"metadata": {"usage": usage, "metrics": {"latencyMs": latency_ms}}})
        return events

    def _count(self, usage: dict[str, Any] | None) -> None:
        for name, value in (usage or {}).items():
            if isinstance(value, int):
                self.usage[name] = value

    def _start(self, index: int, block: dict[str, Any]) -> list[StreamEvent]:
        kind = block.get("type")
        if kind == "tool_use":
            start = {"toolUse": {"toolUseId": block["id"], "name": block["name"]}}
            return [{"contentBlockStart": {"start": start}}]
        if kind == "text":
            return [delta_event({"text": block["text"]})] if block.get("text") else []
        if kind == "thinking":
            return []
        if kind == "redacted_thinking":
            return [delta_event({"reasoningContent": {"redactedContent": block["data"].encode()}})]
        self.skipped.add(index)
        return []


def _delta(delta: dict[str, Any]) -> list[StreamEvent]:
    kind = delta.get("type")
    if kind == "text_delta":
        return [delta_event({"text": delta["text"]})]
    if kind == "input_json_delta":
        return [delta_event({"toolUse": {"input": delta["partial_json"]}})]
    if kind == "thinking_delta":
        return [delta_event({"reasoningContent": {"text": delta["thinking"]}})]
    if kind == "signature_delta":
        return [delta_event({"reasoningContent": {"signature": delta["signature"]}})]
    return []  # citations and delta types added later


def _stream_error(error: dict[str, Any], where: str) -> ModelError:
    """An ``error`` event sent after the reply began (HTTP 200 already sent): overload, mostly."""
    kind, message = error.get("type", "error"), error.get("message", "")
    if kind in ("overloaded_error", "rate_limit_error"):
        return ModelThrottledException(f"{where} stopped mid-reply ({kind}): {message}. Wait and retry")
    return ModelError(f"{where} reported an error mid-reply ({kind}): {message}")


def _error_detail(body: bytes) -> tuple[str, str]:
    """``(type, message)`` of an error body ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
    try:
        payload = json.loads(body)
        error = payload["error"]
        return str(error.get("type", "")), str(error.get("message", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        return "", body.decode(errors="replace")[:500]


def _anthropic_messages(messages: Messages) -> list[dict[str, Any]]:
    """Converse messages as Messages API messages. Blocks Anthropic has no use for (interrupt responses,
    reasoning another provider wrote without a signature) are dropped, and a message left empty too."""
    converted = []
    for message in messages:
        content: list[dict[str, Any]] = []
        for block in message["content"]:
            if "cachePoint" in block:
                if content:
                    content[-1]["cache_control"] = {"type": "ephemeral"}
                continue
            part = _block(block)
            if part is not None:
                content.append(part)
        if content:
            converted.append({"role": message["role"], "content": content})
    return converted


def _block(block: ContentBlock | dict[str, Any]) -> dict[str, Any] | None:
    if "text" in block:
        return {"type": "text", "text": block["text"]}
    if "toolUse" in block:
        use = block["toolUse"]
        return {"type": "tool_use", "id": use["toolUseId"], "name": use["name"], "input": use["input"]}
    if "toolResult" in block:
        result = block["toolResult"]
        parts = [
            _block({"text": json.dumps(part["json"])} if "json" in part else part)  # type: ignore[arg-type]
            for part in result["content"]
        ]
        return {"type": "tool_result", "tool_use_id": result["toolUseId"], "content": [p for p in parts if p],
                "is_error": result.get("status") == "error"}
    if "image" in block:
        image = block["image"]
        media = "jpeg" if image.get("format") == "jpg" else image.get("format", "png")
        return {"type": "image", "source": {"type": "base64", "media_type": f"image/{media}",
                                            "data": _base64(image["source"]["bytes"])}}
    if "document" in block:
        return _document(block["document"])
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]
        if "redactedContent" in reasoning:
            data = reasoning["redactedContent"]
            return {"type": "redacted_thinking", "data": data.decode() if isinstance(data, bytes) else data}
        text = reasoning.get("reasoningText") or {}
        if text.get("signature"):
            return {"type": "thinking", "thinking": text.get("text", ""), "signature": text["signature"]}
        return None
    if "video" in block:
        raise ModelError("AnthropicModel cannot send video blocks; Claude reads text, images and documents")
    return None


def _document(document: dict[str, Any]) -> dict[str, Any]:
    kind = document.get("format", "")
    data = document["source"]["bytes"]
    if kind == "pdf":
        source = {"type": "base64", "media_type": "application/pdf", "data": _base64(data)}
    elif kind in _TEXT_DOCUMENTS:
        text = data.decode() if isinstance(data, bytes) else base64.b64decode(data).decode()
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        raise ModelError(f"AnthropicModel cannot send a {kind!r} document; Claude reads PDF and plain-text documents "
                         f"({', '.join(sorted(_TEXT_DOCUMENTS))})")
    return {"type": "document", "source": source, "title": document.get("name", "document")}


def _base64(data: bytes | str) -> str:
    return base64.b64encode(data).decode() if isinstance(data, bytes) else data  # str: already base64
