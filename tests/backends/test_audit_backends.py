"""Typed answers and the audit trail on S3 and DynamoDB, against real servers (moto_server, DynamoDB Local)
on loopback: the interrupt's schema comes back from the store, a wrong answer is refused with the store
untouched, and the trail is written once per answer, survives ``prune`` and goes with ``delete_thread``."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer
from statehitl.errors import (
    CheckpointConflict,
    NotInterruptedError,
    ResponseValidationError,
    UnknownInterruptError,
)
from statehitl.graph import END, START, NodeContext, StateGraph


class State(BaseModel):
    log: list[str] = []


def build(url: str) -> Any:
    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        decision = ctx.interrupt(f"approve-{len(state.log)}", reason={"n": len(state.log)},
                                 response_type=Literal["yes", "no"])
        return {"log": [*state.log, decision]}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_conditional_edges("ask", lambda s: END if len(s.log) >= 3 else "ask")
    return g.compile(checkpointer=Checkpointer.from_url(url))


def everything(checkpointer: Checkpointer) -> dict[str, bytes | None]:
    async def read() -> dict[str, bytes | None]:
        keys = await checkpointer.storage.list("")
        return {k: (found[0] if (found := await checkpointer.storage.read(k)) else None) for k in keys}

    return asyncio.run(read())


def test_typed_answers_and_the_audit_trail_on_a_cloud_store(cloud_store_url: str) -> None:
    app = build(cloud_store_url)
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    fresh = build(cloud_store_url)  # another app on the same store: what it reads comes from the store
    assert fresh.get_state("t").interrupts[0].response_schema == {"enum": ["yes", "no"], "type": "string"}
    [entry] = asyncio.run(fresh.checkpointer.threads("interrupted"))
    assert entry.interrupts[0].response_schema == {"enum": ["yes", "no"], "type": "string"}  # the index has it too

    before = everything(app.checkpointer)
    with pytest.raises(ResponseValidationError, match="expected one of 'yes', 'no', got 'sure'"):
        fresh.invoke([{"interruptResponse": {"interruptId": waiting.id, "response": "sure"}}], thread_id="t")
    assert everything(app.checkpointer) == before

    # three reviewers answer the first question at once, each from their own app: one answer is applied
    apps = [build(cloud_store_url) for _ in range(3)]

    async def race() -> list[Any]:
        return await asyncio.gather(*(a.ainvoke([{"interruptResponse": {
            "interruptId": waiting.id, "response": "no", "responder": f"reviewer-{r}", "comment": "round 0"}}],
            thread_id="t") for r, a in enumerate(apps)), return_exceptions=True)

    outcomes = asyncio.run(race())
    lost = [o for o in outcomes if isinstance(o, BaseException)]
    assert all(isinstance(o, CheckpointConflict | NotInterruptedError | UnknownInterruptError) for o in lost), lost
    assert len(lost) == 2
    winner = next(r for r, o in enumerate(outcomes) if not isinstance(o, BaseException))
    for n in range(1, 3):
        waiting = fresh.get_state("t").interrupts[0]
        fresh.invoke([{"interruptResponse": {"interruptId": waiting.id, "response": "yes" if n else "no",
                                             "responder": f"reviewer-{n}", "comment": f"round {n}"}}], thread_id="t")
    assert fresh.get_state("t").values.log == ["no", "yes", "yes"]
    trail = build(cloud_store_url).audit("t")
    assert [(e.name, e.response, e.responder, e.comment, e.reason) for e in trail] == [
        (f"approve-{n}", "yes" if n else "no", f"reviewer-{n or winner}", f"round {n}", {"n": n}) for n in range(3)]

    checkpointer = Checkpointer.from_url(cloud_store_url)
    assert asyncio.run(checkpointer.prune("t", keep_last=1)) > 0
    assert asyncio.run(checkpointer.audit("t")) == trail
    asyncio.run(checkpointer.delete_thread("t"))
    assert asyncio.run(checkpointer.audit("t")) == []
    assert [k for k in everything(checkpointer) if not k.startswith("machines/")] == []
