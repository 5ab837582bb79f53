"""OpenAI-compatible chat-completions servers (OpenAI, Ollama, vLLM, llama.cpp, a LiteLLM proxy) over plain HTTP.

Only the standard library is used, so a local model needs no extra dependency. The request is a
blocking ``http.client`` call in a worker thread; its server-sent events are translated chunk by
chunk into Converse stream events, so the agent assembles the reply exactly as it does for Bedrock.

``ChatCompletionsModel`` holds the wire format; ``OpenAIModel`` and Strands' other OpenAI-compatible
providers (``OllamaModel``, ``LiteLLMModel``, ``LlamaCppModel``) are subclasses that differ only in
their constructor arguments (Strands' own), where they send requests, and which options become
request fields.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import time
import uuid
from abc import abstractmethod
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from email.message import Message as HeaderMap
from typing import Any, TypedDict

from statehitl.models._http import Endpoint, stream_lines
from statehitl.models.base import Model, iterate_in_thread, require_known_options
from statehitl.models.errors import ContextWindowOverflowException, ModelError, ModelThrottledException
from statehitl.models.streaming import delta_event
from statehitl.types.content import ContentBlock, Messages
from statehitl.types.streaming import StreamEvent
from statehitl.types.tools import ToolResult, ToolSpec

__all__ = ["ChatCompletionsModel", "OpenAIConfig", "OpenAIModel"]

_STOP_REASONS = {
    "stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
    "content_filter": "content_filtered",
}
_CONTEXT_OVERFLOW_MARKERS = (
    "maximum context length", "context_length_exceeded", "exceed_context_size", "exceeds the available context size",
    "context window", "contextwindowexceeded",
)
_OPENAI_URL = "https://api.openai.com/v1"
_CLIENT_ARGS = ("api_key", "base_url", "timeout", "default_headers", "organization", "project")
"""The ``openai.OpenAI`` client arguments that mean something over plain HTTP; others are refused by name."""


class ChatCompletionsModel(Model):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint: the request, the stream, the errors.

    Subclasses call ``_connect`` from their constructor and say which model and options a request
    carries (``_request_fields``). ``_refused_hint`` finishes the message for a refused connection, and
    ``_not_found_hint`` the one for an HTTP 404, with what to check on that kind of server.
    """

    _refused_hint = ("Is the server running? (Ollama: `ollama serve`; vLLM: `vllm serve <model>`; llama.cpp: "
                     "`llama-server`)")
    _not_found_hint = ("check that base_url ends in /v1 and that the model is served there (Ollama: "
                       "`ollama pull <model>`)")

    endpoint: Endpoint
    timeout: float
    _headers: dict[str, str]

    def _connect(self, endpoint: Endpoint, *, api_key: str | None, timeout: float,
                 headers: Mapping[str, str] | None = None) -> None:
        self.endpoint = endpoint
        self.base_url = endpoint.base_url
        self.timeout = timeout
        self._headers = {"Content-Type": "application/json", "Accept": "text/event-stream", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    @abstractmethod
    def _request_fields(self) -> tuple[str, dict[str, Any]]:
        """The model name the server knows, and the request fields the options add (sent over the defaults)."""

    def format_request(
        self, messages: Messages, tool_specs: list[ToolSpec] | None = None, system_prompt: str | None = None
    ) -> dict[str, Any]:
        """The JSON body of the chat-completions request for this conversation."""
        model, fields = self._request_fields()
        body: dict[str, Any] = {
            "model": model,
            "messages": _openai_messages(messages, system_prompt),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tool_specs:
            body["tools"] = [
                {"type": "function", "function": {
                    "name": spec["name"], "description": spec["description"], "parameters": spec["inputSchema"]["json"],
                }}
                for spec in tool_specs
            ]
        body.update(fields)
        return body

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]:
        """POST the conversation in a worker thread and yield Converse events as chunks arrive."""
        body = json.dumps(self.format_request(messages, tool_specs, system_prompt)).encode()
        async for event in iterate_in_thread(functools.partial(self._events, body)):
            yield event

    def _events(self, body: bytes) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        converter = _ChunkConverter()
        lines = stream_lines(self.endpoint, body, self._headers, timeout=self.timeout,
                             status_error=self._status_error, refused_hint=self._refused_hint)
        for chunk in _sse_payloads(lines):
            yield from converter.feed(chunk)
        yield from converter.finish(latency_ms=int((time.perf_counter() - started) * 1000))

    def _status_error(self, status: int, body: bytes, headers: HeaderMap) -> ModelError:
        return _http_error(status, body, f"{self.base_url} (model {self._request_fields()[0]!r})",
                           self._not_found_hint)


class OpenAIConfig(TypedDict, total=False):
    """What ``OpenAIModel.update_config`` takes."""

    model_id: str
    params: dict[str, Any]
    """Extra request fields (``temperature``, ``max_tokens``, ...), sent as they are, over the defaults."""


class OpenAIModel(ChatCompletionsModel):
    """A model served by an OpenAI-compatible ``/chat/completions`` endpoint.

    Two ways to say where, which are not mixed: ``base_url`` (default: a local Ollama), ``api_key``
    (sent as a bearer token when given) and ``timeout`` (seconds to connect and for each wait for data,
    not the whole reply); or Strands' ``client_args``, the ``openai.OpenAI`` client's arguments
    (``api_key``, ``base_url``, ``timeout``, ``default_headers``, ``organization``, ``project``) with that
    client's defaults: OpenAI's API, and the ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` variables.
    """

    def __init__(
        self,
        *,
        model_id: str,
        client_args: dict[str, Any] | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.config: OpenAIConfig = {"model_id": model_id, "params": dict(params or {})}
        headers: dict[str, str] = {}
        if client_args is not None:
            if base_url is not None or api_key is not None or timeout is not None:
                raise ValueError("OpenAIModel: pass either client_args= or base_url=/api_key=/timeout=, not both")
            require_known_options("OpenAIModel client_args", client_args, _CLIENT_ARGS)
            base_url = client_args.get("base_url") or os.environ.get("OPENAI_BASE_URL") or _OPENAI_URL
            api_key = client_args.get("api_key") or os.environ.get("OPENAI_API_KEY")
            timeout = client_args.get("timeout")
            headers.update(client_args.get("default_headers") or {})
            for name, header in (("organization", "OpenAI-Organization"), ("project", "OpenAI-Project")):
                if client_args.get(name):
                    headers[header] = client_args[name]
        self.client_args = dict(client_args or {})
        endpoint = Endpoint.parse(base_url or "http://localhost:11434/v1", "/chat/completions",
                                  owner="OpenAIModel base_url", example="http://localhost:11434/v1")
        self._connect(endpoint, api_key=api_key, timeout=60 if timeout is None else timeout, headers=headers)

    def update_config(self, **model_config: Any) -> None:
        require_known_options("OpenAIModel.update_config()", model_config, OpenAIConfig.__annotations__)
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> OpenAIConfig:
        return self.config

    def _request_fields(self) -> tuple[str, dict[str, Any]]:
        return self.config["model_id"], self.config.get("params") or {}


def _sse_payloads(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """Server-sent events: the JSON of each ``data:`` line, until ``data: [DONE]`` or the stream ends."""
    for raw in lines:
        if not raw.startswith(b"data:"):
            continue  # blank separators, ": keep-alive" comments, "event:" names
        data = raw[5:].strip()
        if data == b"[DONE]":
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            raise ModelError(f"the server sent an unreadable stream line: {raw[:200]!r}") from None
        if "error" in chunk:
            raise ModelError(f"the server reported an error mid-stream: {_error_detail(chunk)}")
        yield chunk


class _ChunkConverter:
    """Chat-completion chunks in, Converse events out; remembers which content block is open.

    Tool calls stream as fragments keyed by ``index``; a new index closes the previous call's block.
    Servers send one call's fragments together, so a fragment for an earlier call is an error rather
    than something to reorder.
    """

    def __init__(self) -> None:
        self.started = False
        self.open: str | None = None  # "text", "reasoning" or "tool"
        self.tool_index: int | None = None
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not self.started:
            events.append({"messageStart": {"role": "assistant"}})
            self.started = True
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self._enter("reasoning", events)
                events.append(delta_event({"reasoningContent": {"text": reasoning}}))
            if delta.get("content"):
                self._enter("text", events)
                events.append(delta_event({"text": delta["content"]}))
            for call in delta.get("tool_calls") or ():
                self._tool_call(call, events)
            if choice.get("finish_reason"):
                self.stop_reason = _STOP_REASONS.get(choice["finish_reason"], "end_turn")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        return events

    def finish(self, latency_ms: int) -> list[StreamEvent]:
        events: list[StreamEvent] = [] if self.started else [{"messageStart": {"role": "assistant"}}]
        self._enter(None, events)
        events.append({"messageStop": {"stopReason": self.stop_reason or "end_turn"}})
        usage = self.usage or {}
        events.append({"metadata": {
            "usage": {
                "inputTokens": usage.get("prompt_tokens", 0),
                "outputTokens": usage.get("completion_tokens", 0),
                "totalTokens": usage.get("total_tokens", 0),
            },
            "metrics": {"latencyMs": latency_ms},
        }})
        return events

    def _enter(self, kind: str | None, events: list[StreamEvent]) -> None:
        """Close the open block unless it is already of ``kind``."""
        if self.open is not None and self.open != kind:
            events.append({"contentBlockStop": {}})
        self.open = kind

    def _tool_call(self, call: dict[str, Any], events: list[StreamEvent]) -> None:
        index = call.get("index", 0)
        function = call.get("function") or {}
        if self.open != "tool" or index != self.tool_index:
            if not function.get("name"):
                raise ModelError(f"the server sent a fragment of tool call {index} after another block began: {call!r}")
            self._enter(None, events)
            tool_use_id = call.get("id") or f"call_{uuid.uuid4().hex[:24]}"
            start = {"toolUse": {"toolUseId": tool_use_id, "name": function["name"]}}
            events.append({"contentBlockStart": {"start": start}})
            self.open, self.tool_index = "tool", index
        arguments = function.get("arguments")
        if arguments:
            if not isinstance(arguments, str):  # a few servers send the arguments as an object
                arguments = json.dumps(arguments)
            events.append(delta_event({"toolUse": {"input": arguments}}))


def _openai_messages(messages: Messages, system_prompt: str | None) -> list[dict[str, Any]]:
    """Converse messages as chat-completions messages: each toolResult becomes a ``tool`` message
    placed before the user's other content, since the API wants tool replies right after the call."""
    converted: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for message in messages:
        if message["role"] == "assistant":
            converted.append(_assistant_message(message["content"]))
        else:
            converted.extend(_user_messages(message["content"]))
    return converted


def _assistant_message(content: list[ContentBlock]) -> dict[str, Any]:
    text = "\n".join(block["text"] for block in content if "text" in block)
    calls = [
        {"id": use["toolUseId"], "type": "function",
         "function": {"name": use["name"], "arguments": json.dumps(use["input"])}}
        for use in (block["toolUse"] for block in content if "toolUse" in block)
    ]
    if not calls:
        return {"role": "assistant", "content": text}
    return {"role": "assistant", "content": text or None, "tool_calls": calls}


def _user_messages(content: list[ContentBlock]) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content:
        if "toolResult" in block:
            result = block["toolResult"]
            converted.append({"role": "tool", "tool_call_id": result["toolUseId"],
                              "content": _tool_result_text(result)})
        elif "text" in block:
            parts.append({"type": "text", "text": block["text"]})
        elif "image" in block:
            parts.append({"type": "image_url", "image_url": {"url": _image_url(block["image"])}})
        elif "document" in block or "video" in block:
            raise ModelError("OpenAIModel cannot send document or video blocks; send their text, or use BedrockModel")
    if len(parts) == 1 and parts[0]["type"] == "text":
        converted.append({"role": "user", "content": parts[0]["text"]})
    elif parts:
        converted.append({"role": "user", "content": parts})
    return converted


def _tool_result_text(result: ToolResult) -> str:
    """A tool result as the plain text a ``tool`` message carries; failures are marked for the model."""
    texts = [
        part["text"] if "text" in part else json.dumps(part["json"])
        for part in result["content"]
        if "text" in part or "json" in part
    ]
    text = "\n".join(texts)
    return f"[error] {text}" if result.get("status") == "error" else text


def _image_url(image: dict[str, Any]) -> str:
    data = image["source"]["bytes"]
    encoded = base64.b64encode(data).decode() if isinstance(data, bytes) else data  # str: already base64
    return f"data:image/{image.get('format', 'png')};base64,{encoded}"


def _http_error(status: int, body: bytes, where: str, not_found_hint: str) -> ModelError:
    detail = _error_detail(body)
    if status == 429:
        return ModelThrottledException(f"{where} is rate limiting requests (HTTP 429): {detail}; wait and retry")
    if status in (503, 529):
        return ModelThrottledException(
            f"{where} is overloaded or still loading the model (HTTP {status}): {detail}; wait and retry"
        )
    if status in (400, 413) and any(marker in detail.lower() for marker in _CONTEXT_OVERFLOW_MARKERS):
        return ContextWindowOverflowException(f"the conversation is too long for {where}: {detail}")
    if status in (401, 403):
        return ModelError(f"{where} refused the request (HTTP {status}): {detail}; check api_key")
    if status == 404:
        return ModelError(f"{where} answered HTTP 404: {detail}; {not_found_hint}")
    return ModelError(f"{where} answered HTTP {status}: {detail}")


def _error_detail(body: bytes | dict[str, Any]) -> str:
    """The message of an OpenAI-style error body (``{"error": {"message": ..., "code": ...}}``), else the text."""
    try:
        payload = json.loads(body) if isinstance(body, bytes) else body
    except ValueError:
        return body.decode(errors="replace")[:500] if isinstance(body, bytes) else str(body)
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        code = error.get("code") or error.get("type")
        return f"{message} ({code})" if code and str(code) not in message else message
    return str(error)
