"""A program that leaves threads waiting on a human (one interrupt each, or two from parallel nodes), and
a reader of the inbox a page at a time: what the inbox paging tests share, on every backend."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import BaseModel

from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.graph import END, START, NodeContext, StateGraph


class Job(BaseModel):
    task: str
    twice: bool = False
    first: Any = None
    second: Any = None


def asking_app(checkpointer: Checkpointer) -> Any:
    """Nodes ``first`` and ``second`` run in one step; ``first`` always asks, ``second`` when ``twice``."""

    def first(state: Job, ctx: NodeContext) -> dict[str, Any]:
        return {"first": ctx.interrupt("go-ahead", reason={"task": state.task})}

    def second(state: Job, ctx: NodeContext) -> dict[str, Any]:
        if not state.twice:
            return {}
        return {"second": ctx.interrupt("double-check", reason={"task": state.task})}

    graph = StateGraph(Job)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(START, "first")
    graph.add_edge(START, "second")
    graph.add_edge("first", END)
    graph.add_edge("second", END)
    return graph.compile(checkpointer=checkpointer)


def leave_waiting(checkpointer: Checkpointer, threads: list[str], *, twice: Collection[str] = ()) -> None:
    """Run each of ``threads`` up to its interrupt(s)."""
    app = asking_app(checkpointer)
    for thread in threads:
        app.invoke({"task": thread, "twice": thread in twice}, thread_id=thread)


def every_page(store: str | Checkpointer, limit: int) -> list[list[tuple[str, str]]]:
    """The inbox page by page from the first, each page as (thread, interrupt id) pairs."""
    pages = []
    cursor = None
    while True:
        page = inbox.pending_page(store, limit=limit, cursor=cursor)
        assert len(page.items) <= limit
        pages.append([(item.thread_id, item.id) for item in page.items])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor
