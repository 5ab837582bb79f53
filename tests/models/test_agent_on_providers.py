"""The agent on real provider adapters: a tool interrupt and its resume, over recorded wire responses.

The model tests prove each adapter parses its provider's stream; these prove the agent loop drives
them: tool specs go out, tool uses come back, results (after a human's answer) go out again.
"""

from __future__ import annotations

from typing import Any

import pytest
from model_wire import RECORDINGS, Reply, WireServer, bedrock_stream_reply, recording

from statehitl import Agent, tool
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import AnthropicModel, BedrockModel, OpenAIModel
from statehitl.session import FileSessionManager

pytest.importorskip("boto3")


def approve_refunds(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] in ("refund", "refund_policy") and event.interrupt("refund-approval") != "y":
        event.cancel_tool = "refund denied"


def make_tools(ran: list[str]) -> list[Any]:
    @tool
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look up an order."""
        ran.append(f"lookup {order_id}")
        return {"order_id": order_id, "total": 20}

    @tool
    def refund(order_id: str, amount: int) -> str:
        """Refund an order."""
        ran.append(f"refund {order_id} {amount}")
        return "refunded"

    @tool
    def refund_policy(region: str, tiers: list[int]) -> str:
        """The refund policy of a region."""
        ran.append(f"policy {region} {tiers}")
        return "30 days"

    return [lookup_order, refund, refund_policy]


def sse(name: str) -> Reply:
    return Reply(200, {"Content-Type": "text/event-stream"}, (RECORDINGS / name).read_bytes())


def test_an_openai_compatible_model_drives_an_interrupted_tool_batch(wire_server: WireServer) -> None:
    wire_server.replies += [sse("openai_tool_calls.sse"), sse("openai_text.sse")]
    ran: list[str] = []
    agent = Agent(model=OpenAIModel(model_id="llama3.1:8b", base_url=f"{wire_server.url}/v1"),
                  tools=make_tools(ran), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_refunds)
    result = agent("Refund order A-1042")
    assert result.stop_reason == "interrupt"
    assert ran == ["lookup A-1042"]
    assert [t["function"]["name"] for t in wire_server.received[0].json()["tools"]] == [
        "lookup_order", "refund", "refund_policy"]
    result = agent([{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in result.interrupts])
    assert result.stop_reason == "end_turn"
    assert ran == ["lookup A-1042", "refund A-1042 20"]
    second = wire_server.received[1].json()["messages"]
    tool_messages = [m for m in second if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_7hB2qX9d", "call_Qm4Lz0Ps"]
    assert "refunded" in tool_messages[1]["content"]
    assert len(wire_server.received) == 2  # no model call before the approved tool ran


def test_bedrock_drives_an_interrupted_tool_batch(wire_server: WireServer) -> None:
    import boto3
    from botocore.config import Config

    wire_server.replies += [bedrock_stream_reply(recording("bedrock_converse_stream_tool_use.json")),
                            bedrock_stream_reply(recording("bedrock_converse_stream_text.json"))]
    ran: list[str] = []
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    model = BedrockModel(model_id="us.anthropic.claude-sonnet-4-20250514-v1:0", boto_session=session,
                         endpoint_url=wire_server.url,
                         boto_client_config=Config(retries={"mode": "standard", "total_max_attempts": 1}))
    agent = Agent(model=model, tools=make_tools(ran), system_prompt="You handle refunds.", callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_refunds)
    result = agent("Refund order A-1042")
    assert result.stop_reason == "interrupt"
    assert ran == ["lookup A-1042"]
    first = wire_server.received[0].json()
    assert first["system"] == [{"text": "You handle refunds."}]
    assert [t["toolSpec"]["name"] for t in first["toolConfig"]["tools"]] == ["lookup_order", "refund", "refund_policy"]
    result = agent([{"interruptResponse": {"interruptId": i.id, "response": "n"}} for i in result.interrupts])
    assert result.stop_reason == "end_turn"
    assert ran == ["lookup A-1042"]
    results = [b["toolResult"] for b in wire_server.received[1].json()["messages"][-1]["content"]]
    assert [(r["toolUseId"], r["status"]) for r in results] == [
        ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "success"), ("tooluse_Vw3Qk1yPRaWm0x5bXc9t2A", "error")]
    assert results[1]["content"] == [{"text": "refund denied"}]


def test_anthropic_drives_an_interrupted_tool_batch_resumed_by_a_new_agent(wire_server: WireServer,
                                                                            tmp_path: Any) -> None:
    """The signed thinking block, the tool uses and their results go through the session's store and back
    to Anthropic in its own block types, from an agent built anew on the session (a new process would)."""
    wire_server.replies += [sse("anthropic_tool_use.sse"), sse("anthropic_text.sse")]
    ran: list[str] = []

    def server() -> Agent:
        model = AnthropicModel(client_args={"api_key": "sk-ant-test", "base_url": wire_server.url},
                               model_id="claude-sonnet-4-5", max_tokens=2048)
        agent = Agent(model=model, tools=make_tools(ran), system_prompt="You handle refunds.", callback_handler=None,
                      session_manager=FileSessionManager(session_id="refunds", storage_dir=tmp_path))
        agent.add_hook(BeforeToolCallEvent, approve_refunds)
        return agent

    result = server()("Refund order A-1042")
    assert result.stop_reason == "interrupt"
    assert ran == ["lookup A-1042"]
    result = server()([{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in result.interrupts])
    assert result.stop_reason == "end_turn"
    assert ran == ["lookup A-1042", "refund A-1042 20"]
    assert len(wire_server.received) == 2  # no model call before the approved tool ran
    turn, results = wire_server.received[1].json()["messages"][1:]
    assert [block["type"] for block in turn["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert turn["content"][0]["signature"].startswith("EqQBCgIYAhIM")
    assert [(r["tool_use_id"], r["is_error"]) for r in results["content"]] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", False), ("toolu_01Vw3Qk1yPRaWm0x5bXc9t2A", False)]
