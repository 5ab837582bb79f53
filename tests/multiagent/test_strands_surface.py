"""The rest of Strands' Graph and Swarm surface: ``trace_attributes=``, ``serialize_state`` /
``deserialize_state``, ``reset_executor_state()`` and ``Graph(...)`` called as Strands' builder calls it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, answer, delete, uses

from statehitl.models import ScriptedModel
from statehitl.multiagent import Graph, GraphBuilder, GraphEdge, GraphNode, Status, Swarm
from statehitl.session import FileSessionManager


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


def test_trace_attributes_go_on_the_orchestrations_span(spans: Any) -> None:
    attributes = {"tenant": "acme", "tries": 2, "tags": ["a", "b"], "dropped": {"not": "a span value"}}
    builder = GraphBuilder()
    builder.add_node(agent("a", "x"), "a")
    builder.set_entry_point("a")
    graph = Graph(builder.nodes, builder.edges, builder.entry_points, trace_attributes=attributes)
    swarm = Swarm([agent("solo", "y")], id="team", trace_attributes=attributes)
    assert graph.trace_attributes == swarm.trace_attributes == {"tenant": "acme", "tries": 2, "tags": ["a", "b"]}
    graph("go")
    swarm("go")
    finished = {s.name: s for s in spans.get_finished_spans()}
    for name in ("invoke_graph default_graph", "invoke_swarm team"):
        span_attributes = dict(finished[name].attributes or {})
        assert (span_attributes["tenant"], span_attributes["tries"], list(span_attributes["tags"])) == (
            "acme", 2, ["a", "b"])
        assert "dropped" not in span_attributes


def test_graph_takes_strands_positional_arguments_and_sets_of_edges_and_entry_points() -> None:
    nodes = {name: GraphNode(name, agent(name, f"{name} done")) for name in ("a", "b", "c")}
    edges = {GraphEdge(nodes["a"], nodes["b"]), GraphEdge(nodes["b"], nodes["c"])}  # Strands' builder: sets
    nodes["b"].dependencies.add(nodes["a"])
    nodes["c"].dependencies.add(nodes["b"])
    graph = Graph(nodes, edges, {nodes["a"]}, 5, 60.0, 30.0, True, None, None, "positional")
    assert (graph.max_node_executions, graph.execution_timeout, graph.node_timeout, graph.reset_on_revisit,
            graph.id) == (5, 60.0, 30.0, True, "positional")
    assert [(e.from_node.node_id, e.to_node.node_id) for e in graph.edges] == [("a", "b"), ("b", "c")]
    result = graph("go")
    assert [n.node_id for n in result.execution_order] == ["a", "b", "c"]


def test_serialize_state_gives_strands_shape_from_the_thread(tmp_path: Path) -> None:
    def build() -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("inspect", "found 3"), "inspect")
        builder.add_node(agent("cleanup", "cleaned"), "cleanup")
        builder.add_edge("inspect", "cleanup")
        builder.set_hook_providers([Approval("cleanup")])
        builder.set_session_manager(FileSessionManager("s", storage_dir=str(tmp_path)))
        return builder.build()

    graph = build()
    waiting = graph("inspect and clean")
    saved = graph.serialize_state()
    assert json.loads(json.dumps(saved)) == saved
    assert {k: saved[k] for k in ("type", "id", "status", "completed_nodes", "failed_nodes", "interrupted_nodes",
                                  "next_nodes_to_execute", "current_task", "execution_order")} == {
        "type": "graph", "id": "default_graph", "status": "interrupted", "completed_nodes": ["inspect"],
        "failed_nodes": [], "interrupted_nodes": ["cleanup"], "next_nodes_to_execute": ["cleanup"],
        "current_task": "inspect and clean", "execution_order": ["inspect"]}
    assert list(saved["node_results"]) == ["inspect"]

    again = build()
    again.deserialize_state(saved)  # the thread's very state: shown again
    assert again.state.status == Status.INTERRUPTED
    again(answer(waiting))
    with pytest.raises(ValueError, match="the thread is the source of truth"):
        again.deserialize_state(saved)  # an older state cannot replace the thread's
    with pytest.raises(ValueError, match="not of this graph"):
        again.deserialize_state({**saved, "id": "another"})
    done = again.serialize_state()
    assert (done["status"], done["next_nodes_to_execute"]) == ("completed", [])


def test_swarm_serialize_state_has_its_history_and_context() -> None:
    swarm = Swarm([agent("solo", "done")])
    swarm.shared_context.add_context("solo", "k", "v")
    swarm("go")
    saved = swarm.serialize_state()
    assert {k: saved[k] for k in ("type", "status", "node_history", "context")} == {
        "type": "swarm", "status": "completed", "node_history": ["solo"],
        "context": {"shared_context": {"solo": {"k": "v"}}, "handoff_node": None, "handoff_message": None}}


def test_reset_executor_state_starts_a_graph_node_afresh_through_its_thread(tmp_path: Path) -> None:
    def build(*replies: str) -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("writer", *replies), "writer")
        builder.set_session_manager(FileSessionManager("s", storage_dir=str(tmp_path)))
        return builder.build()

    graph = build("one", "two")
    graph("first")
    node = graph.nodes["writer"]
    assert len(node.executor.messages) == 2
    node.reset_executor_state()
    assert (node.executor.messages, node.execution_status, node.result) == ([], Status.PENDING, None)
    assert len(build().nodes["writer"].executor.messages) == 2  # the thread is unchanged until the node runs
    graph("second")
    [request] = node.executor.model.requests[1:]
    assert [m["content"][0]["text"] for m in request["messages"]] == ["second"]  # it started afresh
    assert [m["content"][0]["text"] for m in build().nodes["writer"].executor.messages] == ["second", "two"]


def test_reset_executor_state_shows_a_swarm_agent_as_it_was_built() -> None:
    solo = agent("solo", "done")
    swarm = Swarm([solo])
    swarm("go")
    assert solo.messages
    swarm.nodes["solo"].reset_executor_state()
    assert solo.messages == []
    solo.model = ScriptedModel(["again"])
    assert str(swarm("go").results["solo"].result) == "again"


def test_a_node_started_afresh_that_stops_on_an_interrupt_goes_on_afresh_in_another_process(tmp_path: Path) -> None:
    def build(*replies: Any) -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("cleaner", *replies, tools=[delete]), "cleaner")
        builder.set_session_manager(FileSessionManager("s", storage_dir=str(tmp_path)))
        return builder.build()

    graph = build("nothing to do")
    graph("look around")
    graph.nodes["cleaner"].reset_executor_state()
    graph.nodes["cleaner"].executor.model = ScriptedModel([uses(("t1", "delete", {"path": "x"}))])
    waiting = graph("clean x")
    assert waiting.status == Status.INTERRUPTED

    again = build("deleted x")  # another process: it does not know the node was reset, the thread does
    assert again(answer(waiting)).status == Status.COMPLETED
    texts = [b.get("text") or next(iter(b)) for m in again.nodes["cleaner"].executor.messages for b in m["content"]]
    assert texts == ["clean x", "toolUse", "toolResult", "deleted x"]  # nothing of the conversation before
    assert RUNS == ["delete x"]


def test_status_prints_as_strands_enum_and_still_equals_its_word() -> None:
    """Strands' ``Status`` is a plain Enum (1.62: ``str``, f-strings and ``format`` read ``Status.INTERRUPTED``,
    ``repr`` ``<Status.INTERRUPTED: 'interrupted'>``; it has DISPATCHED). statehitl's prints the same, and
    stays equal to its value, as code written against statehitl's earlier str status compares it."""
    status = Status.INTERRUPTED
    assert str(status) == f"{status}" == format(status) == "Status.INTERRUPTED"
    assert f"{status:>20}" == "  Status.INTERRUPTED"
    assert repr(status) == "<Status.INTERRUPTED: 'interrupted'>"
    assert status == "interrupted"
    assert status.value == "interrupted"
    assert json.dumps({"status": status}) == '{"status": "interrupted"}'
    assert Status("dispatched") is Status.DISPATCHED
    assert [s.name for s in Status] == ["PENDING", "DISPATCHED", "EXECUTING", "COMPLETED", "FAILED", "INTERRUPTED"]
    builder = GraphBuilder()
    builder.add_node(agent("a", "done"), "a")
    assert f"{builder.build()('go').status}" == "Status.COMPLETED"
