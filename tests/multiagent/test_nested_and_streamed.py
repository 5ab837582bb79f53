"""Orchestrators inside orchestrators, the stream of events, spans, transition snapshots and drawing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, answer, delete, handoff, text_of, uses

from statehitl.errors import NodeCancelledError
from statehitl.hooks import BeforeInvocationEvent
from statehitl.multiagent import GraphBuilder, MultiAgentResult, Status, Swarm


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


def nested_graph() -> Any:
    """A Graph whose second node is a Swarm; a swarm agent's tool asks before deleting, and the graph's
    own hook asks before the last node."""
    triage = agent("triage", handoff("fixer", "fix it"), "passing it on")
    fixer = agent("fixer", uses(("t1", "delete", {"path": "tmp/x"})), "fixed", tools=[delete])
    team = Swarm([triage, fixer], id="team")
    builder = GraphBuilder()
    builder.add_node(agent("intake", "a ticket"), "intake")
    builder.add_node(team, "team")
    builder.add_node(agent("cleanup", "closed the ticket"), "cleanup")
    builder.add_edge("intake", "team")
    builder.add_edge("team", "cleanup")
    builder.set_hook_providers([Approval("cleanup")])
    return builder.build()


def test_an_interrupt_deep_in_a_nested_swarm_is_routed_back_to_the_tool_that_asked() -> None:
    graph = nested_graph()
    result = graph("handle the ticket")
    [deep] = result.interrupts
    assert (deep.name, deep.node, deep.reason) == ("delete-ok", "team/fixer/delete", {"path": "tmp/x"})
    result = graph(answer(result))
    assert RUNS == ["delete tmp/x"]
    [gate] = result.interrupts
    assert (gate.name, gate.node, gate.source) == ("myapp-approval", "cleanup", "multiagent-hook")
    inner = result.results["team"].result
    assert isinstance(inner, MultiAgentResult)
    assert inner.status == Status.COMPLETED
    assert text_of(inner, "fixer") == "fixed"
    result = graph(answer(result))
    assert result.status == Status.COMPLETED
    assert RUNS == ["delete tmp/x"]  # the approved delete ran once, and nothing before it ran again
    assert [n.node_id for n in result.execution_order] == ["intake", "team", "cleanup"]
    assert [r.message["content"][0]["text"] for r in result.results["team"].get_agent_results()] == [
        "passing it on", "fixed"]


def run_before_another(node_id: str, executor: Any, successor: str, task: str) -> Any:
    """Run a graph of ``executor`` (as ``node_id``) followed by an agent ``successor``."""
    builder = GraphBuilder()
    builder.add_node(executor, node_id)
    builder.add_node(agent(successor, "unused"), successor)
    builder.add_edge(node_id, successor)
    return builder.build()(task)


def test_a_nested_swarm_that_ends_failed_fails_the_graph_before_its_successors() -> None:
    looping = agent("looping", handoff("helper"), "handed off")
    team = Swarm([looping, agent("helper", "helped")], id="team", max_handoffs=1)

    result = run_before_another("team", team, "cleanup", "handle the ticket")

    assert result.status == Status.FAILED
    assert result.failure == "node 'team' failed: Max handoffs reached: 1"
    assert result.results["team"].status == Status.FAILED
    assert "cleanup" not in result.results


def test_an_agent_whose_own_hook_cancels_its_call_answers_with_the_hook_text_and_the_graph_goes_on() -> None:
    def not_today(event: BeforeInvocationEvent) -> None:
        event.cancel = "not today"

    stopped = agent("stopped", "unused")
    stopped.add_hook(not_today)

    result = run_before_another("stopped", stopped, "after", "go")

    assert result.status == Status.COMPLETED  # as Strands: the hook's text is the agent's reply (end_turn)
    assert (result.results["stopped"].status, str(result.results["stopped"].result)) == (Status.COMPLETED,
                                                                                          "not today")
    assert [n.node_id for n in result.execution_order] == ["stopped", "after"]
    assert stopped.messages == [{"role": "assistant", "content": [{"text": "not today"}]}]


def test_the_stream_carries_strands_events_in_order() -> None:
    graph = nested_graph()

    async def collect(task: Any) -> list[dict[str, Any]]:
        return [event async for event in graph.stream_async(task)]

    first = asyncio.run(collect("go"))
    kinds = [e.get("type") for e in first]
    assert kinds[0] == "multiagent_node_start"
    assert first[-1]["type"] == "multiagent_result"
    assert first[-1]["result"].status == Status.INTERRUPTED
    assert {"type": "multiagent_handoff", "from_node_ids": ["intake"], "to_node_ids": ["team"]} in first
    interrupt_events = [e for e in first if e.get("type") == "multiagent_node_interrupt"]
    assert [e["node_id"] for e in interrupt_events] == ["team"]
    streamed = [e for e in first if e.get("type") == "multiagent_node_stream" and e["node_id"] == "team"]
    inner_kinds = {e["event"].get("type") for e in streamed}
    assert "multiagent_handoff" in inner_kinds  # the swarm's own handoff, forwarded with its node
    agent_events = [e["event"]["event"] for e in streamed if e["event"].get("type") == "multiagent_node_stream"]
    assert any("data" in ev for ev in agent_events)  # the agents' own text stream, two levels down
    second = asyncio.run(collect(answer(first[-1]["result"])))
    assert [e["node_id"] for e in second if e.get("type") == "multiagent_node_interrupt"] == ["cleanup"]
    stops = [e for e in second if e.get("type") == "multiagent_node_stop"]
    assert [e["node_id"] for e in stops] == ["team"]
    assert stops[0]["node_result"].status == Status.COMPLETED


def test_each_nodes_stream_ends_with_its_result_and_an_agents_handler_sees_its_events() -> None:
    heard: dict[str, list[str]] = {"intake": [], "triage": []}

    def listener(name: str) -> Any:
        return lambda **event: heard[name].append(event["data"]) if "data" in event else None

    intake = agent("intake", "a ticket")
    intake.callback_handler = listener("intake")  # read at each call, as for the agent alone
    triage = agent("triage", "nothing to fix")
    triage.callback_handler = listener("triage")
    builder = GraphBuilder()
    builder.add_node(intake, "intake")
    builder.add_node(Swarm([triage], id="team"), "team")
    builder.add_edge("intake", "team")
    graph = builder.build()

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in graph.stream_async("go")]

    events = asyncio.run(collect())

    assert heard == {"intake": ["a ticket"], "triage": ["nothing to fix"]}
    inner = {n: [e["event"] for e in events if e.get("type") == "multiagent_node_stream" and e["node_id"] == n]
             for n in ("intake", "team")}
    assert inner["intake"][0] == {"init_event_loop": True}
    assert str(inner["intake"][-1]["result"]) == "a ticket"  # the agent's AgentResult, as its own stream ends
    assert inner["team"][-1]["type"] == "multiagent_result"  # the nested swarm's, likewise
    assert inner["team"][-1]["result"].status == Status.COMPLETED
    triage_events = [e["event"] for e in inner["team"] if e.get("type") == "multiagent_node_stream"]
    assert str(triage_events[-1]["result"]) == "nothing to fix"


def test_a_graph_cancel_raises_from_the_stream_too() -> None:
    graph = nested_graph()
    result = graph(answer(graph("go")))

    seen: list[dict[str, Any]] = []

    async def drain_into() -> None:
        async for event in graph.stream_async(answer(result, "n")):
            seen.append(event)

    with pytest.raises(RuntimeError, match="User denied"):
        asyncio.run(drain_into())
    start, cancel, stop = seen  # as Strands announces a cancelled Graph node
    assert start == {"type": "multiagent_node_start", "node_id": "cleanup", "node_type": "agent"}
    assert cancel == {"type": "multiagent_node_cancel", "node_id": "cleanup",
                      "message": "User denied permission to cleanup resources"}
    assert (stop["type"], stop["node_id"], stop["node_result"].status) == ("multiagent_node_stop", "cleanup",
                                                                           Status.FAILED)
    assert isinstance(stop["node_result"].result, NodeCancelledError)


def test_spans_nest_node_and_agent_spans_and_record_interrupts(spans: Any) -> None:
    graph = nested_graph()
    graph("go")
    finished = list(spans.get_finished_spans())
    names = [s.name for s in finished]
    [root] = [s for s in finished if s.name == "invoke_graph default_graph"]
    [team_node] = [s for s in finished if s.name == "execute_node team"]
    assert team_node.parent is not None
    assert team_node.parent.span_id == root.context.span_id
    [swarm_span] = [s for s in finished if s.name == "invoke_swarm team"]
    assert swarm_span.parent is not None
    assert swarm_span.parent.span_id == team_node.context.span_id
    [fixer_node] = [s for s in finished if s.name == "execute_node fixer"]
    [fixer_agent] = [s for s in finished if s.name == "invoke_agent fixer"]
    assert fixer_agent.parent is not None
    assert fixer_agent.parent.span_id == fixer_node.context.span_id
    assert [e.name for e in root.events] == ["interrupt"]
    assert "checkpoint.commit" in names


def test_transitions_of_an_orchestration_are_snapshot_stable(transition_recorder: Any, snapshot: Any) -> None:
    graph = nested_graph()
    result = graph("go")
    result = graph(answer(result))
    graph(answer(result))
    assert transition_recorder.log == snapshot


def test_graphs_and_swarms_draw_as_machines() -> None:
    drawn = nested_graph().draw_mermaid()
    assert 'n0["intake"]' in drawn
    assert "n0 --> n1" in drawn
    swarm = Swarm([agent("a", "x"), agent("b", "y")])
    assert swarm.machine.draw_mermaid().count("-.->") >= 4


def test_a_nested_orchestration_is_freed_when_dropped_without_the_cycle_collector() -> None:
    """No reference cycle (the machine's node handlers hold their orchestrator weakly): a server that
    builds a Graph per request frees it, its Swarm and every agent as soon as it drops them, instead
    of leaving them to the cycle collector, whose passes cost a Graph chain about a tenth of its time."""
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        graph = nested_graph()
        result = graph("handle the ticket")
        assert result.status == Status.INTERRUPTED
        team = graph.nodes["team"].executor
        dropped = [weakref.ref(graph), weakref.ref(team), weakref.ref(graph.machine),
                   *(weakref.ref(node.executor) for node in (*graph.nodes.values(), *team.nodes.values()))]
        del graph, team, result
        assert [ref() for ref in dropped] == [None] * len(dropped)
    finally:
        gc.enable()
