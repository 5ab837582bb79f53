"""Core overhead benchmark: statehitl vs LangGraph, side by side in one run.

Run from the repository root:

    uv run --group bench python benchmarks/bench_core.py          # full run
    uv run --group bench python benchmarks/bench_core.py --quick  # smoke run

Both frameworks are measured in the same process, on the same machine, with the
same graph shapes, so the ratio column is meaningful even when absolute numbers
drift between machines.  See benchmarks/README.md for what every row measures.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from harness.cli import bench_arguments
from harness.cold_import import cold_import_row
from harness.environment import base_environment, scratch_dir, version, write_results
from harness.graphs import (
    STEP_LIMIT,
    SHState,
    add_linear_chain,
    add_review,
    langgraph_config,
    langgraph_sqlite_pragmas,
    open_sqlite_saver,
    statehitl_review_graph,
)
from harness.peers import Peer, Row
from harness.timing import Trial, run_interleaved, to_ms

CHAIN_LEN = 100
"""Nodes in the linear chain; per-step time = one invoke / CHAIN_LEN."""

PEER = Peer("langgraph")

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

IMPORT_SNIPPETS = {
    "statehitl": "import statehitl; from statehitl.graph import StateGraph",
    "langgraph": "import langgraph.graph",
}


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


# --------------------------------------------------------------------------- statehitl side


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
    add_linear_chain(g, noop, START, END, CHAIN_LEN)
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


def langgraph_checkpointer(variant: Variant, workdir: Path, stack: contextlib.ExitStack) -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    if variant == "none":
        return None
    if variant == "memory":
        return InMemorySaver()
    # "file" and "file-sync" share the backend; they differ only in invoke's durability.
    return open_sqlite_saver(workdir / "langgraph-chain.sqlite", stack)


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
    add_linear_chain(g, noop, START, END, CHAIN_LEN)
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


def typeddict_chain_trial(side: str) -> Trial:
    """LangGraph's own program (TypedDict state, `invoke(input, config)`, a dict back), on `side`'s modules.

    The same source runs on both: only the import of StateGraph, START and END differs, which is the
    port the LangGraph guide promises. No checkpointer, so the row is the scheduler's cost per step.
    """
    graph_module = importlib.import_module(f"{side}.graph")

    def noop(state: LGState) -> None:
        return None

    g = graph_module.StateGraph(LGState)
    add_linear_chain(g, noop, graph_module.START, graph_module.END, CHAIN_LEN)
    app = g.compile()
    config = {"recursion_limit": STEP_LIMIT}

    def trial(thread_id: str) -> float:
        t0 = time.perf_counter()
        result = app.invoke({"n": 0}, config)
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

    return add_review(StateGraph(LGState), prepare, review, START, END).compile(checkpointer=saver)


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


# --------------------------------------------------------------------------- orchestration


def to_us_per_step(samples: list[float]) -> list[float]:
    return [s / CHAIN_LEN * 1e6 for s in samples]


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
        samples = {side: to_us_per_step(times) for side, times in raw.items()}
        rows.append(PEER.row(f"{CHAIN_LEN}-node chain, {VARIANT_LABELS[variant]}", "µs/step", samples))
        PEER.progress(rows[-1])
    return rows


def bench_typeddict_chain(cfg: Config, sides: list[str]) -> Row:
    trials = {side: typeddict_chain_trial(side) for side in sides}
    raw = run_interleaved(trials, cfg.chain_warmup, cfg.chain_reps, "chain-typeddict")
    samples = {side: to_us_per_step(times) for side, times in raw.items()}
    label = f"{CHAIN_LEN}-node chain, LangGraph's program (TypedDict state), no checkpointer"
    row = PEER.row(label, "µs/step", samples)
    PEER.progress(row)
    return row


def bench_roundtrip(cfg: Config, workdir: Path, sides: list[str]) -> Row:
    with contextlib.ExitStack() as stack:
        trials: dict[str, Trial] = {}
        if "statehitl" in sides:
            trials["statehitl"] = statehitl_roundtrip_trial(workdir)
        if "langgraph" in sides:
            trials["langgraph"] = langgraph_roundtrip_trial(workdir, stack, cfg)
        raw = run_interleaved(trials, cfg.roundtrip_warmup, cfg.roundtrip_reps, "rt")
    samples = {side: to_ms(times) for side, times in raw.items()}
    row = PEER.row("interrupt → resume round trip (file / sqlite)", "ms", samples)
    PEER.progress(row)
    return row


def bench_cold_start(cfg: Config, workdir: Path, sides: list[str]) -> tuple[Row, float]:
    """Returns the row and the median `python -c pass` time (ms) that was subtracted."""
    name = "cold import (fresh interpreter, minus `python -c pass`)"
    return cold_import_row(PEER, name, cfg.import_runs, IMPORT_SNIPPETS, sides, workdir)


def environment(workdir: Path, cfg: Config, sides: list[str]) -> dict[str, Any]:
    env: dict[str, Any] = {
        **base_environment(),
        "workdir": str(workdir),
        "chain_len": CHAIN_LEN,
        "step_limit": STEP_LIMIT,
        "config": asdict(cfg),
    }
    if "statehitl" in sides:
        env["statehitl"] = version("statehitl")
    if "langgraph" in sides:
        env["langgraph"] = version("langgraph")
        env["langgraph_checkpoint_sqlite"] = version("langgraph-checkpoint-sqlite")
        env["langgraph_durability"] = cfg.lg_durability or "default (async)"
        env["langgraph_sqlite"] = langgraph_sqlite_pragmas(workdir)
    return env


def main(argv: list[str] | None = None) -> int:
    args = bench_arguments(__doc__, "core.json").parse_args(argv)
    cfg = Config.quick(args.lg_durability) if args.quick else Config(lg_durability=args.lg_durability)
    sides = PEER.measured(args.only)

    with scratch_dir(args.tmpdir) as workdir:
        env = environment(workdir, cfg, sides)
        rows = bench_chains(cfg, workdir, sides)
        rows.append(bench_typeddict_chain(cfg, sides))
        rows.append(bench_roundtrip(cfg, workdir, sides))
        cold_row, baseline_ms = bench_cold_start(cfg, workdir, sides)
        rows.append(cold_row)

    table = PEER.table(rows)
    print(table)
    payload = {
        "environment": env,
        "cold_start_baseline_ms": baseline_ms,
        "rows": [PEER.json(r) for r in rows],
        "table_markdown": table,
    }
    write_results(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
