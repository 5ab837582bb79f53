"""OpenAIModel over real HTTP (http.client) against recorded chat-completions streams served on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from model_wire import RECORDINGS, Reply, WireServer

from statehitl.models import (
    ContextWindowOverflowException,
    ModelError,
    ModelThrottledException,
    ModelTurn,
    OpenAIModel,
    collect_turn,
)

SPEC = {
    "name": "lookup_order",
    "description": "Look up an order.",
    "inputSchema": {"json": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
}
PROMPT: list[Any] = [{"role": "user", "content": [{"text": "What happened to A-1042?"}]}]


def sse_reply(name: str) -> Reply:
    return Reply(200, {"Content-Type": "text/event-stream"}, (RECORDINGS / name).read_bytes())


def error_reply(status: int, error: Any) -> Reply:
    return Reply(status, {"Content-Type": "application/json"}, json.dumps(error).encode())


def make_model(server: WireServer, **options: Any) -> OpenAIModel:
    return OpenAIModel(model_id="llama3.1:8b", base_url=f"{server.url}/v1", timeout=5, **options)


def run(model: OpenAIModel, messages: list[Any] = PROMPT, **kwargs: Any) -> ModelTurn:
    return asyncio.run(collect_turn(model.stream(messages, **kwargs)))


def test_text_answer(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("openai_text.sse"))
    turn = run(make_model(wire_server, api_key="sk-test", params={"temperature": 0.1}), system_prompt="Be brief.")

    assert turn.message == {"role": "assistant", "content": [{"text": "Order A-1042 was refunded $20."}]}
    assert turn.stop_reason == "end_turn"
    assert turn.usage == {"inputTokens": 58, "outputTokens": 9, "totalTokens": 67}
    assert turn.metrics["latencyMs"] >= 0

    (request,) = wire_server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.json() == {
        "model": "llama3.1:8b",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What happened to A-1042?"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.1,
    }


def test_tool_calls_with_fragmented_arguments(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("openai_tool_calls.sse"))
    progress: list[str] = []
    model = make_model(wire_server)
    turn = asyncio.run(collect_turn(
        model.stream(PROMPT, tool_specs=[SPEC]),
        lambda kw: progress.append(kw["current_tool_use"]["input"]) if "current_tool_use" in kw else None,
    ))

    assert turn.message["content"] == [
        {"text": "Checking both."},
        {"toolUse": {"toolUseId": "call_7hB2qX9d", "name": "lookup_order", "input": {"order_id": "A-1042"}}},
        {"toolUse": {"toolUseId": "call_Qm4Lz0Ps", "name": "refund", "input": {"order_id": "A-1042", "amount": 20}}},
    ]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == {"inputTokens": 211, "outputTokens": 48, "totalTokens": 259}
    assert progress[:3] == ['{"order', '{"order_id": "A-', '{"order_id": "A-1042"}']
    assert "Authorization" not in wire_server.received[0].headers
    assert wire_server.received[0].json()["tools"] == [{"type": "function", "function": {
        "name": "lookup_order", "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }}]


def test_history_with_tool_calls_and_results_is_converted(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("openai_text.sse"))
    history: list[Any] = [
        *PROMPT,
        {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "need data"}}},
            {"toolUse": {"toolUseId": "c1", "name": "lookup_order", "input": {"order_id": "A-1042"}}},
            {"toolUse": {"toolUseId": "c2", "name": "refund", "input": {"amount": 20}}},
        ]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "c1", "status": "success",
                            "content": [{"text": "found"}, {"json": {"total": 20}}]}},
            {"toolResult": {"toolUseId": "c2", "status": "error", "content": [{"text": "refund limit exceeded"}]}},
            {"text": "Also, hurry."},
            {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}},
        ]},
        {"role": "assistant", "content": [{"text": "Done."}]},
    ]
    run(make_model(wire_server), history)
    assert wire_server.received[0].json()["messages"] == [
        {"role": "user", "content": "What happened to A-1042?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1042"}'}},
            {"id": "c2", "type": "function", "function": {"name": "refund", "arguments": '{"amount": 20}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": 'found\n{"total": 20}'},
        {"role": "tool", "tool_call_id": "c2", "content": "[error] refund limit exceeded"},
        {"role": "user", "content": [
            {"type": "text", "text": "Also, hurry."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
        ]},
        {"role": "assistant", "content": "Done."},
    ]


def test_documents_cannot_be_sent() -> None:
    model = OpenAIModel(model_id="m")
    with pytest.raises(ModelError, match="document or video"):
        model.format_request([{"role": "user", "content": [{"document": {"name": "a"}}]}])


def test_length_finish_is_max_tokens_and_a_stream_may_end_without_done(wire_server: WireServer) -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"Trunc"},"finish_reason":"length"}]}\n\n'
    wire_server.replies.append(Reply(200, {"Content-Type": "text/event-stream"}, body))
    turn = run(make_model(wire_server))
    assert turn.message["content"] == [{"text": "Trunc"}]
    assert turn.stop_reason == "max_tokens"
    assert turn.usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def test_http_429_is_throttling(wire_server: WireServer) -> None:
    wire_server.replies.append(error_reply(429, {"error": {"message": "Rate limit reached", "type": "requests"}}))
    with pytest.raises(ModelThrottledException, match=r"HTTP 429\): Rate limit reached \(requests\)"):
        run(make_model(wire_server))


def test_context_length_errors_are_overflow(wire_server: WireServer) -> None:
    message = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    wire_server.replies.append(error_reply(400, {"error": {"message": message, "code": "context_length_exceeded"}}))
    with pytest.raises(ContextWindowOverflowException, match="maximum context length is 8192"):
        run(make_model(wire_server))


def test_unknown_model_suggests_what_to_check(wire_server: WireServer) -> None:
    wire_server.replies.append(error_reply(404, {"error": {"message": 'model "nope" not found, try pulling it first'}}))
    with pytest.raises(ModelError, match=r"(?s)HTTP 404.*not found.*ollama pull"):
        run(make_model(wire_server))


def test_an_error_mid_stream_is_raised(wire_server: WireServer) -> None:
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        b'data: {"error":{"message":"out of memory"}}\n\n'
    )
    wire_server.replies.append(Reply(200, {"Content-Type": "text/event-stream"}, body))
    with pytest.raises(ModelError, match="mid-stream: out of memory"):
        run(make_model(wire_server))


def test_connection_refused_names_the_url_and_suggests_starting_the_server() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIModel(model_id="m", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
    with pytest.raises(ModelError, match=rf"http://127.0.0.1:{port}/v1: connection refused. Is the server running"):
        run(model)


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAIModel(model_id="m", base_url="localhost:11434")
    model = OpenAIModel(model_id="m", params={"max_tokens": 5})
    model.update_config(model_id="qwen2.5")
    assert model.get_config() == {"model_id": "qwen2.5", "params": {"max_tokens": 5}}
    with pytest.raises(TypeError, match="base_url"):
        model.update_config(base_url="http://other")
