"""Orchestrator hooks, invocation state, drawing from the CLI, and bad input on a file session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ma_helpers import Approval, agent, answer

from statehitl.cli import main
from statehitl.errors import MachineChangedError, ResumeInputError, UnknownInterruptError
from statehitl.hooks import (
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    BeforeMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    HookProvider,
    HookRegistry,
    MultiAgentInitializedEvent,
)
from statehitl.models.errors import ModelError
from statehitl.multiagent import GraphBuilder, Status, Swarm
from statehitl.session import FileSessionManager


class Recorder(HookProvider):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(MultiAgentInitializedEvent, lambda e: self.seen.append("init"))
        registry.add_callback(BeforeMultiAgentInvocationEvent,
                              lambda e: self.seen.append(f"before {e.invocation_state.get('user')}"))
        registry.add_callback(BeforeNodeCallEvent, lambda e: self.seen.append(f"node {e.node_id}"))
        registry.add_callback(AfterNodeCallEvent, lambda e: self.seen.append(f"after {e.node_id}"))
        registry.add_callback(AfterMultiAgentInvocationEvent, lambda e: self.seen.append("after call"))


def test_orchestrator_hooks_fire_in_order_with_the_invocation_state() -> None:
    recorder = Recorder()
    swarm = Swarm([agent("solo", "done")], hooks=[recorder])
    assert recorder.seen == ["init"]
    assert swarm("go", invocation_state={"user": "ada"}).status == Status.COMPLETED
    assert recorder.seen == ["init", "before ada", "node solo", "after solo", "after call"]


def test_add_hook_takes_strands_order_and_conditions_may_read_the_invocation_state() -> None:
    builder = GraphBuilder()
    builder.add_node(agent("a", "x"), "a")
    builder.add_node(agent("b", "y"), "b")
    builder.add_edge("a", "b", condition=lambda state, invocation_state: invocation_state.get("go_on", False))
    graph = builder.build()
    seen: list[str] = []
    graph.add_hook(lambda event: seen.append(event.node_id), BeforeNodeCallEvent)
    assert [n.node_id for n in graph("t").execution_order] == ["a"]
    builder2 = GraphBuilder()
    builder2.add_node(agent("a", "x"), "a")
    builder2.add_node(agent("b", "y"), "b")
    builder2.add_edge("a", "b", condition=lambda state, invocation_state: invocation_state.get("go_on", False))
    assert [n.node_id for n in builder2.build()("t", invocation_state={"go_on": True}).execution_order] == ["a", "b"]
    assert seen == ["a"]
    with pytest.raises(TypeError, match="add_hook expects"):
        graph.add_hook("not a callback", BeforeNodeCallEvent)


def test_bad_input_on_a_file_session_leaves_every_byte_as_it_was(tmp_path: Path, disk_snapshot: Any) -> None:
    def build() -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("inspector", "found"), "inspector")
        builder.add_node(agent("cleanup", "cleaned"), "cleanup")
        builder.add_edge("inspector", "cleanup")
        builder.set_hook_providers([Approval()])
        builder.set_session_manager(FileSessionManager(session_id="s", storage_dir=tmp_path))
        return builder.build()

    result = build()("go")
    before = disk_snapshot(tmp_path)
    for bad, error in (("a prompt", ResumeInputError),
                       ([{"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}], UnknownInterruptError),
                       ([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": {1}}}], TypeError)):
        with pytest.raises(error):
            build()(bad)
        assert disk_snapshot(tmp_path) == before
    assert build()(answer(result)).status == Status.COMPLETED


def test_an_agent_with_its_own_session_is_refused_as_a_node(tmp_path: Path) -> None:
    loner = agent("loner", "x", session_manager=FileSessionManager(session_id="own", storage_dir=tmp_path))
    builder = GraphBuilder()
    builder.add_node(loner, "loner")
    with pytest.raises(ValueError, match="own session_manager cannot be a node"):
        builder.build()


def graph_to_draw() -> Any:
    builder = GraphBuilder()
    builder.add_node(agent("a", "x"), "a")
    builder.add_node(agent("b", "y"), "b")
    builder.add_edge("a", "b")
    return builder.build()


def test_the_cli_draws_a_graph(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", f"{__name__}:graph_to_draw"]) == 0
    drawn = capsys.readouterr().out
    assert 'n0["a"]' in drawn
    assert "n0 --> n1" in drawn


def test_a_node_that_raises_still_gets_its_after_node_call_event_with_the_error() -> None:
    """As in Strands: AfterNodeCallEvent closes every node call that ran, failed ones included."""
    errors: dict[str, Any] = {}
    recorder = Recorder()
    builder = GraphBuilder()
    builder.add_node(agent("a", "x"), "a")
    builder.add_node(agent("b"), "b")  # no reply scripted: its model call raises
    builder.add_edge("a", "b")
    builder.set_hook_providers([recorder])
    graph = builder.build()
    graph.add_hook(lambda event: errors.__setitem__(event.node_id, event.error), AfterNodeCallEvent)
    with pytest.raises(ModelError, match="scripted with 0 response") as failed:  # the graph fails fast
        graph("go")
    assert recorder.seen == ["init", "before None", "node a", "after a", "node b", "after b", "after call"]
    assert errors["a"] is None
    assert errors["b"] is failed.value


def test_a_graph_resumed_by_changed_code_says_what_changed(tmp_path: Path) -> None:
    def build(*extra: str) -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("inspector", "found 3"), "inspector")
        builder.add_node(agent("cleanup", "cleaned"), "cleanup")
        builder.add_edge("inspector", "cleanup")
        for node in extra:
            builder.add_node(agent(node, "done"), node)
        builder.set_hook_providers([Approval()])
        builder.set_session_manager(FileSessionManager(session_id="s", storage_dir=str(tmp_path)))
        return builder.build()

    paused = build()("clean up")
    assert paused.status == Status.INTERRUPTED
    with pytest.raises(MachineChangedError, match=r"nodes added: \['report'\]"):
        build("report")(answer(paused))
