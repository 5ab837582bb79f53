"""The conversation bench_storage.py grows on each framework, and how its bytes are counted.

Each turn invokes the graph with one user message, and the nodes `model`, `tool` and `answer` each
append one more message. `run_statehitl` and `run_langgraph` run T turns on a fresh store, count the
bytes the process passed to write syscalls meanwhile, then load the latest state on a fresh
checkpointer / sqlite connection and count what that read.
"""

from __future__ import annotations

import contextlib
import gc
import json
import operator
import random
import sqlite3
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict, TypeVar

from harness.graphs import langgraph_config, open_sqlite_saver
from pydantic import BaseModel

from statehitl.graph import append

TEXT_CHARS = 200
"""Characters of text in every message; with its JSON keys a message is about 250 bytes."""

THREAD_ID = "conversation"

Message = dict[str, Any]
Update = dict[str, list[Message]]
T = TypeVar("T")


# --------------------------------------------------------------------------- the workload

_PROSE = (
    "the refund request for order was flagged by the fraud model because the shipping address "
    "changed twice within an hour and the customer asked support to approve a partial credit "
    "before the carrier confirms delivery of the replacement parcel to the new warehouse"
)
_WORDS = _PROSE.split()


def text(kind: str, turn: int) -> str:
    """Exactly TEXT_CHARS characters of varied, deterministic prose for message `kind` of `turn`."""
    rng = random.Random(f"{kind}-{turn}")
    out = f"[{kind} {turn}]"
    while len(out) < TEXT_CHARS:
        out += " " + rng.choice(_WORDS)
    return out[:TEXT_CHARS]


def user_message(turn: int) -> Message:
    return {"role": "user", "content": text("user", turn)}


def node_message(kind: str, turn: int) -> Message:
    """What node `kind` appends in `turn`: a tool call, its result, or the answer."""
    if kind == "model":
        call = {"id": f"call_{turn}", "name": "search", "arguments": {"query": text("query", turn)}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    if kind == "tool":
        return {"role": "tool", "tool_call_id": f"call_{turn}", "content": text("result", turn)}
    return {"role": "assistant", "content": text("answer", turn)}


NODES = ("model", "tool", "answer")


def reply(kind: str, messages: list[Message]) -> Update:
    """A node's update. Turn t's user message is item 4t, so every node of the turn sees 4t+1..4t+3 items."""
    return {"messages": [node_message(kind, len(messages) // 4)]}


def add_conversation(graph: Any, messages_of: Callable[[Any], list[Message]], start: Any, end: Any) -> Any:
    """START -> model -> tool -> answer -> END on `graph`, which it returns; both builders share this API.

    `messages_of` reads the history out of that framework's state (an attribute or a key).
    """
    for kind in NODES:
        graph.add_node(kind, conversation_node(kind, messages_of))
    graph.add_edge(start, NODES[0])
    graph.add_edge(NODES[0], NODES[1])
    graph.add_edge(NODES[1], NODES[2])
    graph.add_edge(NODES[2], end)
    return graph


def conversation_node(kind: str, messages_of: Callable[[Any], list[Message]]) -> Callable[[Any], Update]:
    def node(state: Any) -> Update:
        return reply(kind, messages_of(state))

    node.__name__ = kind
    return node


def state_json_bytes(messages: list[Message]) -> int:
    """Size of the conversation itself as compact JSON: what the thread really holds."""
    return len(json.dumps(messages, separators=(",", ":")).encode())


# --------------------------------------------------------------------------- process I/O counters


@dataclass(frozen=True)
class ProcIO:
    """Bytes this process passed to read-family (`rchar`) and write-family (`wchar`) syscalls.

    Counted per process across all its threads (LangGraph's background writer, aiofiles' workers),
    before the page cache: a write counts whether or not it ever reaches the disk, so both sides
    are measured on the same footing.
    """

    rchar: int
    wchar: int

    def __sub__(self, other: ProcIO) -> ProcIO:
        return ProcIO(self.rchar - other.rchar, self.wchar - other.wchar)


def proc_io() -> ProcIO:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return ProcIO(int(fields["rchar"]), int(fields["wchar"]))


def probe_overhead() -> ProcIO:
    """What reading /proc/self/io itself adds to a window (it is a read): subtracted from every window."""
    deltas = []
    for _ in range(5):
        a = proc_io()
        deltas.append(proc_io() - a)
    return min(deltas, key=lambda d: d.rchar)


def measured(fn: Callable[[], T], overhead: ProcIO) -> tuple[T, ProcIO]:
    """Run `fn` and return its result and the process I/O it caused. Print nothing inside `fn`."""
    gc.collect()
    start = proc_io()
    result = fn()
    return result, proc_io() - start - overhead


# --------------------------------------------------------------------------- results


@dataclass
class SideResult:
    """One framework at one thread length. Byte counts are exact; times are seconds per turn."""

    turns: int
    state_json_bytes: int
    checkpoints: int
    wchar: int
    """Bytes passed to write syscalls during the T turns."""
    turn_seconds: list[float] = field(default_factory=list)
    load_rchar: int = 0
    """Bytes passed to read syscalls by loading the latest state on a fresh checkpointer/connection."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Side-specific detail: statehitl's storage counts, LangGraph's sqlite table and file sizes."""

    @property
    def median_turn_ms(self) -> float:
        return statistics.median(self.turn_seconds) * 1e3


def step_target(content: float) -> float:
    """The issue's bound on bytes written per step: 1.5x the step's new content plus 200 bytes."""
    return 1.5 * content + 200


def dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- statehitl side


class Chat(BaseModel):
    """statehitl's state: one append-only channel, stored as deltas by the checkpoint engine."""

    messages: Annotated[list[Message], append] = []


def statehitl_app(checkpointer: Any) -> Any:
    from statehitl.graph import END, START, StateGraph

    return add_conversation(StateGraph(Chat), operator.attrgetter("messages"), START, END).compile(
        checkpointer=checkpointer
    )


def statehitl_counting_checkpointer(directory: Path, compress: bool | None = None) -> tuple[Any, Any]:
    """A fresh `Checkpointer(CountingStorage(FileStorage(dir)), compress=...)` and its counting storage."""
    from statehitl.checkpoint import Checkpointer, FileStorage
    from statehitl.testing import CountingStorage

    storage = CountingStorage(FileStorage(directory))
    return Checkpointer(storage, compress=compress), storage


def run_statehitl(turns: int, directory: Path, overhead: ProcIO, compress: bool | None = None) -> SideResult:
    """T turns on a fresh store; `compress`: the checkpointer's option (None: its default, compressed on
    files). The cold read below uses a default checkpointer, which reads both kinds of record."""
    checkpointer, storage = statehitl_counting_checkpointer(directory, compress)
    app = statehitl_app(checkpointer)
    times: list[float] = []

    def conversation() -> Any:
        result = None
        for turn in range(turns):
            t0 = time.perf_counter()
            result = app.invoke({"messages": [user_message(turn)]}, thread_id=THREAD_ID)
            times.append(time.perf_counter() - t0)
        return result

    result, io = measured(conversation, overhead)
    assert result is not None
    assert result.stop_reason == "end", result.stop_reason
    messages = result.state.messages
    assert len(messages) == 4 * turns, len(messages)
    written = storage.reset()
    checkpoints = int(result.checkpoint_id) + 1  # one thread, no forks: ids are 0..n-1

    # The same process going on with the thread it wrote: only the head is read.
    warm_snapshot = app.get_state(THREAD_ID)
    assert warm_snapshot is not None
    assert warm_snapshot.values.messages == messages
    warm = storage.reset()

    # A fresh process-equivalent: a new checkpointer and app on the same directory, nothing cached.
    fresh_checkpointer, fresh_storage = statehitl_counting_checkpointer(directory)
    fresh_app = statehitl_app(fresh_checkpointer)
    snapshot, load_io = measured(lambda: fresh_app.get_state(THREAD_ID), overhead)
    assert snapshot is not None
    assert snapshot.values.messages == messages
    loaded = fresh_storage.reset()
    state_bytes = state_json_bytes(messages)
    per_step = written.bytes_written / checkpoints

    return SideResult(
        turns=turns,
        state_json_bytes=state_bytes,
        checkpoints=checkpoints,
        wchar=io.wchar,
        turn_seconds=times,
        load_rchar=load_io.rchar,
        extra={
            "storage_bytes_written": written.bytes_written,
            "storage_calls_during_turns": dict(written.calls),
            "storage_bytes_per_step": per_step,
            "step_target_bytes": step_target(state_bytes / checkpoints),
            "files_on_disk_bytes": dir_bytes(directory),
            "warm_calls": dict(warm.calls),
            "warm_requests": sum(warm.calls.values()),
            "warm_bytes_read": warm.bytes_read,
            "load_calls": dict(loaded.calls),
            "load_requests": sum(loaded.calls.values()),
            "load_bytes_read": loaded.bytes_read,
            "load_bytes_per_state_byte": loaded.bytes_read / state_bytes,
            "load_keys_read": loaded.keys_read,
        },
    )


# --------------------------------------------------------------------------- LangGraph side


class LGChat(TypedDict):
    """LangGraph's idiomatic state: a TypedDict whose channel appends with operator.add."""

    messages: Annotated[list[Message], operator.add]


def langgraph_app(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    return add_conversation(StateGraph(LGChat), operator.itemgetter("messages"), START, END).compile(
        checkpointer=saver
    )


def sqlite_files(db: Path) -> dict[str, int]:
    """Sizes of the database and its WAL / shared-memory files (0 when absent)."""
    sizes = {}
    for suffix in ("", "-wal", "-shm"):
        path = db.with_name(db.name + suffix)
        sizes[suffix.lstrip("-") or "db"] = path.stat().st_size if path.exists() else 0
    return sizes


def sqlite_payload(conn: sqlite3.Connection) -> dict[str, int]:
    """What LangGraph serialized into its tables for the thread: checkpoint blobs, metadata, writes."""
    n, blobs, meta = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint)), 0), COALESCE(SUM(LENGTH(metadata)), 0) "
        "FROM checkpoints WHERE thread_id = ?",
        (THREAD_ID,),
    ).fetchone()
    nw, values = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?", (THREAD_ID,)
    ).fetchone()
    return {
        "checkpoint_rows": n,
        "checkpoint_blob_bytes": blobs,
        "metadata_bytes": meta,
        "write_rows": nw,
        "write_value_bytes": values,
    }


def run_langgraph(turns: int, db: Path, overhead: ProcIO, durability: str | None) -> SideResult:
    config = langgraph_config(THREAD_ID)
    kwargs: dict[str, Any] = {} if durability is None else {"durability": durability}
    times: list[float] = []
    stack = contextlib.ExitStack()
    with stack:
        saver = open_sqlite_saver(db, stack)
        saver.setup()  # schema creation stays outside the window: a real thread finds the tables there
        app = langgraph_app(saver)

        def conversation() -> Any:
            result = None
            for turn in range(turns):
                t0 = time.perf_counter()
                result = app.invoke({"messages": [user_message(turn)]}, config, **kwargs)
                times.append(time.perf_counter() - t0)
            return result

        result, io = measured(conversation, overhead)
        assert result is not None
        messages = result["messages"]
        assert len(messages) == 4 * turns, len(messages)
        files_open = sqlite_files(db)
        payload = sqlite_payload(saver.conn)
        # Closing the last connection checkpoints the WAL into the database file: more writes, after the turns.
        _, close_io = measured(stack.close, overhead)
    files_closed = sqlite_files(db)

    # A fresh process-equivalent: a new connection and saver (its setup done first) and a new app.
    with contextlib.ExitStack() as fresh_stack:
        fresh_saver = open_sqlite_saver(db, fresh_stack)
        fresh_saver.setup()
        fresh_app = langgraph_app(fresh_saver)
        snapshot, load_io = measured(lambda: fresh_app.get_state(config), overhead)
        assert snapshot.values["messages"] == messages

    return SideResult(
        turns=turns,
        state_json_bytes=state_json_bytes(messages),
        checkpoints=payload["checkpoint_rows"],
        wchar=io.wchar,
        turn_seconds=times,
        load_rchar=load_io.rchar,
        extra={
            **payload,
            "serialized_bytes": payload["checkpoint_blob_bytes"]
            + payload["metadata_bytes"]
            + payload["write_value_bytes"],
            "sqlite_files_at_end": files_open,
            "db_plus_wal_at_end": files_open["db"] + files_open["wal"],
            "close_wchar": close_io.wchar,
            "sqlite_files_after_close": files_closed,
        },
    )
