"""Growth benchmark: what an operation costs as the thread, the graph, a list or the backlog grows.

Each row is measured at three or more sizes, statehitl beside LangGraph where LangGraph has the operation
(its SqliteSaver on a file, the durable saver it documents), and prints the growth exponent between the
two largest sizes: ``log(t2 / t1) / log(n2 / n1)``, 1 for a cost linear in the size, 0 for a flat one.

    python benchmarks/bench_growth.py            # full sizes (several minutes: it builds long threads)
    python benchmarks/bench_growth.py --quick    # small sizes, a smoke run
    python benchmarks/bench_growth.py --only statehitl

Rows (issue 41's targets in brackets):
- history page: ``get_state_history(config, limit=10)`` of a thread of N checkpoints [<= 5 ms, flat]
- history, whole: ``list(get_state_history(config))`` [linear, <= LangGraph]
- first get_state of a thread in a new process [<= 20 ms at any length]
- compile: a chain of N nodes [linear]
- a step on a list channel reduced by ``operator.add`` holding N bytes [<= 30 ms at 10 MB; bytes ~ what was added]
- answering one interrupt (``inbox.answer``) with N others pending, file store [<= 50 ms]
- listing N pending interrupts on DynamoDB Local: a page of 50, every page of 1,000, and the whole listing at
  once [<= 2 s at 10,000, paginated]
The thread builders use a tmpfs when there is one (``--tmpdir``): what grows here is CPU and reads, not fsyncs.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import operator
import statistics
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict

from harness.cli import bench_arguments
from harness.environment import base_environment, scratch_dir, write_results
from storage_workload import proc_io

FULL = {"history": (1_000, 3_000, 10_000), "compile": (1_000, 2_000, 5_000),
        "list": (1_000_000, 3_000_000, 10_000_000), "backlog": (1_000, 10_000, 50_000),
        "dynamodb": (1_000, 3_000, 10_000)}
QUICK = {"history": (100, 300, 1_000), "compile": (100, 300, 1_000), "list": (100_000, 300_000, 1_000_000),
         "backlog": (100, 300, 1_000), "dynamodb": (100, 300, 1_000)}
REPS = 3
ITEM = "x" * 90
"""One list item: with its JSON quotes and comma, about 100 bytes."""


@dataclass
class Growth:
    """One row: seconds by size for each side measured."""

    name: str
    unit: str
    sizes: tuple[int, ...]
    seconds: dict[str, list[float | None]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def exponent(self, side: str) -> float | None:
        values = self.seconds.get(side)
        if not values or values[-1] is None or values[-2] is None or values[-2] <= 0:
            return None
        return math.log(values[-1] / values[-2]) / math.log(self.sizes[-1] / self.sizes[-2])


def median(fn: Callable[[], float], reps: int = REPS) -> float:
    return statistics.median(fn() for _ in range(reps))


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- graphs


class Counter(TypedDict):
    n: int


class Listed(TypedDict):
    items: Annotated[list[str], operator.add]


def loop_graph(lib: Any, steps: int) -> Any:
    """A node that counts to ``steps``, one checkpoint per step."""
    g = lib.StateGraph(Counter)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(lib.START, "inc")
    g.add_conditional_edges("inc", lambda s: lib.END if s["n"] >= steps else "inc", ["inc", lib.END])
    return g


def appender(lib: Any) -> Any:
    g = lib.StateGraph(Listed)
    g.add_node("add", lambda s: {"items": [ITEM]})
    g.add_edge(lib.START, "add")
    g.add_edge("add", lib.END)
    return g


def chain(lib: Any, length: int) -> Any:
    g = lib.StateGraph(Counter)
    names = [f"n{i}" for i in range(length)]
    for name in names:
        g.add_node(name, lambda s: None)
    g.add_edge(lib.START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], lib.END)
    return g


def libs(only: str | None) -> dict[str, Any]:
    import types

    out: dict[str, Any] = {}
    if only in (None, "statehitl"):
        from statehitl.graph import END, START, StateGraph

        out["statehitl"] = types.SimpleNamespace(StateGraph=StateGraph, START=START, END=END)
    if only in (None, "langgraph"):
        from langgraph.graph import END, START, StateGraph

        out["langgraph"] = types.SimpleNamespace(StateGraph=StateGraph, START=START, END=END)
    return out


@contextlib.contextmanager
def saver(side: str, where: Path) -> Iterator[Any]:
    """A durable checkpointer: statehitl's file store, or LangGraph's SqliteSaver on a file."""
    if side == "statehitl":
        from statehitl.checkpoint import FileCheckpointer

        yield FileCheckpointer(where)
        return
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    where.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(where) + ".sqlite", check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def config(thread: str, limit: int = 10**6) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": limit}


# --------------------------------------------------------------------------- rows


def history_rows(sides: dict[str, Any], sizes: tuple[int, ...], work: Path) -> list[Growth]:
    page = Growth("get_state_history(limit=10)", "ms", sizes)
    whole = Growth("get_state_history, whole", "ms", sizes)
    first = Growth("first get_state in a new process", "ms", sizes)
    for side, lib in sides.items():
        for row in (page, whole, first):
            row.seconds[side] = []
        for size in sizes:
            where = work / f"history-{side}-{size}"
            with saver(side, where) as cp:
                app = loop_graph(lib, size).compile(checkpointer=cp)
                app.invoke({"n": 0}, config("t", size + 10))
                page.seconds[side].append(median(lambda app=app: timed(lambda: list(
                    app.get_state_history(config("t"), limit=10)))))
                whole.seconds[side].append(median(lambda app=app: timed(lambda: list(
                    app.get_state_history(config("t")))), reps=1 if size > 3000 else REPS))
            first.seconds[side].append(median(lambda side=side, where=where, size=size: cold_get_state(
                side, where, size)))
            print(f"  history {side} {size}: page {page.seconds[side][-1] * 1e3:.2f} ms, whole "
                  f"{whole.seconds[side][-1] * 1e3:.0f} ms, cold {first.seconds[side][-1] * 1e3:.1f} ms",
                  file=sys.stderr)
    return [page, whole, first]


COLD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {bench!r})
    import bench_growth as g
    side, where, size = {side!r}, g.Path({where!r}), {size}
    lib = g.libs(side)[side]
    with g.saver(side, where) as cp:
        app = g.loop_graph(lib, size).compile(checkpointer=cp)
        t0 = time.perf_counter()
        snapshot = app.get_state(g.config("t"))
        elapsed = time.perf_counter() - t0
    assert snapshot.values["n"] == size, snapshot.values
    print(elapsed)
""")


def cold_get_state(side: str, where: Path, size: int) -> float:
    """``get_state`` timed in a fresh interpreter: nothing of the thread known in the process."""
    code = COLD.format(bench=str(Path(__file__).parent), side=side, where=str(where), size=size)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def compile_rows(sides: dict[str, Any], sizes: tuple[int, ...]) -> list[Growth]:
    row = Growth("compile a chain of N nodes", "ms", sizes)
    for side, lib in sides.items():
        row.seconds[side] = [median(lambda lib=lib, size=size: timed(lambda: chain(lib, size).compile()))
                             for size in sizes]
    return [row]


def list_rows(sides: dict[str, Any], sizes: tuple[int, ...], work: Path) -> list[Growth]:
    row = Growth("a step on an operator.add list of N bytes", "ms", sizes)
    written = Growth("bytes written by that step (write syscalls)", "bytes", sizes)
    for side, lib in sides.items():
        row.seconds[side], written.seconds[side] = [], []
        for size in sizes:
            with saver(side, work / f"list-{side}-{size}") as cp:
                app = appender(lib).compile(checkpointer=cp)
                app.invoke({"items": items(size // 100)}, config("t"))
                steps: list[tuple[float, int]] = []
                for _ in range(REPS):
                    before = proc_io()
                    seconds = timed(lambda app=app: app.invoke({"items": []}, config("t")))
                    steps.append((seconds, proc_io().wchar - before.wchar))
                row.seconds[side].append(statistics.median(s for s, _ in steps))
                written.seconds[side].append(statistics.median(w for _, w in steps))
    return [row, written]


def items(count: int) -> list[str]:
    """``count`` different items of about 100 bytes (compression cannot make them nothing)."""
    return [f"{i:08d} {uuid.UUID(int=i * 2654435761 % 2**128).hex} {ITEM[:40]}" for i in range(count)]


def backlog_rows(sizes: tuple[int, ...], work: Path) -> list[Growth]:
    """statehitl only: LangGraph has no inbox."""
    from statehitl import inbox
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import END, START, StateGraph
    from statehitl.types import interrupt

    row = Growth("inbox.answer with N pending (files)", "ms", sizes)
    row.seconds["statehitl"] = []
    g = StateGraph(Counter)
    g.add_node("ask", lambda s: {"n": interrupt("ok?")})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    for size in sizes:
        cp = FileCheckpointer(work / f"backlog-{size}")
        app = g.compile(checkpointer=cp)
        ids = [app.invoke({"n": 0}, config(f"t{i}"))["__interrupt__"][0].id for i in range(size)]
        picks = iter(ids[:: max(1, size // REPS)])
        row.seconds["statehitl"].append(median(lambda cp=cp, picks=picks: timed(
            lambda: inbox.answer(cp, next(picks), "y"))))
        print(f"  backlog {size}: {row.seconds['statehitl'][-1] * 1e3:.1f} ms", file=sys.stderr)
    return [row]


def dynamodb_rows(sizes: tuple[int, ...]) -> list[Growth]:
    """statehitl only, on DynamoDB Local: what listing the pending interrupts costs, a page and whole.

    The table is filled as ``clone_threads`` says (batch writes of a real thread's items, one real index
    entry per thread): building 10,000 threads through the app one by one would take most of an hour.
    """
    import os

    from statehitl_checkpoint_dynamodb import DynamoDBStorage, create_table
    from statehitl_checkpoint_dynamodb.local import DynamoDBLocal
    from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

    from statehitl import inbox
    from statehitl.checkpoint import Checkpointer
    from statehitl.graph import END, START, StateGraph
    from statehitl.types import interrupt

    os.environ.update(DUMMY_AWS_ENV)
    page = Growth("inbox.pending_page(limit=50), a page from the middle (DynamoDB Local)", "ms", sizes)
    paged = Growth("every inbox.pending_page(limit=1000), the whole listing paged (DynamoDB Local)", "ms", sizes)
    whole = Growth("inbox.pending, the whole listing at once (DynamoDB Local)", "ms", sizes)
    for row in (page, paged, whole):
        row.seconds["statehitl"] = []
    g = StateGraph(Counter)
    g.add_node("ask", lambda s: {"n": interrupt("ok?")})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    root = Path(__file__).resolve().parent.parent
    with DynamoDBLocal(root / ".cache" / "dynamodb-local") as endpoint:
        table = f"growth-{uuid.uuid4().hex[:8]}"
        create_table({"endpoint_url": endpoint, "region_name": "us-east-1"}, table)
        storage = DynamoDBStorage(table, region_name="us-east-1", endpoint_url=endpoint)
        cp = Checkpointer(storage)
        g.compile(checkpointer=cp).invoke({"n": 0}, config("template"))
        made = 0
        for size in sizes:
            clone_threads(storage, range(made, size))
            made = size
            middle = inbox.pending_page(cp, limit=size // 2).next_cursor
            inbox.pending(cp)  # a warm-up: DynamoDB Local's first scan of new items runs cold (JIT, page cache)
            page.seconds["statehitl"].append(median(lambda middle=middle: timed(
                lambda: inbox.pending_page(cp, limit=50, cursor=middle))))
            paged.seconds["statehitl"].append(median(lambda size=size: timed(lambda: every_page(cp, 1000, size + 1))))
            whole.seconds["statehitl"].append(median(lambda: timed(lambda: inbox.pending(cp))))
            print(f"  dynamodb {size}: page {page.seconds['statehitl'][-1] * 1e3:.1f} ms, "
                  f"paged {paged.seconds['statehitl'][-1]:.2f} s, whole {whole.seconds['statehitl'][-1]:.2f} s",
                  file=sys.stderr)
    return [page, paged, whole]


def every_page(cp: Any, limit: int, expected: int) -> None:
    """Page through the whole inbox, checking it lists every pending interrupt once."""
    from statehitl import inbox

    seen: set[str] = set()
    cursor = None
    while True:
        got = inbox.pending_page(cp, limit=limit, cursor=cursor)
        seen.update(item.id for item in got.items)
        if got.next_cursor is None:
            break
        cursor = got.next_cursor
    assert len(seen) == expected, (len(seen), expected)


def clone_threads(storage: Any, numbers: range) -> None:
    """Threads ``c<number>`` waiting on an interrupt, written with ``BatchWriteItem``: each gets a copy of every
    item of the thread ``template`` (its checkpoint records, the markers of its partitions, its interrupt's
    pointer: the same count and sizes, so the table the listing scans has the shape the app would leave)
    under its own keys, and an index entry of its own, encoded for it with an interrupt id of its own, which
    is all the listing reads. (The copied records still name ``template`` inside: the listing never reads
    them, a resume of a clone would refuse them.)"""
    import hashlib

    from statehitl.checkpoint.codec import decode_model, encode
    from statehitl.checkpoint.records import ThreadIndex

    client = storage.client
    every = scan_all(client, storage.table_name)
    template = [item for item in every if "template" in item["pk"]["S"] + item["sk"]["S"]]
    pointers = [item for item in every if item["pk"]["S"].startswith("ids/")]
    entry_item = next(i for i in template if i["pk"]["S"] == "index/template" and i["sk"]["S"] == "entry")
    entry = decode_model(ThreadIndex, "template entry", entry_item["d"]["B"], None, place="index/template/entry")
    requests = []
    for number in numbers:
        thread = f"c{number:06d}"
        digest = hashlib.sha256(thread.encode()).hexdigest()[:32]
        for item in template:
            copy = {**item, "pk": {"S": item["pk"]["S"].replace("template", thread)},
                    "sk": {"S": item["sk"]["S"].replace("template", thread)}}
            if "v" in item:
                copy["v"] = {"S": uuid.uuid4().hex}
            if item is entry_item:
                interrupt = entry.interrupts[0].model_copy(update={"id": f"v2:{digest}"})
                mine = entry.model_copy(update={"thread_id": thread, "interrupts": [interrupt]})
                copy["d"] = {"B": encode(mine, None, place=f"index/{thread}/entry")}
            requests.append({"PutRequest": {"Item": copy}})
        for item in pointers[:1]:  # the template's one interrupt pointer, as ids/<2 digits>/<digest>.v2
            copy = {**item, "pk": {"S": f"ids/{digest[:2]}"}, "sk": {"S": f"{digest}.v2"}, "v": {"S": uuid.uuid4().hex}}
            requests.append({"PutRequest": {"Item": copy}})
    for start in range(0, len(requests), 25):
        batch = {storage.table_name: requests[start : start + 25]}
        while batch:
            batch = client.batch_write_item(RequestItems=batch).get("UnprocessedItems") or {}


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        answer = client.scan(**kwargs)
        items.extend(answer["Items"])
        if "LastEvaluatedKey" not in answer:
            return items
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


# --------------------------------------------------------------------------- output


def table(rows: list[Growth]) -> str:
    lines = ["| what | unit | size | statehitl | langgraph |", "| --- | --- | ---: | ---: | ---: |"]
    for row in rows:
        for i, size in enumerate(row.sizes):
            cells = []
            for side in ("statehitl", "langgraph"):
                value = row.seconds.get(side, [None] * len(row.sizes))[i]
                cells.append("n/a" if value is None else f"{value:.0f}" if row.unit == "bytes"
                             else f"{value * 1e3:.2f}")
            lines.append(f"| {row.name} | {row.unit} | {size:,} | {cells[0]} | {cells[1]} |")
        exponents = [row.exponent(side) for side in ("statehitl", "langgraph")]
        shown = ["n/a" if e is None else f"{e:.2f}" for e in exponents]
        lines.append(f"| {row.name} | growth exponent | | {shown[0]} | {shown[1]} |")
    return "\n".join(lines)


def main() -> int:
    parser = bench_arguments(__doc__.split("\n\n")[0], "growth.json")
    parser.add_argument("--rows", default="history,compile,list,backlog,dynamodb",
                        help="which rows, comma-separated (default: all)")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    wanted = args.rows.split(",")
    sides = libs(args.only)
    rows: list[Growth] = []
    with scratch_dir(args.tmpdir) as work:
        if "history" in wanted:
            rows += history_rows(sides, sizes["history"], work)
        if "compile" in wanted:
            rows += compile_rows(sides, sizes["compile"])
        if "list" in wanted:
            rows += list_rows(sides, sizes["list"], work)
        if "backlog" in wanted and args.only != "langgraph":
            rows += backlog_rows(sizes["backlog"], work)
        if "dynamodb" in wanted and args.only != "langgraph":
            rows += dynamodb_rows(sizes["dynamodb"])
    print(table(rows))
    write_results(args.out, {"environment": base_environment(), "rows": [
        {"name": r.name, "unit": r.unit, "sizes": list(r.sizes), "seconds": r.seconds,
         "exponents": {side: r.exponent(side) for side in r.seconds}} for r in rows]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
