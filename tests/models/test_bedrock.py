"""BedrockModel through a real boto3 client, against recorded Bedrock responses served on loopback.

The recordings are Converse events as JSON; ``model_wire`` frames them as AWS event-stream messages
(with their CRCs), so botocore's own decoder parses them exactly as it parses Bedrock's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from model_wire import WireServer, bedrock_stream_reply, exception_frame, json_reply, recording

from statehitl.models import (
    BedrockModel,
    ContextWindowOverflowException,
    ModelError,
    ModelThrottledException,
    ModelTurn,
    collect_turn,
)

pytest.importorskip("boto3")

MODEL_ID = "us.anthropic.claude-sonnet-4-20250514-v1:0"
SPEC = {
    "name": "lookup_order",
    "description": "Look up an order.",
    "inputSchema": {"json": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
}
HISTORY: list[Any] = [
    {"role": "user", "content": [{"text": "Refund order A-1042"}]},
    {"role": "assistant", "content": [
        {"text": "Looking it up."},
        {"toolUse": {"toolUseId": "tu1", "name": "lookup_order", "input": {"order_id": "A-1042"}, "extra": 1}},
    ]},
    {"role": "user", "content": [
        {"toolResult": {"toolUseId": "tu1", "status": "success", "content": [{"json": {"total": 20}}],
                        "agent_note": "kept by a hook"}},
        {"interruptResponse": {"interruptId": "i1", "response": "y"}},
    ]},
]


@pytest.fixture(scope="module")
def session() -> Any:
    """Explicit fake credentials, so no test reads a developer's AWS setup or reaches AWS."""
    import boto3

    return boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")


def make_model(server: WireServer, session: Any, **options: Any) -> BedrockModel:
    from botocore.config import Config

    return BedrockModel(
        model_id=MODEL_ID, boto_session=session, endpoint_url=server.url,
        boto_client_config=Config(retries={"mode": "standard", "total_max_attempts": 1}), **options,
    )


def run(model: BedrockModel, messages: list[Any] = HISTORY, **kwargs: Any) -> ModelTurn:
    return asyncio.run(collect_turn(model.stream(messages, **kwargs)))


def test_streamed_text_reply(wire_server: WireServer, session: Any) -> None:
    wire_server.replies.append(bedrock_stream_reply(recording("bedrock_converse_stream_text.json")))
    turn = run(make_model(wire_server, session), [{"role": "user", "content": [{"text": "Status?"}]}])
    assert turn.message == {
        "role": "assistant", "content": [{"text": "Your refund of $20 for order A-1042 has been issued."}],
    }
    assert turn.stop_reason == "end_turn"
    assert turn.usage == {"inputTokens": 523, "outputTokens": 18, "totalTokens": 541}
    assert turn.metrics == {"latencyMs": 741}


def test_streamed_tool_uses_and_the_request_bedrock_received(wire_server: WireServer, session: Any) -> None:
    wire_server.replies.append(bedrock_stream_reply(recording("bedrock_converse_stream_tool_use.json")))
    model = make_model(wire_server, session, max_tokens=512, temperature=0.0, additional_request_fields={"k": 1})
    turn = run(model, tool_specs=[SPEC], system_prompt="You handle refunds.")

    assert turn.message["content"] == [
        {"text": "I'll look up the order and the refund policy."},
        {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "lookup_order",
                     "input": {"order_id": "A-1042"}}},
        {"toolUse": {"toolUseId": "tooluse_Vw3Qk1yPRaWm0x5bXc9t2A", "name": "refund_policy",
                     "input": {"region": "EU", "tiers": [1, 2]}}},
    ]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == {"inputTokens": 412, "outputTokens": 71, "totalTokens": 483}

    (request,) = wire_server.received
    assert request.path == f"/model/{MODEL_ID.replace(':', '%3A')}/converse-stream"
    assert request.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=testing/")
    assert request.json() == {
        "messages": [
            HISTORY[0],
            {"role": "assistant", "content": [
                {"text": "Looking it up."},
                {"toolUse": {"toolUseId": "tu1", "name": "lookup_order", "input": {"order_id": "A-1042"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tu1", "content": [{"json": {"total": 20}}], "status": "success"}},
            ]},
        ],
        "system": [{"text": "You handle refunds."}],
        "toolConfig": {"tools": [{"toolSpec": SPEC}], "toolChoice": {"auto": {}}},
        "inferenceConfig": {"maxTokens": 512, "temperature": 0.0},
        "additionalModelRequestFields": {"k": 1},
    }


def test_callbacks_see_the_stream_as_it_is_decoded(wire_server: WireServer, session: Any) -> None:
    wire_server.replies.append(bedrock_stream_reply(recording("bedrock_converse_stream_text.json")))
    pieces: list[str] = []
    model = make_model(wire_server, session)
    asyncio.run(collect_turn(model.stream(HISTORY), lambda kw: pieces.append(kw["data"]) if "data" in kw else None))
    assert pieces == ["Your refund", " of $20 for order A-1042", " has been issued."]


def test_converse_without_streaming_gives_the_same_turn(wire_server: WireServer, session: Any) -> None:
    response = recording("bedrock_converse_tool_use.json")
    wire_server.replies.append(json_reply({"status": 200, "headers": {"Content-Type": "application/json"},
                                                    "body": response}))
    turn = run(make_model(wire_server, session, streaming=False))
    assert wire_server.received[0].path.endswith("/converse")
    assert turn.message == response["output"]["message"]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == response["usage"]
    assert turn.metrics == {"latencyMs": 1532}


def test_throttling_is_reported_after_botocore_retries(wire_server: WireServer, session: Any) -> None:
    wire_server.replies.append(json_reply(recording("bedrock_errors.json")["throttling"]))
    with pytest.raises(ModelThrottledException, match="Too many requests") as raised:
        run(make_model(wire_server, session))
    assert MODEL_ID in str(raised.value)
    assert len(wire_server.received) == 1  # the test allows a single attempt


def test_throttling_mid_stream_is_reported_too(wire_server: WireServer, session: Any) -> None:
    events = recording("bedrock_converse_stream_text.json")[:2]
    wire_server.replies.append(bedrock_stream_reply(events, exception_frame("throttlingException", "Slow down.")))
    seen: list[Any] = []

    async def consume() -> None:
        async for event in make_model(wire_server, session).stream(HISTORY):
            seen.append(event)

    with pytest.raises(ModelThrottledException, match="Slow down"):
        asyncio.run(consume())
    assert len(seen) == 2  # what arrived before the error was delivered


def test_input_too_long_is_a_context_window_overflow(wire_server: WireServer, session: Any) -> None:
    wire_server.replies.append(json_reply(recording("bedrock_errors.json")["context_overflow"]))
    with pytest.raises(ContextWindowOverflowException, match="Input is too long"):
        run(make_model(wire_server, session))


@pytest.mark.parametrize(("streaming", "permission"), [
    (True, "bedrock:InvokeModelWithResponseStream"), (False, "bedrock:InvokeModel "),
])
def test_access_denied_names_model_region_and_permission(
    wire_server: WireServer, session: Any, streaming: bool, permission: str
) -> None:
    wire_server.replies.append(json_reply(recording("bedrock_errors.json")["access_denied"]))
    with pytest.raises(ModelError) as raised:
        run(make_model(wire_server, session, streaming=streaming))
    message = str(raised.value)
    assert MODEL_ID in message
    assert "us-east-1" in message
    assert permission in message
    assert not isinstance(raised.value, ModelThrottledException | ContextWindowOverflowException)


def test_retries_default_to_adaptive_and_a_user_config_wins(session: Any) -> None:
    from botocore.config import Config

    default = BedrockModel(boto_session=session)
    assert default.client.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 4}
    assert default.client.meta.region_name == "us-east-1"
    custom = BedrockModel(boto_session=session, region_name="eu-west-1",
                          boto_client_config=Config(retries={"max_attempts": 9}, read_timeout=7))
    assert custom.client.meta.config.retries["total_max_attempts"] == 10  # replaced, not mixed with ours
    assert custom.client.meta.config.read_timeout == 7
    assert custom.client.meta.region_name == "eu-west-1"


def test_config_updates_are_checked(session: Any) -> None:
    model = BedrockModel(boto_session=session)
    model.update_config(model_id="amazon.nova-pro-v1:0", temperature=0.3)
    assert model.get_config()["model_id"] == "amazon.nova-pro-v1:0"
    assert model.format_request([])["inferenceConfig"] == {"temperature": 0.3}
    with pytest.raises(TypeError, match="temprature"):
        model.update_config(temprature=0.3)


def test_a_client_excludes_the_settings_to_build_one(session: Any) -> None:
    client = session.client("bedrock-runtime")
    assert BedrockModel(client=client).client is client
    with pytest.raises(ValueError, match="either client= or"):
        BedrockModel(client=client, region_name="us-east-1")

