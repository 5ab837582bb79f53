"""Storage benchmark: bytes written and read by statehitl vs LangGraph on an append-only conversation.

Run from the repository root:

    uv run --group bench python benchmarks/bench_storage.py          # T = 10, 100, 200 turns
    uv run --group bench python benchmarks/bench_storage.py --quick  # T = 10, 50

Both frameworks run the same conversation in the same process: each turn invokes the graph with one
user message, and the nodes `model`, `tool` and `answer` each append one more message, so a turn
adds four messages of about 200 bytes of text. statehitl stores the thread on
`Checkpointer(CountingStorage(FileStorage(dir)))` (records compressed, its default), LangGraph on
`SqliteSaver` over a sqlite file, each with its default durability. Bytes written are measured the
same way for both: the growth of `wchar` in /proc/self/io (bytes passed to write syscalls) over the
T turns. Loading the latest state is measured in a fresh process-equivalent (a new checkpointer / a
new sqlite connection). statehitl also runs once more per length with
`Checkpointer(..., compress=False)`, plain JSON records (a third table). See benchmarks/README.md
for every column. Linux only (/proc/self/io).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.cli import bench_arguments
from harness.environment import base_environment, scratch_dir, version, write_results
from harness.graphs import langgraph_sqlite_pragmas, probe_connection
from harness.peers import Peer, fmt
from storage_workload import NODES, TEXT_CHARS, ProcIO, SideResult, probe_overhead, run_langgraph, run_statehitl

TURNS_FULL = (10, 100, 200)
TURNS_QUICK = (10, 50)
PEER = Peer("langgraph")


# --------------------------------------------------------------------------- orchestration


@dataclass
class Point:
    """Both sides at one thread length."""

    turns: int
    statehitl: SideResult | None
    langgraph: SideResult | None
    uncompressed: SideResult | None = None
    """statehitl with ``compress=False``."""

    @property
    def ratio(self) -> float | None:
        """langgraph / statehitl bytes written (wchar): above 1 means statehitl writes less."""
        return _ratio(self.langgraph, self.statehitl)

    @property
    def uncompressed_ratio(self) -> float | None:
        """langgraph / uncompressed statehitl bytes written (wchar)."""
        return _ratio(self.langgraph, self.uncompressed)


def _ratio(peer: SideResult | None, ours: SideResult | None) -> float | None:
    if peer is None or ours is None or ours.wchar <= 0:
        return None
    return peer.wchar / ours.wchar


def warm_up(workdir: Path, sides: list[str], overhead: ProcIO, durability: str | None) -> None:
    """Two unrecorded turns per side, load included, so lazy imports (and their .pyc writes) happen here."""
    if "statehitl" in sides:
        run_statehitl(2, workdir / "warmup-statehitl", overhead)
        run_statehitl(2, workdir / "warmup-statehitl-uncompressed", overhead, compress=False)
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
                print(f"  running statehitl (compress=False), T={turns} ...", file=sys.stderr)
                results["uncompressed"] = run_statehitl(turns, workdir / f"statehitl-uncompressed-T{turns}",
                                                        overhead, compress=False)
            else:
                results[side] = run_langgraph(turns, workdir / f"langgraph-T{turns}.sqlite", overhead, durability)
        point = Point(turns, results.get("statehitl"), results.get("langgraph"), results.get("uncompressed"))
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


def ratio_text(ratio: float | None, bold: bool = False) -> str:
    text = "n/a" if ratio is None else f"{ratio:.0f}x"
    return f"**{text}**" if bold and ratio is not None else text


def per_state_byte(x: float) -> str:
    return f"{x:.2f}x"


def md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def md_table(columns: list[str], rows: Iterable[list[str]]) -> str:
    """A markdown table of right-aligned columns: the header, its alignment row, one line per row."""
    return "\n".join([md_row(columns), md_row(["---:"] * len(columns)), *map(md_row, rows)])


def both(results: tuple[SideResult, SideResult], show: Callable[[SideResult], str]) -> str:
    """One cell for two runs of a row: ``default / uncompressed``."""
    return " / ".join(show(r) for r in results)


def writes_table(points: list[Point]) -> str:
    columns = ["turns", "conversation (JSON)", "statehitl written", "per turn", "statehitl storage bytes",
               "per step", "target per step", "LangGraph written", "LangGraph rows serialized",
               "LangGraph sqlite + WAL", "**ratio LangGraph / statehitl**", "statehitl ms/turn", "LangGraph ms/turn"]
    rows = (
        [
            str(p.turns),
            cell(p.statehitl or p.langgraph, lambda r: r.state_json_bytes, fmt_bytes),
            cell(p.statehitl, lambda r: r.wchar, fmt_bytes),
            cell(p.statehitl, lambda r: r.wchar / r.turns, fmt_bytes),
            cell(p.statehitl, lambda r: r.extra["storage_bytes_written"], fmt_bytes),
            cell(p.statehitl, lambda r: r.extra["storage_bytes_per_step"], fmt_bytes),
            cell(p.statehitl, lambda r: r.extra["step_target_bytes"], fmt_bytes),
            cell(p.langgraph, lambda r: r.wchar, fmt_bytes),
            cell(p.langgraph, lambda r: r.extra["serialized_bytes"], fmt_bytes),
            cell(p.langgraph, lambda r: r.extra["db_plus_wal_at_end"], fmt_bytes),
            ratio_text(p.ratio, bold=True),
            cell(p.statehitl, lambda r: r.median_turn_ms, fmt),
            cell(p.langgraph, lambda r: r.median_turn_ms, fmt),
        ]
        for p in points
    )
    return md_table(columns, rows)


def reads_table(points: list[Point]) -> str:
    columns = ["turns", "statehitl checkpoints", "warm: requests", "warm: bytes read", "cold: requests",
               "cold: bytes read", "cold: bytes read / state", "statehitl cold read (rchar)",
               "LangGraph checkpoints", "LangGraph cold read (rchar)"]
    rows = (
        [
            str(p.turns),
            cell(p.statehitl, lambda r: r.checkpoints),
            cell(p.statehitl, lambda r: r.extra["warm_requests"]),
            cell(p.statehitl, lambda r: r.extra["warm_bytes_read"], fmt_bytes),
            cell(p.statehitl, lambda r: r.extra["load_requests"]),
            cell(p.statehitl, lambda r: r.extra["load_bytes_read"], fmt_bytes),
            cell(p.statehitl, lambda r: r.extra["load_bytes_per_state_byte"], per_state_byte),
            cell(p.statehitl, lambda r: r.load_rchar, fmt_bytes),
            cell(p.langgraph, lambda r: r.checkpoints),
            cell(p.langgraph, lambda r: r.load_rchar, fmt_bytes),
        ]
        for p in points
    )
    return md_table(columns, rows)


def uncompressed_table(points: list[Point]) -> str:
    """statehitl with ``compress=False`` beside its default: what compression buys and costs."""
    columns = ["turns", "written (default)", "written (uncompressed)",
               "storage bytes per step (default / uncompressed)", "target per step",
               "ratio LangGraph / statehitl (uncompressed)", "cold: bytes read / state (default / uncompressed)",
               "ms/turn (default / uncompressed)"]
    rows = (
        [
            str(p.turns),
            fmt_bytes(sh.wchar),
            fmt_bytes(plain.wchar),
            both((sh, plain), lambda r: fmt_bytes(r.extra["storage_bytes_per_step"])),
            fmt_bytes(plain.extra["step_target_bytes"]),
            ratio_text(p.uncompressed_ratio),
            both((sh, plain), lambda r: per_state_byte(r.extra["load_bytes_per_state_byte"])),
            both((sh, plain), lambda r: fmt(r.median_turn_ms)),
        ]
        for p in points
        if (sh := p.statehitl) is not None and (plain := p.uncompressed) is not None
    )
    return md_table(columns, rows)


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
        env["statehitl"] = version("statehitl")
        env["statehitl_durability"] = "default (step)"
    if "langgraph" in sides:
        env["langgraph"] = version("langgraph")
        env["langgraph_checkpoint"] = version("langgraph-checkpoint")
        env["langgraph_checkpoint_sqlite"] = version("langgraph-checkpoint-sqlite")
        env["langgraph_durability"] = durability or "default (async)"
        env["langgraph_sqlite"] = {**langgraph_sqlite_pragmas(workdir), **sqlite_layout_pragmas(workdir)}
    return env


def sqlite_layout_pragmas(workdir: Path) -> dict[str, Any]:
    """Page size, WAL auto-checkpoint and mmap size: what turns LangGraph's rows into written bytes.

    mmap_size must be 0 for wchar to see every database write (writes through a memory map are not
    write syscalls); it is sqlite's compiled default and SqliteSaver does not change it.
    """
    with probe_connection(workdir) as conn:
        names = ("page_size", "wal_autocheckpoint", "mmap_size")
        return {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names}


def main(argv: list[str] | None = None) -> int:
    quick_help = f"T = {', '.join(map(str, TURNS_QUICK))} only"
    args = bench_arguments(__doc__, "storage.json", quick_help).parse_args(argv)
    if not Path("/proc/self/io").exists():
        print("bench_storage.py needs Linux's /proc/self/io to count bytes written and read", file=sys.stderr)
        return 2
    turn_counts = TURNS_QUICK if args.quick else TURNS_FULL
    sides = PEER.measured(args.only)

    with scratch_dir(args.tmpdir) as workdir:
        env = environment(workdir, sides, turn_counts, args.lg_durability)
        points = bench(turn_counts, workdir, sides, args.lg_durability)

    tables = {"writes": writes_table(points), "reads": reads_table(points), "uncompressed": uncompressed_table(points)}
    print("### Bytes written for a thread of T turns (and time per turn)\n")
    print(tables["writes"])
    print("\n### Loading the latest state on a fresh checkpointer / sqlite connection\n")
    print(tables["reads"])
    if "statehitl" in sides:
        print("\n### statehitl with `Checkpointer(..., compress=False)` (plain JSON records)\n")
        print(tables["uncompressed"])
    payload = {
        "environment": env,
        "points": [
            {
                "turns": p.turns,
                "ratio_written": p.ratio,
                "ratio_written_uncompressed": p.uncompressed_ratio,
                **{
                    side: None if r is None else {**asdict(r), "median_turn_ms": r.median_turn_ms}
                    for side, r in (("statehitl", p.statehitl), ("langgraph", p.langgraph),
                                    ("statehitl_uncompressed", p.uncompressed))
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
