"""Smaller promises: a checkpoint id used with another thread is refused, an error after the action ran says
so, and an answer whose node then failed is audited as failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer, FileStorage
from statehitl.errors import ActionOutcomeUnknownError, CheckpointNotFoundError, StorageFullError
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.testing.faults import FaultyStorage
from statehitl.types import Command


class Steps(BaseModel):
    done: list[str] = []


def chain() -> StateGraph[Steps]:
    g = StateGraph(Steps)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s, name=name: {"done": [*s.done, name]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g


def test_a_checkpoint_id_of_another_thread_is_refused(tmp_path: Path) -> None:
    app = chain().compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    for thread in ("A", "B"):
        app.invoke({}, {"configurable": {"thread_id": thread}})
    from_a = list(app.get_state_history({"configurable": {"thread_id": "A"}}))[2].config
    mixed = {"configurable": {**from_a["configurable"], "thread_id": "B"}}
    head = app.get_state({"configurable": {"thread_id": "B"}})
    with pytest.raises(CheckpointNotFoundError, match="is not one of thread 'B': it names a checkpoint of another"):
        app.invoke(None, mixed)
    with pytest.raises(CheckpointNotFoundError, match="another thread"):
        app.get_state(mixed)
    assert app.get_state({"configurable": {"thread_id": "B"}}).config == head.config  # B did not fork
    assert app.get_state(from_a).values.done == ["a"]  # with its own thread, the id works


class Pay(BaseModel):
    paid: list[str] = []
    after: bool = False


def test_an_error_after_the_action_ran_says_so(tmp_path: Path) -> None:
    storage = FaultyStorage(FileStorage(tmp_path))

    def pay(state: Pay, ctx: NodeContext) -> dict[str, Any]:
        answer = ctx.interrupt("pay?")
        storage.fail("write", "full", times=None)  # the disk fills right after the payment
        return {"paid": [*state.paid, answer]}

    g = StateGraph(Pay)
    g.add_node("pay", pay)
    g.add_node("after", lambda s: {"after": True})
    g.add_edge(START, "pay")
    g.add_edge("pay", "after")
    g.add_edge("after", END)
    app = g.compile(checkpointer=Checkpointer(storage))
    app.invoke({}, thread_id="p")
    with pytest.raises(StorageFullError, match="this run had acted on the thread's answers before the write "
                                               "failed: the action may have run") as full:
        app.invoke(Command(resume="yes"), {"configurable": {"thread_id": "p"}})
    assert "statehitl threads retry p" in str(full.value)
    storage.heal()
    with pytest.raises(ActionOutcomeUnknownError):  # what the error said: a human must check first
        app.invoke(None, thread_id="p")


def test_an_answer_whose_node_then_failed_is_audited_as_failed(tmp_path: Path) -> None:
    def crash(state: Pay, ctx: NodeContext) -> dict[str, Any]:
        ctx.interrupt("go?")
        raise RuntimeError("the payment API is down")

    g = StateGraph(Pay)
    g.add_node("crash", crash)
    g.add_edge(START, "crash")
    g.add_edge("crash", END)
    app = g.compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    waiting = app.invoke({}, thread_id="f").interrupts[0]
    with pytest.raises(RuntimeError, match="payment API is down"):
        app.invoke([{"interruptResponse": {"interruptId": waiting.id, "response": "y", "responder": "ann"}}],
                   thread_id="f")
    [entry] = app.audit("f")
    assert (entry.outcome, entry.responder, entry.response) == ("failed", "ann", "y")
    assert app.get_state("f").status == "failed"
