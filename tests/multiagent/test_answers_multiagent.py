"""Typed answers, tool-call digests and the audit trail through orchestrations: a Swarm's node hook, and an
agent asking for approval of a tool call inside a Graph node (its digest reaches the nested run)."""

from __future__ import annotations

from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, note, uses

from replies import reply
from statehitl.action_digest import tool_call_digest
from statehitl.errors import DigestMismatchError
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.multiagent import GraphBuilder, Status, Swarm


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()



def test_a_swarm_records_who_answered_its_node_hook() -> None:
    swarm = Swarm([agent("cleanup", "cleaned up")], hooks=[Approval()])
    waiting = swarm("clean up").interrupts[0]
    assert swarm(reply(waiting, "y", responder="ops", comment="scheduled window")).status == Status.COMPLETED
    [entry] = swarm.audit()
    assert (entry.name, entry.source, entry.node, entry.responder, entry.comment, entry.response) == (
        "myapp-approval", "multiagent-hook", "cleanup", "ops", "scheduled window", "y")


class ApproveNotes(HookProvider):
    """Fills in a live value (``live["text"]``), then asks for approval with the vocabulary."""

    def __init__(self, live: dict[str, str]) -> None:
        self.live = live

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeToolCallEvent, self.fill)
        registry.add_callback(BeforeToolCallEvent, self.ask)

    def fill(self, event: BeforeToolCallEvent) -> None:
        event.tool_use = {**event.tool_use, "input": {"text": self.live["text"]}}

    def ask(self, event: BeforeToolCallEvent) -> None:
        event.approve("note-ok", reason=event.tool_use["input"])


def noting_graph(live: dict[str, str]) -> Any:
    writer = agent("writer", uses(("t1", "note", {"text": "?"})), "noted it", tools=[note], hooks=[ApproveNotes(live)])
    builder = GraphBuilder()
    builder.add_node(writer, "writer")
    builder.set_entry_point("writer")
    return builder.build()


def test_an_agent_in_a_graph_binds_its_approval_to_the_call_and_edits_apply() -> None:
    live = {"text": "ship friday"}
    graph = noting_graph(live)
    waiting = graph("write it down").interrupts[0]
    assert waiting.digest == tool_call_digest("note", {"text": "ship friday"})
    assert waiting.response_schema is not None

    with pytest.raises(DigestMismatchError, match="was given for tool call"):
        graph(reply(waiting, {"type": "approve"}, digest=tool_call_digest("note", {"text": "ship monday"})))
    live["text"] = "ship monday"  # the call the nested agent would run is no longer the one shown
    with pytest.raises(DigestMismatchError, match="the call that would run now is"):
        graph(reply(waiting, {"type": "approve"}))
    assert RUNS == []
    assert [e.outcome for e in graph.audit()] == ["refused"]  # the second was refused on re-run: withdrawn

    live["text"] = "ship friday"
    result = graph(reply(waiting, {"type": "edit", "input": {"text": "ship saturday"}}, responder="pm"))
    assert result.status == Status.COMPLETED
    assert RUNS == ["note ship saturday"]
    [_, entry] = graph.audit()
    assert (entry.outcome, entry.responder, entry.digest) == ("edited", "pm", waiting.digest)
