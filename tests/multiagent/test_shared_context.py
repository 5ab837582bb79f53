"""``swarm.shared_context``: one object for the swarm's life, as in Strands, kept in the thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ma_helpers import agent, handoff

from statehitl.multiagent import GraphBuilder, SharedContext, Status, Swarm
from statehitl.session import FileSessionManager


def prompt_of(one: Any, turn: int = 0) -> str:
    text: str = one.model.requests[turn]["messages"][0]["content"][0]["text"]
    return text


def test_one_shared_context_lasts_across_calls_and_add_context_reaches_the_next_turn() -> None:
    researcher = agent("researcher", handoff("writer", "write", {"facts": 3}), "handed", "second task done")
    writer = agent("writer", "the report")
    swarm = Swarm([researcher, writer])
    shared = swarm.shared_context
    assert isinstance(shared, SharedContext)
    shared.add_context(swarm.nodes["writer"], "style", "terse")  # before any call, as Strands allows
    assert shared.context == {"writer": {"style": "terse"}}

    assert swarm("research and write").status == Status.COMPLETED
    assert swarm.shared_context is shared is swarm.state.shared_context
    assert shared.context == {"writer": {"style": "terse"}, "researcher": {"facts": 3}}
    assert "• writer: {'style': 'terse'}" in prompt_of(researcher)  # the first turn read what was added

    shared.add_context("researcher", "sources", ["a", "b"])
    assert swarm("a second task").status == Status.COMPLETED
    second = prompt_of(researcher, 2)
    assert "• researcher: {'facts': 3, 'sources': ['a', 'b']}" in second  # kept across calls, as in Strands
    assert "• writer: {'style': 'terse'}" in second


def test_what_is_shared_is_in_the_thread_for_a_new_swarm_on_the_session(tmp_path: Path) -> None:
    def build(*replies: Any) -> Swarm:
        return Swarm([agent("solo", *replies)], session_manager=FileSessionManager("s", storage_dir=tmp_path))

    first = build("done")
    first.shared_context.add_context("solo", "customer", {"id": 7})
    first("go")
    again = build()  # another process: it shows the context as soon as it is built
    assert again.shared_context.context == {"solo": {"customer": {"id": 7}}}
    assert again.serialize_state()["context"]["shared_context"] == {"solo": {"customer": {"id": 7}}}


def test_add_context_refuses_what_strands_refuses() -> None:
    shared = Swarm([agent("solo", "x")]).shared_context
    for key in ("", "   ", None, 3):
        with pytest.raises(ValueError, match="non-blank str"):
            shared.add_context("solo", key, "v")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="JSON"):
        shared.add_context("solo", "when", object())
    assert shared.context == {}


def test_a_blank_context_key_refuses_the_whole_handoff() -> None:
    lost = agent("lost", handoff("other", "go on", {" ": 1}), "answering myself")
    other = agent("other", "unused")
    swarm = Swarm([lost, other])
    result = swarm("go")
    assert [n.node_id for n in result.node_history] == ["lost"]
    assert swarm.shared_context.context == {}
    results = [b["toolResult"] for m in lost.messages for b in m["content"] if "toolResult" in b]
    assert results[0]["status"] == "error"
    assert "Error in handoff: a shared context key must be a non-blank str" in results[0]["content"][0]["text"]


def test_a_swarm_in_a_graph_takes_what_is_added_to_its_shared_context() -> None:
    fixer = agent("fixer", "fixed", "fixed again")
    team = Swarm([fixer], id="team")
    builder = GraphBuilder()
    builder.add_node(team, "team")
    graph = builder.build()
    team.shared_context.add_context("fixer", "ticket", 42)
    assert graph("fix it").status == Status.COMPLETED
    assert "• fixer: {'ticket': 42}" in prompt_of(fixer)
    assert graph.nodes["team"].executor.shared_context.context == {"fixer": {"ticket": 42}}
    assert graph("fix it again").status == Status.COMPLETED  # the graph's thread keeps it for the next call
    assert "• fixer: {'ticket': 42}" in prompt_of(fixer, 1)
