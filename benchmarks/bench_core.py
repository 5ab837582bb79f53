"""Core overhead benchmark: statehitl vs LangGraph, side by side in one run.

Run from the repository root:

    uv run --group bench python benchmarks/bench_core.py          # full run
    uv run --group bench python benchmarks/bench_core.py --quick  # smoke run

Both frameworks are measured in the same process, on the same machine, with the
same graph shapes, so the ratio column is meaningful even when absolute numbers
drift between machines.  See benchmarks/README.md for what every row measures.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import itertools
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from pydantic import BaseModel

if TYPE_CHECKING:  # LangGraph stays a lazy import so `--only statehitl` never loads it
    from langchain_core.runnables import RunnableConfig

CHAIN_LEN = 100
"""Nodes in the linear chain; per-step time = one invoke / CHAIN_LEN."""

STEP_LIMIT = 250
"""Comfortably above CHAIN_LEN so neither framework stops early."""

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "core.json"

Variant = Literal["none", "memory", "file", "file-sync"]
VARIANTS: tuple[Variant, ...] = ("none", "memory", "file", "file-sync")
STRICT_VARIANT: Variant = "file-sync"
"""Extra row: both sides made to persist every step before running the next.

The defaults differ in what they fsync: statehitl's "step" durability writes every
step but fsyncs only the checkpoint invoke returns on, while LangGraph's SqliteSaver
(WAL, synchronous=FULL) fsyncs every commit, on a background thread under its default
"async" durability. Passing durability="sync" to both gives a like-for-like row.
"""

VARIANT_LABELS: dict[Variant, str] = {
    "none": "no checkpointer",
    "memory": "in-memory checkpointer",
    "file": "file / sqlite checkpointer",
    "file-sync": "file / sqlite checkpointer, durability=sync on both",
}

Trial = Callable[[str], float]
"""Runs one repetition on the given fresh thread id and returns the timed seconds.

A trial times itself (rather than being timed from outside) so that setup that
is not part of the measured definition -- e.g. building the first graph of a
round trip -- can stay out of the clock.
"""


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class Config:
    """Repetition counts; `--quick` shrinks them so a smoke run takes seconds."""

    chain_warmup: int = 3
    chain_reps: int = 15
    file_chain_reps: int = 25  # disk-bound rows are noisier, so they get more reps
    roundtrip_warmup: int = 3
    roundtrip_reps: int = 40
    import_runs: int = 7
    lg_durability: str | None = None  # None = LangGraph's own default ("async")

    @classmethod
    def quick(cls, lg_durability: str | None) -> Config:
        return cls(1, 3, 3, 1, 5, 3, lg_durability)


@dataclass
class Row:
    """One line of the results table; `unit` tells how to read both numbers."""

    name: str
    unit: str
    statehitl: float | None
    langgraph: float | None
    statehitl_samples: list[float] = field(default_factory=list)
    langgraph_samples: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """langgraph / statehitl: above 1 means statehitl is faster."""
        if self.statehitl is None or self.langgraph is None or self.statehitl <= 0:
            return None
        return self.langgraph / self.statehitl


# --------------------------------------------------------------------------- timing helpers


def settle_disk() -> None:
    """Write back what earlier rows left dirty before timing more durable writes (untimed).

    ext4 in its default data=ordered mode makes a journal commit wait for the writeback of other
    files' data, and a new log's first fdatasync needs a commit. Pages that earlier rows left dirty
    (the chains' unsynced writes, the peer's session files, an earlier run) slowed statehitl's round
    trip from 1.9 to 2.6-2.7 ms in 2 runs of 3, while LangGraph's stayed at 8 ms. Every row that
    times writes now starts both sides from the same quiet disk.
    """
    os.sync()


def run_interleaved(trials: dict[str, Trial], warmup: int, reps: int, label: str) -> dict[str, list[float]]:
    """Warm every side up, then alternate sides rep by rep; each trial gets a fresh thread id.

    Interleaving (and flipping which side goes first each rep) makes background
    load and disk writeback hit both sides alike, so the ratio stays meaningful
    on a shared or noisy machine. Fresh thread ids keep every rep on an empty
    history. The collector runs as in real use: enabled, never forced between
    reps. A forced full collection before each rep released memory that the rep
    then faulted back in (measured: identical call counts, every function ~1.5x
    slower, +0.5-1 ms per round trip for both frameworks), a harness cost that
    squeezed every ratio towards 1.
    """
    settle_disk()
    for side, trial in trials.items():
        for i in range(warmup):
            trial(f"{label}-{side}-warm-{i}-{uuid.uuid4().hex[:8]}")
    samples: dict[str, list[float]] = {side: [] for side in trials}
    order = list(trials)
    for i in range(reps):
        for side in order if i % 2 == 0 else reversed(order):
            samples[side].append(trials[side](f"{label}-{side}-{i}-{uuid.uuid4().hex[:8]}"))
    return samples


def median_or_none(samples: list[float]) -> float | None:
    return statistics.median(samples) if samples else None


def add_linear_chain(graph: Any, node: Callable[..., None], start: Any, end: Any, length: int = CHAIN_LEN) -> None:
    """START -> n0 -> ... -> n{length-1} -> END; both builders share this add_node/add_edge API."""
    names = [f"n{i}" for i in range(length)]
    for name in names:
        graph.add_node(name, node)
    graph.add_edge(start, names[0])
    for a, b in itertools.pairwise(names):
        graph.add_edge(a, b)
    graph.add_edge(names[-1], end)


# --------------------------------------------------------------------------- statehitl side


def statehitl_version() -> str:
    try:
        return importlib.metadata.version("statehitl")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class SHState(BaseModel):
    """statehitl's state: the tiny one-int pydantic model its API asks for.

    Module-level, like LGState, so rebuilding a graph for the resume never pays
    for pydantic schema building that a real process does once at import.
    """

    n: int = 0


def statehitl_checkpointer(variant: Variant, workdir: Path) -> Any:
    from statehitl.checkpoint import FileCheckpointer, MemoryCheckpointer

    if variant == "none":
        return None
    if variant == "memory":
        return MemoryCheckpointer()
    # "file" and "file-sync" share the backend; they differ only in invoke's durability.
    return FileCheckpointer(workdir / "statehitl-chain")


def statehitl_chain_trial(variant: Variant, workdir: Path) -> Trial:
    """Compile the 100-node no-op chain once; each trial is one timed invoke."""
    from statehitl.graph import END, START, StateGraph

    def noop(state: SHState) -> None:
        return None

    g = StateGraph(SHState)
    add_linear_chain(g, noop, START, END)
    app = g.compile(checkpointer=statehitl_checkpointer(variant, workdir), step_limit=STEP_LIMIT)
    kwargs: dict[str, Any] = {"durability": "sync"} if variant == STRICT_VARIANT else {}

    def trial(thread_id: str) -> float:
        t0 = time.perf_counter()
        result = app.invoke({"n": 0}, thread_id=thread_id, **kwargs)
        elapsed = time.perf_counter() - t0
        assert result.stop_reason == "end", result.stop_reason
        assert result.state.n == 0
        return elapsed

    return trial


def statehitl_review_app(ckpt_dir: Path) -> Any:
    """Build and compile prepare -> review(interrupt) -> END on a new FileCheckpointer."""
    from statehitl.checkpoint import FileCheckpointer

    return statehitl_review_graph().compile(checkpointer=FileCheckpointer(ckpt_dir), step_limit=STEP_LIMIT)


def statehitl_review_graph() -> Any:
    """prepare -> review(interrupt) -> END, not yet compiled (bench_backends compiles it on other stores)."""
    from statehitl.graph import END, START, StateGraph

    def prepare(state: SHState) -> None:
        return None

    def review(state: SHState, ctx: Any) -> dict[str, int]:
        answer = ctx.interrupt("approval", reason={"n": state.n})
        return {"n": 1 if answer == "y" else 0}

    g = StateGraph(SHState)
    g.add_node("prepare", prepare)
    g.add_node("review", review)
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "review")
    g.add_edge("review", END)
    return g


def statehitl_roundtrip_trial(workdir: Path) -> Trial:
    """Invoke to the interrupt, then resume on a freshly built app + checkpointer.

    The first app stands for the long-lived process that hit the interrupt, so
    building it is outside the clock; rebuilding for the resume is inside it,
    because that is what a new process (or request handler) has to pay.
    """
    ckpt_dir = workdir / "statehitl-roundtrip"
    first = statehitl_review_app(ckpt_dir)

    def trial(thread_id: str) -> float:
        t0 = time.perf_counter()
        paused = first.invoke({"n": 0}, thread_id=thread_id)
        resumed_app = statehitl_review_app(ckpt_dir)
        answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in paused.interrupts]
        done = resumed_app.invoke(answers, thread_id=thread_id)
        elapsed = time.perf_counter() - t0
        assert paused.stop_reason == "interrupt", paused.stop_reason
        assert len(paused.interrupts) == 1
        assert done.stop_reason == "end", done.stop_reason
        assert done.state.n == 1
        return elapsed

    return trial


# --------------------------------------------------------------------------- LangGraph side


class LGState(TypedDict):
    """LangGraph's idiomatic (and fastest) state schema: a TypedDict, no validation."""

    n: int


def langgraph_version() -> str:
    return importlib.metadata.version("langgraph")


def open_sqlite_saver(path: Path, stack: contextlib.ExitStack) -> Any:
    """SqliteSaver on a file, exactly as LangGraph's docs set it up (its default pragmas)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    stack.callback(conn.close)
    return SqliteSaver(conn)


def langgraph_checkpointer(variant: Variant, workdir: Path, stack: contextlib.ExitStack) -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    if variant == "none":
        return None
    if variant == "memory":
        return InMemorySaver()
    # "file" and "file-sync" share the backend; they differ only in invoke's durability.
    return open_sqlite_saver(workdir / "langgraph-chain.sqlite", stack)


def langgraph_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": STEP_LIMIT}


def langgraph_invoke_kwargs(cfg: Config, has_checkpointer: bool, strict: bool = False) -> dict[str, Any]:
    """Pass `durability` only when asked to, so the default rows use LangGraph's default."""
    if not has_checkpointer:
        return {}  # LangGraph warns that durability has no effect without a checkpointer
    if strict:
        return {"durability": "sync"}
    return {} if cfg.lg_durability is None else {"durability": cfg.lg_durability}


def langgraph_chain_trial(variant: Variant, workdir: Path, stack: contextlib.ExitStack, cfg: Config) -> Trial:
    """Compile the 100-node no-op chain once; each trial is one timed invoke."""
    from langgraph.graph import END, START, StateGraph

    def noop(state: LGState) -> None:
        return None

    g = StateGraph(LGState)
    add_linear_chain(g, noop, START, END)
    checkpointer = langgraph_checkpointer(variant, workdir, stack)
    app = g.compile(checkpointer=checkpointer)
    kwargs = langgraph_invoke_kwargs(cfg, checkpointer is not None, strict=variant == STRICT_VARIANT)

    def trial(thread_id: str) -> float:
        t0 = time.perf_counter()
        result = app.invoke({"n": 0}, langgraph_config(thread_id), **kwargs)
        elapsed = time.perf_counter() - t0
        assert result == {"n": 0}, result
        return elapsed

    return trial


def langgraph_review_app(saver: Any) -> Any:
    """Build and compile prepare -> review(interrupt) -> END on the given saver."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def prepare(state: LGState) -> None:
        return None

    def review(state: LGState) -> dict[str, int]:
        answer = interrupt({"name": "approval", "reason": {"n": state["n"]}})
        return {"n": 1 if answer == "y" else 0}

    g = StateGraph(LGState)
    g.add_node("prepare", prepare)
    g.add_node("review", review)
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=saver)


def langgraph_roundtrip_trial(workdir: Path, stack: contextlib.ExitStack, cfg: Config) -> Trial:
    """Invoke to the interrupt, then resume on a fresh app + fresh sqlite connection.

    Same clock boundaries as the statehitl trial: the first app is prebuilt;
    the resume side opens a new connection, a new SqliteSaver (which re-runs its
    lazy schema setup, as a new process would), and rebuilds the graph.
    """
    from langgraph.types import Command

    db_path = workdir / "langgraph-roundtrip.sqlite"
    first = langgraph_review_app(open_sqlite_saver(db_path, stack))
    kwargs = langgraph_invoke_kwargs(cfg, True)

    def trial(thread_id: str) -> float:
        config = langgraph_config(thread_id)
        with contextlib.ExitStack() as resume_stack:
            t0 = time.perf_counter()
            paused = first.invoke({"n": 0}, config, **kwargs)
            resumed_app = langgraph_review_app(open_sqlite_saver(db_path, resume_stack))
            done = resumed_app.invoke(Command(resume="y"), config, **kwargs)
            elapsed = time.perf_counter() - t0
        assert len(paused["__interrupt__"]) == 1, paused
        assert done == {"n": 1}, done
        return elapsed

    return trial


def langgraph_sqlite_pragmas(workdir: Path) -> dict[str, Any]:
    """What journal/sync mode LangGraph's SqliteSaver actually ends up with here.

    Read from a saver after its own setup() so the report states the real mode
    rather than an assumption (SqliteSaver sets WAL; it leaves `synchronous` at
    sqlite's compiled default).
    """
    with contextlib.ExitStack() as stack:
        saver = open_sqlite_saver(workdir / "langgraph-pragma-probe.sqlite", stack)
        saver.setup()
        journal = saver.conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = saver.conn.execute("PRAGMA synchronous").fetchone()[0]
    names = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
    return {
        "sqlite_version": sqlite3.sqlite_version,
        "journal_mode": journal,
        "synchronous": names.get(sync, str(sync)),
    }


# --------------------------------------------------------------------------- cold start


IMPORT_SNIPPETS = {
    "baseline": "pass",
    "statehitl": "import statehitl; from statehitl.graph import StateGraph",
    "langgraph": "import langgraph.graph",
}


def bytecode_cache_env(cache_dir: Path) -> dict[str, str]:
    """Environment for the import subprocesses: .pyc files on, kept in a private dir.

    uv installs packages without compiling them and some environments set
    PYTHONDONTWRITEBYTECODE, so by default every fresh interpreter would
    re-compile every module from source, which measures the compiler, not the
    import. A private PYTHONPYCACHEPREFIX gives both sides a warm bytecode cache
    without writing __pycache__ dirs into src/ or the venv.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache_dir)
    return env


def time_subprocess(code: str, env: dict[str, str]) -> float:
    """Wall time of a fresh interpreter (this venv's python) running `code`."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"`python -c {code!r}` failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def measure_cold_imports(
    runs: int, which: list[str], cache_dir: Path, snippets: dict[str, str] = IMPORT_SNIPPETS
) -> dict[str, list[float]]:
    """Interleave the snippets so slow drift (page cache, CPU clocks) hits all equally.

    One unrecorded round first fills the bytecode cache, so every recorded run
    is a normal interpreter start with .pyc files and a warm page cache.
    """
    env = bytecode_cache_env(cache_dir)
    names = ["baseline", *which]
    for name in names:
        time_subprocess(snippets[name], env)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        for name in names:
            samples[name].append(time_subprocess(snippets[name], env))
    return samples


def cold_import_ms(
    runs: int, which: list[str], workdir: Path, snippets: dict[str, str] = IMPORT_SNIPPETS
) -> tuple[dict[str, list[float]], float]:
    """Cold import times (ms) of each of `which`, minus the median `python -c pass`; and that median (ms)."""
    raw = measure_cold_imports(runs, which, workdir / "pycache", snippets)
    baseline = statistics.median(raw["baseline"])
    return {name: [(s - baseline) * 1e3 for s in raw[name]] for name in which}, baseline * 1e3


# --------------------------------------------------------------------------- orchestration


def to_us_per_step(samples: list[float]) -> list[float]:
    return [s / CHAIN_LEN * 1e6 for s in samples]


def to_ms(samples: list[float]) -> list[float]:
    return [s * 1e3 for s in samples]


def bench_chains(cfg: Config, workdir: Path, sides: list[str]) -> list[Row]:
    rows = []
    for variant in VARIANTS:
        with contextlib.ExitStack() as stack:
            trials: dict[str, Trial] = {}
            if "statehitl" in sides:
                trials["statehitl"] = statehitl_chain_trial(variant, workdir)
            if "langgraph" in sides:
                trials["langgraph"] = langgraph_chain_trial(variant, workdir, stack, cfg)
            reps = cfg.chain_reps if variant in ("none", "memory") else cfg.file_chain_reps
            raw = run_interleaved(trials, cfg.chain_warmup, reps, f"chain-{variant}")
        samples = {side: to_us_per_step(raw.get(side, [])) for side in ("statehitl", "langgraph")}
        rows.append(make_row(f"{CHAIN_LEN}-node chain, {VARIANT_LABELS[variant]}", "µs/step", samples))
        progress(rows[-1])
    return rows


def bench_roundtrip(cfg: Config, workdir: Path, sides: list[str]) -> Row:
    with contextlib.ExitStack() as stack:
        trials: dict[str, Trial] = {}
        if "statehitl" in sides:
            trials["statehitl"] = statehitl_roundtrip_trial(workdir)
        if "langgraph" in sides:
            trials["langgraph"] = langgraph_roundtrip_trial(workdir, stack, cfg)
        raw = run_interleaved(trials, cfg.roundtrip_warmup, cfg.roundtrip_reps, "rt")
    samples = {side: to_ms(raw.get(side, [])) for side in ("statehitl", "langgraph")}
    row = make_row("interrupt → resume round trip (file / sqlite)", "ms", samples)
    progress(row)
    return row


def bench_cold_start(cfg: Config, workdir: Path, sides: list[str]) -> tuple[Row, float]:
    """Returns the row and the median `python -c pass` time (ms) that was subtracted."""
    ms, baseline_ms = cold_import_ms(cfg.import_runs, sides, workdir)
    samples = {side: ms.get(side, []) for side in ("statehitl", "langgraph")}
    row = make_row("cold import (fresh interpreter, minus `python -c pass`)", "ms", samples)
    progress(row)
    return row, baseline_ms


def make_row(name: str, unit: str, samples: dict[str, list[float]]) -> Row:
    return Row(
        name=name,
        unit=unit,
        statehitl=median_or_none(samples["statehitl"]),
        langgraph=median_or_none(samples["langgraph"]),
        statehitl_samples=samples["statehitl"],
        langgraph_samples=samples["langgraph"],
    )


def progress(row: Row) -> None:
    report_done(row.name, statehitl=row.statehitl, langgraph=row.langgraph)


def report_done(name: str, **medians: float | None) -> None:
    """One line to stderr per finished row, so a long run shows it is alive: `done: NAME: side=median ...`."""
    values = " ".join(f"{side}={fmt(median)}" for side, median in medians.items())
    print(f"  done: {name}: {values}", file=sys.stderr)


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def markdown_table(rows: list[Row]) -> str:
    lines = [
        "| benchmark | unit | statehitl | langgraph | ratio (langgraph / statehitl) |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        ratio = "n/a" if row.ratio is None else f"{row.ratio:.2f}x"
        lines.append(f"| {row.name} | {row.unit} | {fmt(row.statehitl)} | {fmt(row.langgraph)} | {ratio} |")
    return "\n".join(lines)


def base_environment() -> dict[str, Any]:
    """What every benchmark's JSON records first about where it ran; each script adds its own keys."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),  # a busy machine makes the absolute numbers noisy
    }


def write_results(path: Path, payload: dict[str, Any]) -> None:
    """Write a benchmark's JSON results to `path` (creating its directory) and say so on stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path}", file=sys.stderr)


def environment(workdir: Path, cfg: Config, sides: list[str]) -> dict[str, Any]:
    env: dict[str, Any] = {
        **base_environment(),
        "workdir": str(workdir),
        "chain_len": CHAIN_LEN,
        "step_limit": STEP_LIMIT,
        "config": asdict(cfg),
    }
    if "statehitl" in sides:
        env["statehitl"] = statehitl_version()
    if "langgraph" in sides:
        env["langgraph"] = langgraph_version()
        env["langgraph_checkpoint_sqlite"] = importlib.metadata.version("langgraph-checkpoint-sqlite")
        env["langgraph_durability"] = cfg.lg_durability or "default (async)"
        env["langgraph_sqlite"] = langgraph_sqlite_pragmas(workdir)
    return env


@contextlib.contextmanager
def scratch_dir(parent: str | None) -> Iterator[Path]:
    """Temp dir for checkpoint files; `--tmpdir` lets you pick the filesystem (fsync cost)."""
    with tempfile.TemporaryDirectory(prefix="statehitl-bench-", dir=parent) as d:
        yield Path(d)


class _OnlyPeer(argparse.Action):
    """`--only` of a script whose peer is not LangGraph: `--only langgraph` names the peer, stored as its name."""

    def __init__(self, *args: Any, peer: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.peer = peer

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: Any = None
    ) -> None:
        if values == "langgraph":
            print(
                f"{Path(parser.prog).stem}: --only langgraph means the peer framework here: "
                f"measuring {self.peer.capitalize()} only",
                file=sys.stderr,
            )
            values = self.peer
        setattr(namespace, self.dest, values)


def bench_arguments(
    description: str | None, results_path: Path, quick_help: str, peer: str = "langgraph"
) -> argparse.ArgumentParser:
    """The flags every benchmark script takes: `./dev.sh bench ARGS` passes the same ARGS to each.

    `peer` is the framework the script measures statehitl against. Another peer than LangGraph adds its
    name to `--only`, which still takes `langgraph` (parsed as the peer), and `--lg-durability` is
    accepted and ignored, so the same ARGS suit every script.
    """
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=quick_help)
    if peer == "langgraph":
        p.add_argument(
            "--only",
            choices=["statehitl", "langgraph"],
            help="measure one side only (the ratio column is then n/a)",
        )
        durability_help = "override LangGraph's durability mode (default: leave LangGraph's default)"
    else:
        name = peer.capitalize()
        p.add_argument(
            "--only",
            choices=["statehitl", peer, "langgraph"],
            action=_OnlyPeer,
            peer=peer,
            help=f"measure one side only: statehitl, or {peer} (langgraph means the peer, {name}, here)",
        )
        durability_help = "accepted for ./dev.sh bench and ignored here"
    p.add_argument("--tmpdir", help="parent dir for checkpoint files (default: system temp dir)")
    p.add_argument("--out", type=Path, default=results_path, help=f"JSON output (default: {results_path})")
    p.add_argument("--lg-durability", choices=["sync", "async", "exit"], help=durability_help)
    return p


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    quick_help = "few repetitions: a smoke run, not numbers to quote"
    return bench_arguments(__doc__, RESULTS_PATH, quick_help).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = Config.quick(args.lg_durability) if args.quick else Config(lg_durability=args.lg_durability)
    sides = [args.only] if args.only else ["statehitl", "langgraph"]

    with scratch_dir(args.tmpdir) as workdir:
        env = environment(workdir, cfg, sides)
        rows = bench_chains(cfg, workdir, sides)
        rows.append(bench_roundtrip(cfg, workdir, sides))
        cold_row, baseline_ms = bench_cold_start(cfg, workdir, sides)
        rows.append(cold_row)

    table = markdown_table(rows)
    print(table)
    env["loadavg_at_end"] = os.getloadavg()
    payload = {
        "environment": env,
        "cold_start_baseline_ms": baseline_ms,
        "rows": [{**asdict(r), "ratio": r.ratio} for r in rows],
        "table_markdown": table,
    }
    write_results(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
