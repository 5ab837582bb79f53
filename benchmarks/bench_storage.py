"""Storage benchmark: bytes written and read by statehitl vs LangGraph on an append-only conversation.

Run from the repository root:

    uv run --group bench python benchmarks/bench_storage.py          # T = 10, 50, 200 turns
    uv run --group bench python benchmarks/bench_storage.py --quick  # T = 10, 50

Both frameworks run the same conversation in the same process: each turn invokes the graph with one
user message, and the nodes `model`, `tool` and `answer` each append one more message, so a turn
adds four messages of about 200 bytes of text. statehitl stores the thread on
`Checkpointer(CountingStorage(FileStorage(dir)))`, LangGraph on `SqliteSaver` over a sqlite file,
each with its default durability. Bytes written are measured the same way for both: the growth of
`wchar` in /proc/self/io (bytes passed to write syscalls) over the T turns. Loading the latest state
is measured in a fresh process-equivalent (a new checkpointer / a new sqlite connection). See
benchmarks/README.md for every column. Linux only (/proc/self/io).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import operator
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict, TypeVar

from bench_core import (
    base_environment,
    bench_arguments,
    fmt,
    langgraph_config,
    langgraph_sqlite_pragmas,
    langgraph_version,
    open_sqlite_saver,
    scratch_dir,
    statehitl_version,
    write_results,
)
from pydantic import BaseModel

from statehitl.graph import append

TURNS_FULL = (10, 50, 200)
TURNS_QUICK = (10, 50)
TEXT_CHARS = 200
"""Characters of text in every message; with its JSON keys a message is about 250 bytes."""

THREAD_ID = "conversation"
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "storage.json"
SIDES = ("statehitl", "langgraph")

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


def add_conversation(graph: Any, node_for: Callable[[str], Callable[..., Update]], start: Any, end: Any) -> None:
    """START -> model -> tool -> answer -> END; both builders share this add_node/add_edge API."""
    for kind in NODES:
        graph.add_node(kind, node_for(kind))
    graph.add_edge(start, NODES[0])
    graph.add_edge(NODES[0], NODES[1])
    graph.add_edge(NODES[1], NODES[2])
    graph.add_edge(NODES[2], end)


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


def log2_bound(checkpoints: int) -> int:
    """The engine's promise: loading a checkpoint at depth d reads at most floor(log2 d) + 1 records."""
    return math.floor(math.log2(checkpoints)) + 1 if checkpoints > 0 else 0


async def worst_reads(checkpointer: Any, storage: Any, checkpoints: int) -> int:
    """Most records any single checkpoint of the thread takes to load: the bound, seen from every depth."""
    worst = 0
    for seq in range(checkpoints):
        storage.reset()
        await checkpointer.get(THREAD_ID, seq)
        worst = max(worst, storage.counts.calls["read"])
    return worst


def dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- statehitl side


class Chat(BaseModel):
    """statehitl's state: one append-only channel, stored as deltas by the checkpoint engine."""

    messages: Annotated[list[Message], append] = []


def statehitl_app(checkpointer: Any) -> Any:
    from statehitl.graph import END, START, StateGraph

    def node_for(kind: str) -> Callable[[Chat], Update]:
        def node(state: Chat) -> Update:
            return reply(kind, state.messages)

        node.__name__ = kind
        return node

    g = StateGraph(Chat)
    add_conversation(g, node_for, START, END)
    return g.compile(checkpointer=checkpointer)


def statehitl_counting_checkpointer(directory: Path) -> tuple[Any, Any]:
    """A fresh `Checkpointer(CountingStorage(FileStorage(dir)))` and its counting storage."""
    from statehitl.checkpoint import Checkpointer, FileStorage
    from statehitl.testing import CountingStorage

    storage = CountingStorage(FileStorage(directory))
    return Checkpointer(storage), storage


def run_statehitl(turns: int, directory: Path, overhead: ProcIO) -> SideResult:
    checkpointer, storage = statehitl_counting_checkpointer(directory)
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

    # A fresh process-equivalent: a new checkpointer and app on the same directory, nothing cached.
    fresh_checkpointer, fresh_storage = statehitl_counting_checkpointer(directory)
    fresh_app = statehitl_app(fresh_checkpointer)
    snapshot, load_io = measured(lambda: fresh_app.get_state(THREAD_ID), overhead)
    assert snapshot is not None
    assert snapshot.values.messages == messages
    loaded = fresh_storage.reset()
    reads, lists = loaded.calls["read"], loaded.calls["list"]
    worst = asyncio.run(worst_reads(fresh_checkpointer, fresh_storage, checkpoints))
    bound = log2_bound(checkpoints)
    if max(reads, worst) > bound:
        print(
            f"WARNING: statehitl read up to {worst} records for {checkpoints} checkpoints (bound {bound})",
            file=sys.stderr,
        )

    return SideResult(
        turns=turns,
        state_json_bytes=state_json_bytes(messages),
        checkpoints=checkpoints,
        wchar=io.wchar,
        turn_seconds=times,
        load_rchar=load_io.rchar,
        extra={
            "storage_bytes_written": written.bytes_written,
            "storage_calls_during_turns": dict(written.calls),
            "files_on_disk_bytes": dir_bytes(directory),
            "load_reads": reads,
            "load_lists": lists,
            "load_calls": dict(loaded.calls),
            "load_bytes_read": loaded.bytes_read,
            "load_read_bound": bound,
            "worst_reads_any_checkpoint": worst,
            "load_within_bound": max(reads, worst) <= bound,
            "load_keys_read": loaded.keys_read,
        },
    )


# --------------------------------------------------------------------------- LangGraph side


class LGChat(TypedDict):
    """LangGraph's idiomatic state: a TypedDict whose channel appends with operator.add."""

    messages: Annotated[list[Message], operator.add]


def langgraph_app(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    def node_for(kind: str) -> Callable[[LGChat], Update]:
        def node(state: LGChat) -> Update:
            return reply(kind, state["messages"])

        node.__name__ = kind
        return node

    g = StateGraph(LGChat)
    add_conversation(g, node_for, START, END)
    return g.compile(checkpointer=saver)


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


# --------------------------------------------------------------------------- orchestration


@dataclass
class Point:
    """Both sides at one thread length."""

    turns: int
    statehitl: SideResult | None
    langgraph: SideResult | None

    @property
    def ratio(self) -> float | None:
        """langgraph / statehitl bytes written (wchar): above 1 means statehitl writes less."""
        if self.statehitl is None or self.langgraph is None or self.statehitl.wchar <= 0:
            return None
        return self.langgraph.wchar / self.statehitl.wchar


def warm_up(workdir: Path, sides: list[str], overhead: ProcIO, durability: str | None) -> None:
    """Two unrecorded turns per side, load included, so lazy imports (and their .pyc writes) happen here."""
    if "statehitl" in sides:
        run_statehitl(2, workdir / "warmup-statehitl", overhead)
    if "langgraph" in sides:
        run_langgraph(2, workdir / "warmup-langgraph.sqlite", overhead, durability)


def bench(turn_counts: tuple[int, ...], workdir: Path, sides: list[str], durability: str | None) -> list[Point]:
    overhead = probe_overhead()
    warm_up(workdir, sides, overhead, durability)
    points = []
    for i, turns in enumerate(turn_counts):
        results: dict[str, SideResult] = {}
        # Alternate which side goes first, so slow drift (writeback, page cache) hits both alike.
        for side in sides if i % 2 == 0 else list(reversed(sides)):
            print(f"  running {side}, T={turns} ...", file=sys.stderr)
            if side == "statehitl":
                results[side] = run_statehitl(turns, workdir / f"statehitl-T{turns}", overhead)
            else:
                results[side] = run_langgraph(turns, workdir / f"langgraph-T{turns}.sqlite", overhead, durability)
        point = Point(turns, results.get("statehitl"), results.get("langgraph"))
        points.append(point)
        ratio = "n/a" if point.ratio is None else f"{point.ratio:.0f}x"
        print(f"  done: T={turns}: written ratio langgraph/statehitl = {ratio}", file=sys.stderr)
    return points


def fmt_bytes(n: float | None) -> str:
    """SI units (kB = 1000 B), as sqlite and `ls -l --si` print them."""
    if n is None:
        return "n/a"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}" if abs(n) < 100 * scale else f"{n / scale:.0f} {unit}"
    return f"{n:.0f} B"


def cell(result: SideResult | None, get: Callable[[SideResult], Any], show: Callable[[Any], str] = str) -> str:
    return "n/a" if result is None else show(get(result))


def writes_table(points: list[Point]) -> str:
    lines = [
        "| turns | conversation (JSON) | statehitl written | per turn | statehitl storage bytes "
        "| LangGraph written | LangGraph rows serialized | LangGraph sqlite + WAL "
        "| **ratio LangGraph / statehitl** | statehitl ms/turn | LangGraph ms/turn |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for p in points:
        sh, lg = p.statehitl, p.langgraph
        any_side = sh or lg
        lines.append(
            "| "
            + " | ".join(
                [
                    str(p.turns),
                    cell(any_side, lambda r: r.state_json_bytes, fmt_bytes),
                    cell(sh, lambda r: r.wchar, fmt_bytes),
                    cell(sh, lambda r: r.wchar / r.turns, fmt_bytes),
                    cell(sh, lambda r: r.extra["storage_bytes_written"], fmt_bytes),
                    cell(lg, lambda r: r.wchar, fmt_bytes),
                    cell(lg, lambda r: r.extra["serialized_bytes"], fmt_bytes),
                    cell(lg, lambda r: r.extra["db_plus_wal_at_end"], fmt_bytes),
                    "n/a" if p.ratio is None else f"**{p.ratio:.0f}x**",
                    cell(sh, lambda r: r.median_turn_ms, fmt),
                    cell(lg, lambda r: r.median_turn_ms, fmt),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def reads_table(points: list[Point]) -> str:
    lines = [
        "| turns | statehitl checkpoints (n) | records read | worst of any checkpoint | bound ⌊log2 n⌋+1 "
        "| lists | storage bytes read | statehitl read (rchar) | LangGraph checkpoints | LangGraph read (rchar) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for p in points:
        sh, lg = p.statehitl, p.langgraph
        lines.append(
            "| "
            + " | ".join(
                [
                    str(p.turns),
                    cell(sh, lambda r: r.checkpoints),
                    cell(sh, lambda r: r.extra["load_reads"]),
                    cell(sh, lambda r: r.extra["worst_reads_any_checkpoint"]),
                    cell(sh, lambda r: r.extra["load_read_bound"]),
                    cell(sh, lambda r: r.extra["load_lists"]),
                    cell(sh, lambda r: r.extra["load_bytes_read"], fmt_bytes),
                    cell(sh, lambda r: r.load_rchar, fmt_bytes),
                    cell(lg, lambda r: r.checkpoints),
                    cell(lg, lambda r: r.load_rchar, fmt_bytes),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def environment(
    workdir: Path, sides: list[str], turn_counts: tuple[int, ...], durability: str | None
) -> dict[str, Any]:
    env: dict[str, Any] = {
        **base_environment(),
        "workdir": str(workdir),
        "turn_counts": list(turn_counts),
        "text_chars_per_message": TEXT_CHARS,
        "messages_per_turn": 1 + len(NODES),
        "byte_counter": "/proc/self/io rchar/wchar deltas (syscall bytes, before the page cache)",
    }
    if "statehitl" in sides:
        env["statehitl"] = statehitl_version()
        env["statehitl_durability"] = "default (step)"
    if "langgraph" in sides:
        import importlib.metadata

        env["langgraph"] = langgraph_version()
        env["langgraph_checkpoint"] = importlib.metadata.version("langgraph-checkpoint")
        env["langgraph_checkpoint_sqlite"] = importlib.metadata.version("langgraph-checkpoint-sqlite")
        env["langgraph_durability"] = durability or "default (async)"
        env["langgraph_sqlite"] = {**langgraph_sqlite_pragmas(workdir), **sqlite_layout_pragmas(workdir)}
    return env


def sqlite_layout_pragmas(workdir: Path) -> dict[str, Any]:
    """Page size, WAL auto-checkpoint and mmap size: what turns LangGraph's rows into written bytes.

    mmap_size must be 0 for wchar to see every database write (writes through a memory map are not
    write syscalls); it is sqlite's compiled default and SqliteSaver does not change it.
    """
    with contextlib.ExitStack() as stack:
        saver = open_sqlite_saver(workdir / "langgraph-pragma-probe.sqlite", stack)
        saver.setup()
        return {
            name: saver.conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_size", "wal_autocheckpoint", "mmap_size")
        }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    quick_help = f"T = {', '.join(map(str, TURNS_QUICK))} only"
    return bench_arguments(__doc__, RESULTS_PATH, quick_help).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not Path("/proc/self/io").exists():
        print("bench_storage.py needs Linux's /proc/self/io to count bytes written and read", file=sys.stderr)
        return 2
    turn_counts = TURNS_QUICK if args.quick else TURNS_FULL
    sides = [args.only] if args.only else list(SIDES)

    with scratch_dir(args.tmpdir) as workdir:
        env = environment(workdir, sides, turn_counts, args.lg_durability)
        points = bench(turn_counts, workdir, sides, args.lg_durability)

    tables = {"writes": writes_table(points), "reads": reads_table(points)}
    print("### Bytes written for a thread of T turns (and time per turn)\n")
    print(tables["writes"])
    print("\n### Loading the latest state on a fresh checkpointer / sqlite connection\n")
    print(tables["reads"])
    env["loadavg_at_end"] = os.getloadavg()
    payload = {
        "environment": env,
        "points": [
            {
                "turns": p.turns,
                "ratio_written": p.ratio,
                **{
                    side: None if r is None else {**asdict(r), "median_turn_ms": r.median_turn_ms}
                    for side, r in (("statehitl", p.statehitl), ("langgraph", p.langgraph))
                },
            }
            for p in points
        ],
        "tables_markdown": tables,
    }
    write_results(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
