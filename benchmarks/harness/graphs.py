"""The graphs and the LangGraph sqlite setup that more than one script runs.

bench_core.py times the chain and the review graph on both frameworks, bench_backends.py runs them
on statehitl's other stores, and bench_storage.py opens its LangGraph saver the same way as
bench_core.py: one definition keeps their rows comparable.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:  # LangGraph stays a lazy import so `--only statehitl` never loads it
    from langchain_core.runnables import RunnableConfig

STEP_LIMIT = 250
"""statehitl's step limit and LangGraph's recursion limit: comfortably above every graph's length, so
neither framework stops early."""


# --------------------------------------------------------------------------- both frameworks


def add_linear_chain(graph: Any, node: Callable[..., None], start: Any, end: Any, length: int) -> None:
    """START -> n0 -> ... -> n{length-1} -> END; both builders share this add_node/add_edge API."""
    names = [f"n{i}" for i in range(length)]
    for name in names:
        graph.add_node(name, node)
    graph.add_edge(start, names[0])
    for a, b in itertools.pairwise(names):
        graph.add_edge(a, b)
    graph.add_edge(names[-1], end)


def add_review(graph: Any, prepare: Callable[..., Any], review: Callable[..., Any], start: Any, end: Any) -> Any:
    """START -> prepare -> review -> END on `graph`, which it returns; `review` is the node that interrupts."""
    graph.add_node("prepare", prepare)
    graph.add_node("review", review)
    graph.add_edge(start, "prepare")
    graph.add_edge("prepare", "review")
    graph.add_edge("review", end)
    return graph


# --------------------------------------------------------------------------- statehitl


class SHState(BaseModel):
    """statehitl's state: the tiny one-int pydantic model its API asks for.

    Module-level, like bench_core's LGState, so rebuilding a graph for the resume never pays
    for pydantic schema building that a real process does once at import.
    """

    n: int = 0


def statehitl_review_graph() -> Any:
    """prepare -> review(interrupt) -> END, not yet compiled (bench_backends compiles it on other stores)."""
    from statehitl.graph import END, START, StateGraph

    def prepare(state: SHState) -> None:
        return None

    def review(state: SHState, ctx: Any) -> dict[str, int]:
        answer = ctx.interrupt("approval", reason={"n": state.n})
        return {"n": 1 if answer == "y" else 0}

    return add_review(StateGraph(SHState), prepare, review, START, END)


# --------------------------------------------------------------------------- LangGraph


def langgraph_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": STEP_LIMIT}


def open_sqlite_saver(path: Path, stack: contextlib.ExitStack) -> Any:
    """SqliteSaver on a file, exactly as LangGraph's docs set it up (its default pragmas)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    stack.callback(conn.close)
    return SqliteSaver(conn)


@contextlib.contextmanager
def probe_connection(workdir: Path) -> Iterator[sqlite3.Connection]:
    """The connection of a SqliteSaver after its own setup(), for reading the pragmas it runs with."""
    with contextlib.ExitStack() as stack:
        saver = open_sqlite_saver(workdir / "langgraph-pragma-probe.sqlite", stack)
        saver.setup()
        yield saver.conn


def langgraph_sqlite_pragmas(workdir: Path) -> dict[str, Any]:
    """What journal/sync mode LangGraph's SqliteSaver actually ends up with here.

    Read from a saver after its own setup() so the report states the real mode
    rather than an assumption (SqliteSaver sets WAL; it leaves `synchronous` at
    sqlite's compiled default).
    """
    with probe_connection(workdir) as conn:
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    names = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
    return {
        "sqlite_version": sqlite3.sqlite_version,
        "journal_mode": journal,
        "synchronous": names.get(sync, str(sync)),
    }
