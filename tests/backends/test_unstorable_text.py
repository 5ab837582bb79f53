"""A value UTF-8 cannot hold (a lone surrogate, as ``os.listdir`` gives for a file name that is not UTF-8)
is stored with U+FFFD in its place on S3 and DynamoDB too, and the approved action is not run again."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer
from statehitl.graph import END, START, NodeContext, StateGraph


class Listing(BaseModel):
    files: list[str] = []


def lister(checkpointer: Checkpointer, ran: list[str]) -> Any:
    def listing(state: Listing, ctx: NodeContext) -> dict[str, Any]:
        if ctx.interrupt("list", reason="list /srv?") == "y":
            ran.append(ctx.idempotency_key)
            return {"files": ["report-\udcff.txt"]}
        return {}

    g = StateGraph(Listing)
    g.add_node("listing", listing)
    g.add_edge(START, "listing")
    g.add_edge("listing", END)
    return g.compile(checkpointer=checkpointer)


def test_a_lone_surrogate_is_stored_replaced_and_the_action_runs_once(cloud_store_url: str) -> None:
    ran: list[str] = []
    app = lister(Checkpointer.from_url(cloud_store_url), ran)
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    done = app.invoke([{"interruptResponse": {"interruptId": waiting.id, "response": "y"}}], thread_id="t")
    assert done.status.value == "completed"
    assert len(ran) == 1
    fresh = lister(Checkpointer.from_url(cloud_store_url), ran)
    assert fresh.get_state("t").values.files == ["report-\ufffd.txt"]
    latest = asyncio.run(Checkpointer.from_url(cloud_store_url).latest("t"))
    assert latest is not None
    assert latest.replaced_text == 1
    assert len(ran) == 1
