"""Who may answer, through an orchestration: an agent inside a Graph node asks approval of a tool call
from the finance group; the Graph's own call with another responder is refused (nothing runs, nothing
binds, the refusal is in the graph's trail), and a member of the group is taken."""

from __future__ import annotations

import pytest
from ma_helpers import RUNS, agent, note, uses

from replies import reply
from statehitl.errors import ResponderNotAllowedError
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.multiagent import GraphBuilder, Status


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


class FinanceApproves(HookProvider):
    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeToolCallEvent, self.ask)

    def ask(self, event: BeforeToolCallEvent) -> None:
        event.approve("note-ok", reason=event.tool_use["input"], responders=["group:finance"])


def test_a_graph_refuses_a_responder_its_nested_agent_does_not_name() -> None:
    writer = agent("writer", uses(("t1", "note", {"text": "pay"})), "noted it", tools=[note], hooks=[FinanceApproves()])
    builder = GraphBuilder()
    builder.add_node(writer, "writer")
    builder.set_entry_point("writer")
    graph = builder.build()
    waiting = graph("write it down").interrupts[0]
    assert waiting.responders == ["group:finance"]
    with pytest.raises(ResponderNotAllowedError, match="may be answered only by a member of group finance"):
        graph(reply(waiting, {"type": "approve"}, responder="pm", groups=["product"]))
    assert RUNS == []
    result = graph(reply(waiting, {"type": "approve"}, responder="cfo", groups=["finance"]))
    assert result.status == Status.COMPLETED
    assert RUNS == ["note pay"]
    assert [(e.outcome, e.responder, e.node) for e in graph.audit()] == [("refused", "pm", "writer/note"),
                                                                         ("applied", "cfo", "writer/note")]
