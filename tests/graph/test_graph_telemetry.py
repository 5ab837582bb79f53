"""Spans of a StateGraph run come from the runner: the run, each node call, each checkpoint commit."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from pydantic import BaseModel

from statehitl import Agent
from statehitl.checkpoint import FileCheckpointer
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.models import ScriptedModel
from statehitl.nesting import call_machine_node


class S(BaseModel):
    text: str = ""
    helper: dict[str, Any] = {}


def children(span: ReadableSpan, finished: list[ReadableSpan]) -> list[str]:
    return [s.name for s in finished if s.parent is not None and s.parent.span_id == span.context.span_id]


def test_a_graph_run_has_run_node_and_commit_spans(spans, tmp_path) -> None:
    def ask(state: S, ctx: NodeContext) -> dict[str, Any]:
        return {"text": ctx.interrupt("go?", reason="r")}

    g = StateGraph(S)
    g.add_node("ask", ask)
    g.add_node("tidy", lambda s: {"text": s.text + "!"})
    g.add_edge(START, "ask")
    g.add_edge("ask", "tidy")
    g.add_edge("tidy", END)
    app = g.compile(checkpointer=FileCheckpointer(tmp_path), name="review")
    first = app.invoke({}, thread_id="t")
    finished = list(spans.get_finished_spans())
    [run] = [s for s in finished if s.name == "invoke_graph review"]
    assert run.attributes is not None
    assert run.attributes["statehitl.thread_id"] == "t"
    assert [e.attributes["interrupt.name"] for e in run.events if e.attributes] == ["go?"]
    # the node asks at once: the run's one commit records how it began and where it stopped
    assert children(run, finished) == ["execute_node ask", "checkpoint.commit"]
    commits = [s for s in finished if s.name == "checkpoint.commit"]
    assert [s.attributes["statehitl.status"] for s in commits if s.attributes] == ["interrupted"]
    [node] = [s for s in finished if s.name == "execute_node ask"]
    assert [e.name for e in node.events] == ["interrupt"]
    spans.clear()
    app.invoke([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "y"}}], thread_id="t")
    finished = list(spans.get_finished_spans())
    [run] = [s for s in finished if s.name == "invoke_graph review"]
    assert children(run, finished) == ["execute_node ask", "checkpoint.commit", "execute_node tidy",
                                       "checkpoint.commit"]
    commits = [s for s in finished if s.name == "checkpoint.commit"]
    assert [s.attributes["statehitl.status"] for s in commits if s.attributes] == ["executing", "completed"]


def test_an_agent_inside_a_node_nests_its_spans_under_the_node(spans) -> None:
    agent = Agent(model=ScriptedModel(["hello"]), name="helper", callback_handler=None)
    node = agent.as_node()

    async def helper(state: S, ctx: NodeContext) -> dict[str, Any]:
        done = await call_machine_node(node, "hi", state.helper or node.node_state(), ctx)
        return {"helper": done.state, "text": str(done.result)}

    g = StateGraph(S)
    g.add_node("helper", helper)
    g.add_edge(START, "helper")
    g.add_edge("helper", END)
    assert g.compile(name="host").invoke({}).state.text == "hello"
    finished = list(spans.get_finished_spans())
    [node_span] = [s for s in finished if s.name == "execute_node helper"]
    assert children(node_span, finished) == ["invoke_agent helper"]
