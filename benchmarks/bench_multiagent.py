"""Multi-agent benchmark: statehitl's Graph and Swarm vs Strands Agents' (`strands.multiagent`), in one run.

Run from the repository root:

    uv run --group bench python benchmarks/bench_multiagent.py            # full run
    uv run --group bench python benchmarks/bench_multiagent.py --quick    # smoke run
    uv run --group bench python benchmarks/bench_multiagent.py --profile  # where statehitl's time goes

Every agent runs on a scripted model that replays the same assistant messages as the same Converse
stream events on both sides (agent_workload's replay model for Strands), so what is measured is each
framework's own orchestration and agent overhead. Three workloads (multiagent_workload.py):

1. a Graph chain of 10 agent nodes, each answering one text turn, no session: time per node call;
2. a Swarm of 10 agents handing off in a chain (a handoff_to_agent tool-use turn, then a text turn;
   the last one answers): time per node call;
3. the seed's Graph round trip: a BeforeNodeCallEvent hook interrupts before "cleanup"; each request
   builds a new Graph on a FileSessionManager; like-for-like on tmpfs for both sides (Strands never
   fsyncs), and on disk with statehitl's durable default beside an fsync floor.

See benchmarks/README.md for what every row measures.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent_profile import profile_runs
from harness.cli import bench_arguments
from harness.environment import base_environment, filesystem, scratch_dir, version, write_results
from harness.fsync_floor import fsync_floor_trial
from harness.peers import Check, Peer, Row, at_least, at_most, targets_markdown
from harness.timing import Trial, median_or_none, run_interleaved, to_ms
from harness.workers import Worker, WorkerTrial, freeze_imports, workers
from multiagent_workload import (
    NODES,
    TASK,
    build_chain,
    build_swarm,
    check_same_requests,
    ignore_unbounded_graph_warning,
    requests_seen,
    roundtrip_trial,
    worker_main,
)

PEER = Peer("strands", has_ratio_field=True)
"""The fsync floor row has only a statehitl-side number, so the rows say whether they have a ratio."""

TARGET_NODE_RATIO = 5.0
TARGET_ROUNDTRIP_RATIO = 4.0
FLOOR_GOAL = 1.3
"""Issue 16's goal for the agent benchmarks' on-disk rows: within 1.3x of the fsync floor."""


@dataclass(frozen=True)
class Config:
    """Repetition counts; `--quick` shrinks them so a smoke run takes seconds."""

    warmup: int = 3
    reps: int = 60  # invocations of a new chain / swarm per side
    roundtrip_warmup: int = 3
    roundtrip_reps: int = 60
    floor_reps: int = 60

    @classmethod
    def quick(cls) -> Config:
        return cls(1, 5, 1, 5, 5)


# --------------------------------------------------------------------------- 1, 2: time per node call


NODE_WORKLOADS = {
    "graph": f"Graph chain of {NODES} agent nodes, no session",
    "swarm": f"Swarm of {NODES} agents handing off in a chain, no session",
}


def worker_trials(pool: dict[str, Worker], name: str) -> dict[str, Trial]:
    """Each side's trial `name`, run in its worker (multiagent_workload.worker_main), which times it."""
    return {side: WorkerTrial(worker, "trial", (name,)) for side, worker in pool.items()}


def bench_nodes(cfg: Config, pool: dict[str, Worker]) -> list[Row]:
    """One row per workload: µs per node call, the median of `reps` invocations of a new graph / swarm."""
    rows = []
    for workload, name in NODE_WORKLOADS.items():
        raw = run_interleaved(worker_trials(pool, workload), cfg.warmup, cfg.reps, workload)
        row = PEER.row(name, "µs/node", {side: [s / NODES * 1e6 for s in times] for side, times in raw.items()})
        PEER.progress(row)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- 3: the round trip, and the floor


def roundtrip_row(cfg: Config, pool: dict[str, Worker], where: str, name: str) -> Row:
    raw = run_interleaved(worker_trials(pool, f"roundtrip-{where}"), cfg.roundtrip_warmup, cfg.roundtrip_reps,
                          f"rt-{where}")
    row = PEER.row(name, "ms", {side: to_ms(times) for side, times in raw.items()})
    PEER.progress(row)
    return row


def floor_row(cfg: Config, statehitl: Worker, directory: Path, fs: str) -> tuple[Row, list[int]]:
    """The fsync floor of statehitl's round trip on the disk (harness/fsync_floor.py), timed in this process."""
    sizes = statehitl.call("bytes-per-call")
    raw = run_interleaved({"statehitl": fsync_floor_trial(directory / "floor", sizes)}, 1, cfg.floor_reps, "floor")
    name = (f"fsync floor on {fs}: a new file, then per forced write one write + fdatasync of the bytes statehitl "
            f"wrote ({' B, '.join(map(str, sizes))} B; the resume forces its claim and its result)")
    samples = to_ms(raw["statehitl"])
    row = Row(name, "ms", median_or_none(samples), None, samples, has_ratio=False)
    PEER.progress(row)
    return row, sizes


def bench_roundtrips(cfg: Config, pool: dict[str, Worker], tmpfs: Path, disk: Path) -> tuple[list[Row], dict[str, Any]]:
    """Like-for-like on tmpfs, then on the disk with statehitl's durable default, then the disk's fsync floor."""
    tmpfs_fs, disk_fs = filesystem(tmpfs), filesystem(disk)
    rows = [roundtrip_row(cfg, pool, "tmpfs", f"Graph interrupt round trip (new Graph per request, file session), "
                                              f"on {tmpfs_fs}: like-for-like"),
            roundtrip_row(cfg, pool, "disk", f"the same on {disk_fs}: statehitl fsyncs each request's last checkpoint, "
                                             "Strands never fsyncs")]
    detail: dict[str, Any] = {"like_for_like_filesystem": tmpfs_fs, "disk_filesystem": disk_fs}
    if "statehitl" in pool:
        floor, sizes = floor_row(cfg, pool["statehitl"], disk, disk_fs)
        rows.append(floor)
        detail["statehitl_bytes_written_per_request"] = sizes
    return rows, detail


# --------------------------------------------------------------------------- output


def targets_table(node_rows: list[Row], roundtrips: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Issue 14's targets next to what this run measured, then issue 16's floor goal, for information.

    That goal (for the agent benchmarks) reads here: what the disk adds to statehitl's round trip (the
    on-disk median minus the tmpfs one) is within FLOOR_GOAL of the fsync floor.
    """
    checks: list[Check] = [at_least(f"≥{TARGET_NODE_RATIO:g}x less time per node than Strands: {row.name}",
                                    row.ratio, TARGET_NODE_RATIO) for row in node_rows]
    checks.append(at_least(f"round trip ≥{TARGET_ROUNDTRIP_RATIO:g}x faster than Strands, like-for-like "
                           "(tmpfs for both)", roundtrips[0].ratio, TARGET_ROUNDTRIP_RATIO))
    tmpfs, disk, *floor = [row.statehitl for row in roundtrips]
    if floor and tmpfs and disk and floor[0]:
        checks.append(at_most(f"(for information: issue 16's goal for the agent benchmarks) what the disk adds to "
                              f"statehitl's round trip (on-disk minus tmpfs) within {FLOOR_GOAL:g}x of the fsync floor",
                              (disk - tmpfs) / floor[0], FLOOR_GOAL))
    return targets_markdown(checks)


def missed(targets: list[dict[str, Any]]) -> str:
    names = [t["target"] for t in targets if t["met"] is False and not t["target"].startswith("(for information")]
    if not names:
        return ""
    return ("Missed: " + "; ".join(names) + ". `--profile` shows where statehitl's time goes "
            "(benchmarks/README.md quotes it for the run there).")


# --------------------------------------------------------------------------- --profile


def profile_statehitl(tmpfs: Path, top: int, reps: int = 30) -> str:
    """cProfile statehitl in this process: invocations of a new chain and of a new swarm (per node call), and
    the round trip, after one run of each and a freeze, as in the workers."""
    ignore_unbounded_graph_warning()
    requests_seen("statehitl", tmpfs / "warm")
    freeze_imports()

    def invoke(build: Callable[[str], tuple[Any, list[Any]]]) -> Callable[[int], Callable[[], object]]:
        return lambda _i: functools.partial(build("statehitl")[0], TASK)

    trial = roundtrip_trial("statehitl", tmpfs / "profile")
    return "\n\n".join([
        profile_runs(invoke(build_chain), reps, reps * NODES, top, f"statehitl, {NODE_WORKLOADS['graph']}, "
                     f"{reps} invocations", per="node call"),
        profile_runs(invoke(build_swarm), reps, reps * NODES, top, f"statehitl, {NODE_WORKLOADS['swarm']}, "
                     f"{reps} invocations", per="node call"),
        profile_runs(lambda i: functools.partial(trial, f"profile-rt-{i}"), reps, reps, top,
                     f"statehitl, Graph interrupt round trip on {filesystem(tmpfs)}, {reps} round trips",
                     per="round trip"),
    ])


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # `--only langgraph` parses as "strands" (the peer here); --lg-durability is accepted and ignored
    p = bench_arguments(__doc__, "multiagent.json", peer="strands")
    p.add_argument("--tmpfs", default="/dev/shm" if Path("/dev/shm").is_dir() else None, metavar="DIR",
                   help="parent dir of the like-for-like round trip's sessions, for both sides: a tmpfs, where "
                        "fsync is free, since Strands never fsyncs (default /dev/shm); --tmpdir is the disk")
    p.add_argument("--profile", action="store_true",
                   help="instead of timing, cProfile statehitl's chain, swarm and round trip; print the top functions")
    p.add_argument("--profile-top", type=int, default=25, help="rows per profile table (default 25)")
    return p.parse_args(argv)


def warm_up(pool: dict[str, Worker]) -> None:
    """Run every workload once per side (checked, untimed), assert that both sides' agents were asked the same
    things, then freeze what each worker's imports left behind (harness/workers.py)."""
    seen = {side: worker.call("requests") for side, worker in pool.items()}
    if len(seen) == 2:
        check_same_requests(seen)
    for worker in pool.values():
        worker.call("freeze")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = Config.quick() if args.quick else Config()
    sides = PEER.measured(args.only)

    with scratch_dir(args.tmpdir) as disk, scratch_dir(args.tmpfs) as tmpfs:
        if args.profile:
            print(profile_statehitl(tmpfs, args.profile_top))
            return 0
        if filesystem(tmpfs) != "tmpfs":
            print(f"warning: {tmpfs} is on {filesystem(tmpfs)}, not tmpfs: the round trip's first row is not "
                  "like-for-like (statehitl fsyncs, Strands does not)", file=sys.stderr)
        env: dict[str, Any] = {
            **base_environment(),
            "workdir": str(disk),
            "tmpfs_workdir": str(tmpfs),
            "versions": {"statehitl": version("statehitl"), "strands-agents": version("strands-agents")},
            "nodes": NODES,
            "config": asdict(cfg),
        }
        with workers(sides, worker_main, str(tmpfs), str(disk)) as pool:
            env["workers"] = {side: worker.call("info") for side, worker in pool.items()}
            warm_up(pool)
            node_rows = bench_nodes(cfg, pool)
            roundtrips, env["roundtrip"] = bench_roundtrips(cfg, pool, tmpfs, disk)

    rows = [*node_rows, *roundtrips]
    table = PEER.table(rows)
    targets, target_results = targets_table(node_rows, roundtrips)
    print(table)
    print()
    print(targets)
    note = missed(target_results)
    if note:
        print()
        print(note)
    write_results(args.out, {"environment": env, "rows": [PEER.json(r) for r in rows], "targets": target_results,
                             "table_markdown": table, "targets_markdown": targets})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
