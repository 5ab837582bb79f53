"""AnthropicModel over real HTTP (http.client) against recorded Messages API streams served on loopback."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from model_wire import RECORDINGS, Reply, WireServer, json_reply, recording

from statehitl.models import (
    AnthropicModel,
    ContextWindowOverflowException,
    ModelError,
    ModelThrottledException,
    ModelTurn,
    collect_turn,
)
from statehitl.models.anthropic import AnthropicModel as FromStrandsPath

MODEL_ID = "claude-sonnet-4-5-20250929"
SPEC = {
    "name": "lookup_order",
    "description": "Look up an order.",
    "inputSchema": {"json": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
}
PROMPT: list[Any] = [{"role": "user", "content": [{"text": "Refund order A-1042"}]}]


def sse_reply(name: str) -> Reply:
    return Reply(200, {"Content-Type": "text/event-stream", "request-id": "req_011CUvm1"},
                 (RECORDINGS / name).read_bytes())


def error(name: str, **headers: str) -> Reply:
    reply = json_reply(recording("anthropic_errors.json")[name])
    reply.headers.update(headers)
    return reply


def make_model(server: WireServer, **client_args: Any) -> AnthropicModel:
    return AnthropicModel(client_args={"api_key": "sk-ant-test", "base_url": server.url, **client_args},
                          model_id=MODEL_ID, max_tokens=1024, params={"temperature": 0.2})


def run(model: AnthropicModel, messages: list[Any] = PROMPT, **kwargs: Any) -> ModelTurn:
    return asyncio.run(collect_turn(model.stream(messages, **kwargs)))


def test_the_strands_import_path_is_the_same_class() -> None:
    assert FromStrandsPath is AnthropicModel


def test_a_text_reply_and_the_request_anthropic_received(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("anthropic_text.sse"))
    turn = run(make_model(wire_server), system_prompt="You handle refunds.")

    assert turn.message == {"role": "assistant", "content": [{"text": "Order A-1042 was refunded $20."}]}
    assert turn.stop_reason == "end_turn"
    assert turn.usage == {"inputTokens": 472, "outputTokens": 12, "totalTokens": 484}
    assert turn.metrics["latencyMs"] >= 0

    (request,) = wire_server.received
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.json() == {
        "model": MODEL_ID,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Refund order A-1042"}]}],
        "stream": True,
        "system": "You handle refunds.",
        "temperature": 0.2,
    }


def test_thinking_text_and_tool_uses_streamed_in_fragments(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("anthropic_tool_use.sse"))
    tool_input: list[str] = []
    turn = asyncio.run(collect_turn(
        make_model(wire_server).stream(PROMPT, tool_specs=[SPEC]),
        lambda kw: tool_input.append(kw["current_tool_use"]["input"]) if "current_tool_use" in kw else None,
    ))

    thinking, text, lookup, refund = turn.message["content"]
    assert thinking["reasoningContent"]["reasoningText"]["text"] == "The user wants a refund; look the order up first."
    assert thinking["reasoningContent"]["reasoningText"]["signature"].startswith("EqQBCgIYAhIM")
    assert text == {"text": "I'll look up the order and refund it."}
    assert lookup == {"toolUse": {"toolUseId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "lookup_order",
                                  "input": {"order_id": "A-1042"}}}
    assert refund["toolUse"]["input"] == {"order_id": "A-1042", "amount": 20}
    assert turn.stop_reason == "tool_use"
    assert turn.usage == {"inputTokens": 1107, "outputTokens": 164, "totalTokens": 1271,
                          "cacheReadInputTokens": 2048}
    assert tool_input[:3] == ["", '{"order_id"', '{"order_id": "A-10']
    assert wire_server.received[0].json()["tools"] == [{
        "name": "lookup_order", "description": "Look up an order.",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }]


def test_history_is_sent_as_anthropic_blocks(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("anthropic_text.sse"))
    history: list[Any] = [
        *PROMPT,
        {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "look it up", "signature": "sig"}}},
            {"reasoningContent": {"reasoningText": {"text": "another provider's, unsigned"}}},
            {"toolUse": {"toolUseId": "toolu_1", "name": "lookup_order", "input": {"order_id": "A-1042"}}},
        ]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "toolu_1", "status": "error",
                            "content": [{"text": "not found"}, {"json": {"code": 404}}]}},
            {"interruptResponse": {"interruptId": "i1", "response": "y"}},
            {"image": {"format": "jpg", "source": {"bytes": b"\xff\xd8"}}},
            {"cachePoint": {"type": "default"}},
            {"document": {"format": "txt", "name": "policy", "source": {"bytes": b"30 days"}}},
        ]},
        {"role": "user", "content": [{"interruptResponse": {"interruptId": "i2", "response": "n"}}]},
    ]
    run(make_model(wire_server), history)
    assert wire_server.received[0].json()["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Refund order A-1042"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look it up", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order_id": "A-1042"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True, "content": [
                {"type": "text", "text": "not found"}, {"type": "text", "text": '{"code": 404}'}]},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9g="},
             "cache_control": {"type": "ephemeral"}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "30 days"},
             "title": "policy"},
        ]},
    ]


def test_unsendable_blocks_fail_before_any_request() -> None:
    model = AnthropicModel(model_id=MODEL_ID, max_tokens=10)
    with pytest.raises(ModelError, match="cannot send video"):
        model.format_request([{"role": "user", "content": [{"video": {}}]}])  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ModelError, match="cannot send a 'docx' document"):
        model.format_request([{"role": "user", "content": [
            {"document": {"format": "docx", "name": "d", "source": {"bytes": b""}}}]}])


def test_rate_limiting_is_throttling_and_names_the_request(wire_server: WireServer) -> None:
    wire_server.replies.append(error("rate_limit"))
    with pytest.raises(ModelThrottledException, match=r"rate limiting .*50,000 input tokens.*req_011CUvk7w2F6c"):
        run(make_model(wire_server, max_retries=0))
    assert len(wire_server.received) == 1


def test_a_wait_longer_than_a_minute_is_not_waited_for(wire_server: WireServer) -> None:
    wire_server.replies.append(error("rate_limit", **{"retry-after": "120"}))
    began = time.monotonic()
    with pytest.raises(ModelThrottledException):
        run(make_model(wire_server))  # two retries left, but the API asks for two minutes
    assert time.monotonic() - began < 5
    assert len(wire_server.received) == 1


def test_overload_is_retried_then_answered(wire_server: WireServer) -> None:
    wire_server.replies += [error("overloaded"), sse_reply("anthropic_text.sse")]
    turn = run(make_model(wire_server))
    assert turn.message["content"] == [{"text": "Order A-1042 was refunded $20."}]
    assert len(wire_server.received) == 2
    assert wire_server.received[0].body == wire_server.received[1].body


def test_overload_past_the_retries_is_throttling(wire_server: WireServer) -> None:
    wire_server.replies += [error("overloaded"), error("overloaded")]
    with pytest.raises(ModelThrottledException, match=r"overloaded after 1 retries: Overloaded"):
        run(make_model(wire_server, max_retries=1))
    assert len(wire_server.received) == 2


def test_overload_mid_reply_is_raised_after_what_arrived(wire_server: WireServer) -> None:
    wire_server.replies.append(sse_reply("anthropic_overloaded_mid_stream.sse"))
    seen: list[Any] = []

    async def consume() -> None:
        async for event in make_model(wire_server).stream(PROMPT):
            seen.append(event)

    with pytest.raises(ModelThrottledException, match=r"mid-reply \(overloaded_error\): Overloaded"):
        asyncio.run(consume())
    assert seen == [{"messageStart": {"role": "assistant"}}, {"contentBlockDelta": {"delta": {"text": "Order"}}}]
    assert len(wire_server.received) == 1  # a reply that began is never sent again


def test_a_prompt_too_long_is_a_context_window_overflow(wire_server: WireServer) -> None:
    wire_server.replies.append(error("context_overflow"))
    with pytest.raises(ContextWindowOverflowException, match="prompt is too long: 208310 tokens"):
        run(make_model(wire_server))
    assert len(wire_server.received) == 1


@pytest.mark.parametrize(("name", "message"), [
    ("authentication", r"refused the credentials \(HTTP 401\): invalid x-api-key .*check ANTHROPIC_API_KEY"),
    ("not_found", r"HTTP 404: model: claude-sonnet-9 .*check model_id"),
])
def test_other_errors_say_what_to_check(wire_server: WireServer, name: str, message: str) -> None:
    wire_server.replies.append(error(name))
    with pytest.raises(ModelError, match=message) as raised:
        run(make_model(wire_server))
    assert not isinstance(raised.value, ModelThrottledException | ContextWindowOverflowException)


def test_credentials_come_from_client_args_or_the_environment(wire_server: WireServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire_server.url)
    with pytest.raises(ModelError, match="no API key: set ANTHROPIC_API_KEY"):
        run(AnthropicModel(model_id=MODEL_ID, max_tokens=10))
    assert wire_server.received == []

    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok")
    wire_server.replies.append(sse_reply("anthropic_text.sse"))
    run(AnthropicModel(model_id=MODEL_ID, max_tokens=10, client_args={"default_headers": {"anthropic-beta": "b1"}}))
    (request,) = wire_server.received
    assert request.headers["Authorization"] == "Bearer tok"
    assert request.headers["anthropic-beta"] == "b1"
    assert "x-api-key" not in request.headers


def test_settings_are_checked() -> None:
    with pytest.raises(TypeError, match="needs model_id= and max_tokens="):
        AnthropicModel()
    with pytest.raises(TypeError, match="http_client"):
        AnthropicModel(model_id=MODEL_ID, max_tokens=10, client_args={"http_client": object()})
    with pytest.raises(ValueError, match="http"):
        AnthropicModel(model_id=MODEL_ID, max_tokens=10, client_args={"base_url": "api.anthropic.com"})
    model = AnthropicModel(model_id=MODEL_ID, max_tokens=10)
    model.update_config(max_tokens=2048, params={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    assert model.get_config() == {"model_id": MODEL_ID, "max_tokens": 2048,
                                  "params": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}
    with pytest.raises(TypeError, match="temperature"):
        model.update_config(temperature=0.1)  # a request field: it goes in params
