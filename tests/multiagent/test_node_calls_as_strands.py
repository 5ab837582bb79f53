"""A node call as Strands' orchestrators make it: what AfterNodeCallEvent hooks read, limits checked before
any hook is asked, cancelled, failed and interrupted nodes (their events, results and history)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, answer, delete, handoff, uses

from statehitl.errors import NodeCancelledError
from statehitl.hooks import AfterNodeCallEvent, BeforeNodeCallEvent
from statehitl.models.errors import ModelError
from statehitl.multiagent import GraphBuilder, Status, Swarm


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


def chain(*names: str, hooks: list[Any] | None = None, limit: int | None = None) -> Any:
    builder = GraphBuilder()
    for name in names:
        builder.add_node(agent(name, f"{name} done"), name)
    for first, then in itertools.pairwise(names):
        builder.add_edge(first, then)
    builder.set_hook_providers(hooks or [])
    if limit is not None:
        builder.set_max_node_executions(limit)
    return builder.build()


# -- item 1: AfterNodeCallEvent hooks see the node's result in .state --------------------------------


def test_after_node_call_hooks_read_the_graph_nodes_result_from_its_state() -> None:
    seen: list[tuple[Any, ...]] = []

    def after(event: AfterNodeCallEvent) -> None:  # Strands' docs: the node's result is in the state by now
        state = event.source.state
        seen.append((event.node_id, str(state.results[event.node_id].result),
                     sorted(n.node_id for n in state.completed_nodes), [n.node_id for n in state.execution_order]))

    graph = chain("a", "b")
    graph.add_hook(after, AfterNodeCallEvent)
    assert graph("go").status == Status.COMPLETED
    assert seen == [("a", "a done", ["a"], ["a"]), ("b", "b done", ["a", "b"], ["a", "b"])]


def test_concurrent_graph_nodes_each_see_their_own_result_and_a_failed_one_its_failure() -> None:
    seen: dict[str, tuple[Status, str]] = {}

    def after(event: AfterNodeCallEvent) -> None:
        result = event.source.state.results[event.node_id]
        seen[event.node_id] = (result.status, type(result.result).__name__)

    builder = GraphBuilder()
    builder.add_node(agent("left", "l"), "left")
    builder.add_node(agent("right"), "right")  # no reply scripted: its model raises
    graph = builder.build()
    graph.add_hook(after, AfterNodeCallEvent)
    with pytest.raises(ModelError):
        graph("go")
    assert seen == {"left": (Status.COMPLETED, "AgentResult"), "right": (Status.FAILED, "ModelError")}
    assert graph.nodes["right"].execution_status == Status.FAILED
    assert graph.state.status == Status.FAILED
    assert [n.node_id for n in graph.state.failed_nodes] == ["right"]


def test_after_node_call_hooks_read_the_swarm_agents_result_and_where_it_handed_off() -> None:
    seen: list[tuple[Any, ...]] = []

    def after(event: AfterNodeCallEvent) -> None:
        state = event.source.state
        seen.append((event.node_id, str(state.results[event.node_id].result), state.current_node.node_id,
                     None if state.handoff_node is None else state.handoff_node.node_id,
                     [n.node_id for n in state.node_history]))

    swarm = Swarm([agent("researcher", handoff("writer", "write it"), "handed"), agent("writer", "the report")])
    swarm.add_hook(after, AfterNodeCallEvent)
    assert swarm("go").status == Status.COMPLETED
    assert seen == [("researcher", "handed", "researcher", "writer", ["researcher"]),
                    ("writer", "the report", "writer", None, ["researcher", "writer"])]
    assert swarm.state.current_node.node_id == "writer"


# -- item 2: limits before hooks -----------------------------------------------------------------------


def test_a_graph_limit_refuses_the_next_node_before_any_hook_asks_a_human() -> None:
    approval = Approval("cleanup")
    asked: list[str] = []
    graph = chain("inspect", "cleanup", hooks=[approval], limit=1)
    graph.add_hook(lambda event: asked.append(event.node_id), BeforeNodeCallEvent)
    result = graph("go")
    assert result.status == Status.FAILED
    assert result.failure == "Max node executions reached: 1"
    assert result.interrupts == []
    assert asked == ["inspect"]
    assert [n.node_id for n in result.execution_order] == ["inspect"]


def test_a_swarm_limit_refuses_the_next_agent_before_any_hook_asks_a_human() -> None:
    asked: list[str] = []
    swarm = Swarm([agent("inspect", handoff("cleanup"), "handed"), agent("cleanup", "cleaned")], max_handoffs=1,
                  hooks=[Approval("cleanup")])
    swarm.add_hook(lambda event: asked.append(event.node_id), BeforeNodeCallEvent)
    result = swarm("go")
    assert (result.status, result.failure, result.interrupts) == (Status.FAILED, "Max handoffs reached: 1", [])
    assert asked == ["inspect"]
    assert swarm.state.completion_status == Status.FAILED


# -- item 5: cancelled, failed and interrupted nodes -------------------------------------------------


def stream(orchestrator: Any, task: Any) -> list[dict[str, Any]]:
    async def drain() -> list[dict[str, Any]]:
        return [event async for event in orchestrator.stream_async(task)]

    return asyncio.run(drain())


def test_a_cancelled_swarm_agent_gets_its_after_node_call_event_and_no_result() -> None:
    after: list[str] = []
    swarm = Swarm([agent("cleanup", "cleaned")], hooks=[Approval("cleanup")])
    swarm.add_hook(lambda event: after.append(event.node_id), AfterNodeCallEvent)
    events = stream(swarm, answer(swarm("go"), "n"))
    result = events[-1]["result"]
    assert after == ["cleanup"]  # as Strands fires it for a cancelled node
    assert [e["type"] for e in events] == ["multiagent_node_cancel", "multiagent_result"]
    assert (result.status, result.results, result.node_history) == (Status.FAILED, {}, [])


def test_a_cancelled_graph_node_is_started_cancelled_and_stopped_failed_as_strands_announces_it() -> None:
    after: list[tuple[str, Status]] = []
    graph = chain("inspect", "cleanup", hooks=[Approval("cleanup")])
    graph.add_hook(lambda e: after.append((e.node_id, e.source.state.results[e.node_id].status)), AfterNodeCallEvent)
    waiting = graph("go")
    events: list[dict[str, Any]] = []

    async def drain() -> None:
        async for event in graph.stream_async(answer(waiting, "n")):
            events.append(event)

    with pytest.raises(NodeCancelledError, match="User denied"):
        asyncio.run(drain())
    assert [e["type"] for e in events] == ["multiagent_node_start", "multiagent_node_cancel", "multiagent_node_stop"]
    assert after == [("inspect", Status.COMPLETED), ("cleanup", Status.FAILED)]
    cleanup = graph.nodes["cleanup"]
    assert cleanup.execution_status == Status.FAILED
    assert isinstance(cleanup.result.result, NodeCancelledError)
    assert graph.state.status == Status.FAILED
    assert [n.node_id for n in graph.state.failed_nodes] == ["cleanup"]


def test_a_failed_swarm_agent_has_its_result_but_no_turn_in_the_history() -> None:
    result = Swarm([agent("inspect", handoff("broken"), "handed"), agent("broken")])("go")
    assert result.status == Status.FAILED
    assert [n.node_id for n in result.node_history] == ["inspect"]  # as in Strands: only turns that ended
    assert result.execution_count == 1
    assert result.results["broken"].status == Status.FAILED
    assert isinstance(result.results["broken"].result, ModelError)


def test_a_before_node_call_hook_that_raises_ends_the_swarm_failed() -> None:
    def broken(event: BeforeNodeCallEvent) -> None:
        if event.node_id == "writer":
            raise ValueError("the approval service is down")

    after: list[str] = []
    swarm = Swarm([agent("researcher", handoff("writer"), "handed"), agent("writer", "unused")])
    swarm.add_hook(broken, BeforeNodeCallEvent)
    swarm.add_hook(lambda event: after.append(event.node_id), AfterNodeCallEvent)
    result = swarm("go")  # does not raise, as in Strands
    assert result.status == Status.FAILED
    assert result.failure == ("a BeforeNodeCallEvent hook failed before node 'writer': ValueError: the approval "
                              "service is down")
    assert "writer" not in result.results
    assert after == ["researcher"]
    assert swarm("again").status == Status.FAILED  # it takes a new task: the hook fails it again


def test_a_before_node_call_hook_that_raises_fails_a_graph_with_its_error() -> None:
    def broken(event: BeforeNodeCallEvent) -> None:
        raise ValueError("down")

    graph = chain("a")
    graph.add_hook(broken, BeforeNodeCallEvent)
    with pytest.raises(ValueError, match="down"):  # as in Strands: a Graph raises what its node's call raised
        graph("go")


def test_an_interrupted_swarm_agent_has_its_interrupted_result_and_a_stop_event() -> None:
    worker = agent("worker", uses(("t1", "delete", {"path": "x"})), "done", tools=[delete])
    swarm = Swarm([worker])
    events = stream(swarm, "go")
    types = [e["type"] for e in events if e["type"] != "multiagent_node_stream"]
    assert types == ["multiagent_node_start", "multiagent_node_stop", "multiagent_node_interrupt", "multiagent_result"]
    [stop] = [e for e in events if e["type"] == "multiagent_node_stop"]
    result = events[-1]["result"]
    stopped = result.results["worker"]
    assert stop["node_result"].status == stopped.status == Status.INTERRUPTED
    assert stopped.result.stop_reason == "interrupt"
    assert [i.name for i in stopped.interrupts] == ["delete-ok"]
    assert swarm.state.results["worker"].status == Status.INTERRUPTED
    assert result.node_history == []

    done = swarm(answer(result))
    assert (done.status, done.results["worker"].status, RUNS) == (Status.COMPLETED, Status.COMPLETED, ["delete x"])
