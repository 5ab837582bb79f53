"""Swarm: handoffs, shared context, limits, the seed's interrupt rules, failures and bad input."""

from __future__ import annotations

from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, answer, delete, handoff, text_of, uses

from statehitl.errors import GraphValidationError, ResumeInputError
from statehitl.hooks import AfterMultiAgentInvocationEvent, BeforeNodeCallEvent, HookRegistry
from statehitl.multiagent import Status, Swarm, SwarmNode, SwarmResult


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


def test_the_seed_swarm_asks_before_cleanup() -> None:
    swarm = Swarm([agent("cleanup", "cleaned up")], hooks=[Approval()])
    result = swarm("Clean up my resources")
    assert result.status == Status.INTERRUPTED
    assert [(i.name, i.source) for i in result.interrupts] == [("myapp-approval", "multiagent-hook")]
    result = swarm(answer(result))
    assert isinstance(result, SwarmResult)
    assert result.status == Status.COMPLETED
    assert result.results["cleanup"].result.message == {"role": "assistant", "content": [{"text": "cleaned up"}]}


def test_a_denied_node_ends_the_swarm_failed_without_raising_and_it_takes_a_new_task() -> None:
    swarm = Swarm([agent("cleanup", "cleaned up")], hooks=[Approval()])
    result = swarm(answer(swarm("go"), "n"))
    assert result.status == Status.FAILED
    assert result.failure == "User denied permission to cleanup resources"
    assert result.results == {}
    assert swarm("again").status == Status.INTERRUPTED


def test_agents_hand_off_share_context_and_the_swarm_ends_when_one_does_not() -> None:
    researcher = agent("researcher", handoff("writer", "write it up", {"facts": 3}), "unused")
    writer = agent("writer", "the report")
    swarm = Swarm([researcher, writer])
    result = swarm("research and write")
    assert result.status == Status.COMPLETED
    assert [n.node_id for n in result.node_history] == ["researcher", "writer"]
    assert isinstance(result.node_history[0], SwarmNode)
    assert text_of(result, "writer") == "the report"
    assert swarm.shared_context.context == {"researcher": {"facts": 3}}
    [request] = writer.model.requests
    prompt = request["messages"][0]["content"][0]["text"]
    assert prompt.startswith("Context:\nHandoff Message: write it up\n\nUser Request: research and write\n\n")
    assert "Previous agents who worked on this: researcher" in prompt
    assert "• researcher: {'facts': 3}" in prompt
    assert "Agent name: researcher." in prompt
    assert "handoff_to_agent" in [t["name"] for t in request["tool_specs"]]


def test_a_handoff_to_an_unknown_agent_is_an_error_the_agent_reads() -> None:
    lost = agent("lost", handoff("nobody"), "I will answer myself")
    result = Swarm([lost, agent("other", "x")])("go")
    assert result.status == Status.COMPLETED
    assert text_of(result, "lost") == "I will answer myself"
    results = [b["toolResult"] for m in lost.messages for b in m["content"] if "toolResult" in b]
    assert results[0]["status"] == "error"
    assert "Agent 'nobody' not found in swarm" in results[0]["content"][0]["text"]


def test_limits_end_the_swarm_failed() -> None:
    ping = agent("ping", *[handoff("pong"), "passed"] * 5)  # after its handoff, an agent ends its turn
    pong = agent("pong", *[handoff("ping"), "passed"] * 5)
    result = Swarm([ping, pong], max_handoffs=3)("go")
    assert result.status == Status.FAILED
    assert result.failure == "Max handoffs reached: 3"
    assert [n.node_id for n in result.node_history] == ["ping", "pong", "ping"]
    ping2 = agent("ping", *[handoff("pong"), "passed"] * 5)
    pong2 = agent("pong", *[handoff("ping"), "passed"] * 5)
    result = Swarm([ping2, pong2], repetitive_handoff_detection_window=2, repetitive_handoff_min_unique_agents=3)("go")
    assert result.failure == "Repetitive handoff: 2 unique nodes out of 2 recent iterations"


def test_a_tool_interrupt_inside_an_agent_keeps_its_earlier_handoff() -> None:
    worker = agent("worker", uses(("h1", "handoff_to_agent", {"agent_name": "closer", "message": "close"}),
                                  ("t1", "delete", {"path": "x"})), "handed off", tools=[delete])
    closer = agent("closer", "closed")
    swarm = Swarm([worker, closer])
    result = swarm("go")
    assert [(i.name, i.node) for i in result.interrupts] == [("delete-ok", "worker/delete")]
    result = swarm(answer(result))
    assert RUNS == ["delete x"]
    assert [n.node_id for n in result.node_history] == ["worker", "closer"]
    assert text_of(result, "closer") == "closed"


def test_a_failing_agent_ends_the_swarm_failed() -> None:
    broken = agent("broken")  # no scripted reply: its model fails
    result = Swarm([broken])("go")
    assert result.status == Status.FAILED
    assert result.failure is not None
    assert result.failure.startswith("node 'broken' failed:")
    assert result.results["broken"].status == Status.FAILED


def test_every_hook_runs_and_each_may_interrupt() -> None:
    hooks = HookRegistry()
    hooks.add_callback(BeforeNodeCallEvent, lambda e: e.interrupt("a"))
    hooks.add_callback(BeforeNodeCallEvent, lambda e: e.interrupt("b"))
    swarm = Swarm([agent("only", "done")], hooks=[hooks])
    result = swarm("go")
    assert sorted(i.name for i in result.interrupts) == ["a", "b"]
    assert swarm(answer(result)).status == Status.COMPLETED


def test_bad_construction_and_input() -> None:
    with pytest.raises(GraphValidationError, match="two agents are named 'x'"):
        Swarm([agent("x", "a"), agent("x", "b")])
    twice = agent("w", "a")
    Swarm([twice])
    with pytest.raises(GraphValidationError, match="already has a tool named 'handoff_to_agent'"):
        Swarm([twice])
    with pytest.raises(GraphValidationError, match="entry point is not one of the swarm's agents"):
        Swarm([agent("a", "x")], entry_point=agent("b", "y"))
    swarm = Swarm([agent("cleanup", "x")], hooks=[Approval()])
    swarm("go")
    with pytest.raises(ResumeInputError, match="waiting on interrupts"):
        swarm("another prompt")


def test_entry_point_picks_who_starts(tmp_path: Any) -> None:
    first, second = agent("first", "a"), agent("second", "b")
    result = Swarm([first, second], entry_point=second)("go")
    assert [n.node_id for n in result.node_history] == ["second"]


def test_an_image_in_the_task_reaches_each_agent_as_bytes() -> None:
    image = b"\x89PNG\r\n\x1a\n-not-really"
    first, second = agent("first", handoff("second"), "handed"), agent("second", "it is a cat")
    task = [{"text": "what is this?"}, {"image": {"format": "png", "source": {"bytes": image}}}]
    result = Swarm([first, second])(task)

    assert result.status == Status.COMPLETED
    for one in (first, second):
        [request, *_] = one.model.requests
        assert request["messages"][0]["content"][-1]["image"]["source"]["bytes"] == image


def test_swarm_state_shows_the_running_call_to_hooks_and_the_last_one_after_it() -> None:
    seen: list[tuple[Any, ...]] = []

    def look(event: BeforeNodeCallEvent) -> None:  # hooks read the orchestrator, as in Strands
        state = event.source.state
        seen.append((event.node_id, state.current_node.node_id, state.completion_status,
                     [n.node_id for n in state.node_history], dict(state.shared_context.context),
                     state.handoff_message))

    researcher = agent("researcher", handoff("writer", "write it up", {"facts": 3}), "unused")
    swarm = Swarm([researcher, agent("writer", "the report")])
    assert swarm.state.completion_status == Status.PENDING
    swarm.add_hook(look, BeforeNodeCallEvent)
    swarm("research and write")

    assert seen == [
        ("researcher", "researcher", Status.EXECUTING, [], {}, None),
        ("writer", "writer", Status.EXECUTING, ["researcher"], {"researcher": {"facts": 3}}, "write it up"),
    ]
    after = swarm.state
    assert (after.completion_status, after.current_node.node_id, after.task) == (
        Status.COMPLETED, "writer", "research and write")
    assert str(after.results["writer"].result) == "the report"
    assert after.accumulated_usage["totalTokens"] > 0


def test_after_invocation_hooks_see_how_the_call_ended() -> None:
    seen: list[Status] = []

    def after(event: AfterMultiAgentInvocationEvent) -> None:
        seen.append(event.source.state.completion_status)

    ok = Swarm([agent("ok", "done")])
    ok.add_hook(after, AfterMultiAgentInvocationEvent)
    ok("go")
    limited = Swarm([agent("ping", handoff("pong"), "x"), agent("pong", "y")], max_handoffs=1)
    limited.add_hook(after, AfterMultiAgentInvocationEvent)
    limited("go")

    assert seen == [Status.COMPLETED, Status.FAILED]
