"""The speed gate: fails the build when a hot path gets slower, counted in instructions, not seconds.

Wall time on a shared 2-core VM moves by 10-30% from one run to the next, so it cannot gate anything.
Instructions can: ``valgrind --tool=callgrind`` counts the same total for the same code, inputs and
environment whatever else the machine is doing (SQLite guards its speed the same way). Each workload of
``gate_workloads.py`` runs in a valgrind process of its own and is counted per unit of work; a DynamoDB
conversation turn is counted in requests and bytes on DynamoDB Local instead (its cost is the wire).
The counts are compared with ``gate_baseline.json``: a rise of more than 5% fails, with a table of what
rose. A fall of more than 5% passes and says so: lower the baseline in a commit of its own.

    python benchmarks/speed_gate.py                 # check against the baseline (what ./dev.sh test runs)
    python benchmarks/speed_gate.py --update "why"  # write the counts as the new baseline, with the reason
    python benchmarks/speed_gate.py --only chain-pydantic --only roundtrip-file

The environment is pinned where it changes counts: ``PYTHONHASHSEED=0``, bytecode cached in one place
(a module compiled inside the counted region would count the compiler), the scratch files on a tmpfs
when there is one. Counts still depend on the interpreter and the libraries' versions, which the
baseline records; a run on other versions says so above its table.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BASELINE = HERE / "gate_baseline.json"
TOLERANCE = 0.05
REPS = {"chain-pydantic": 5, "chain-typeddict": 5, "chain-file": 3, "roundtrip-file": 10, "agent-session": 3,
        "graph-node": 3, "cold-start": 1, "history-page": 5, "answer-backlog": 5}
"""Repetitions counted per workload: enough that the few instructions of switching the count on and off
(under 0.5 M) are well under the tolerance."""
DYNAMODB_TURN = 100
VERSIONS = ("pydantic", "pydantic-core", "networkx", "boto3")


@dataclass(frozen=True)
class Count:
    name: str
    unit: str
    value: float


def _env(pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONHASHSEED="0", PYTHONPYCACHEPREFIX=str(pycache))
    return env


def count_instructions(name: str, scratch: Path, pycache: Path) -> Count:
    """One workload in a valgrind process of its own; instructions per unit of work."""
    workdir = scratch / name
    workdir.mkdir(parents=True)
    out = workdir / "callgrind.out"
    script = [sys.executable, str(HERE / "gate_workloads.py"), name, str(REPS[name]), str(workdir)]
    if name == "cold-start":  # its counted region imports statehitl: compile the bytecode outside the count
        subprocess.run([*script, "--plain"], check=True, capture_output=True, env=_env(pycache), cwd=ROOT)
        shutil.rmtree(workdir)
        workdir.mkdir()
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *script],
        capture_output=True, text=True, env=_env(pycache), cwd=ROOT, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"gate workload {name} failed:\n{done.stdout}\n{done.stderr}")
    meta = json.loads(done.stdout.strip().splitlines()[-1])
    total = _collected(out)
    return Count(name, meta["unit"], total / (meta["reps"] * meta["per_rep"]))


def _collected(out: Path) -> int:
    """The instruction total of a callgrind output: its last ``totals:`` line (``summary:`` is written
    when the dump starts, before anything is counted)."""
    totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
    if not totals:
        raise RuntimeError(f"{out} has no totals line")
    return int(totals[-1].split()[1])


def count_dynamodb_turn(scratch: Path) -> list[Count]:
    """Turn 100 of bench_storage's conversation on DynamoDB Local: requests and bytes on the wire."""
    sys.path.insert(0, str(HERE))
    os.environ.update(_aws_env())
    import storage_workload as sw
    from fleet_wire import WireCounter
    from statehitl_checkpoint_dynamodb import DynamoDBStorage, create_table
    from statehitl_checkpoint_dynamodb.local import DynamoDBLocal

    from statehitl.checkpoint import Checkpointer

    with DynamoDBLocal(ROOT / ".cache" / "dynamodb-local") as endpoint:
        create_table({"endpoint_url": endpoint, "region_name": "us-east-1"}, "gate-turns")
        storage = DynamoDBStorage("gate-turns", region_name="us-east-1", endpoint_url=endpoint)
        counter = WireCounter()
        counter.attach(storage.client)
        app = sw.statehitl_app(Checkpointer(storage))
        for turn in range(DYNAMODB_TURN):
            counter.take()
            app.invoke({"messages": [sw.user_message(turn)]}, thread_id="gate")
        wire = counter.take()
    return [
        Count("dynamodb-turn: PutItem", "requests/turn", wire.requests["dynamodb.PutItem"]),
        Count("dynamodb-turn: requests", "requests/turn", wire.total_requests),
        Count("dynamodb-turn: bytes sent", "bytes/turn", wire.bytes_sent),
        Count("dynamodb-turn: bytes received", "bytes/turn", wire.bytes_received),
    ]


def _aws_env() -> dict[str, str]:
    from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

    return dict(DUMMY_AWS_ENV)


def measure(names: list[str], with_dynamodb: bool, jobs: int) -> list[Count]:
    if shutil.which("valgrind") is None:
        raise SystemExit("speed_gate: valgrind is not installed (./dev.sh test installs it with apt-get)")
    shm = Path("/dev/shm")
    parent = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="statehitl-gate-", dir=parent) as tmp:
        scratch, pycache = Path(tmp), ROOT / ".cache" / "gate-pycache"
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(count_instructions, name, scratch, pycache) for name in names]
            counts = [f.result() for f in futures]
        if with_dynamodb:
            counts += count_dynamodb_turn(scratch)
    return counts


def environment() -> dict[str, str]:
    versions = {name: metadata.version(name) for name in VERSIONS}
    return {"python": platform.python_version(), "machine": platform.machine(), **versions}


def compare(counts: list[Count], baseline: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """The table, the names that rose past the tolerance, and those that fell past it."""
    known = baseline.get("counts", {})
    rows = ["| workload | unit | baseline | now | change |", "| --- | --- | ---: | ---: | ---: |"]
    rose, fell = [], []
    for c in counts:
        base = known.get(c.name)
        if base is None:
            rows.append(f"| {c.name} | {c.unit} | (none) | {_fmt(c.value)} | new |")
            continue
        change = c.value / base - 1 if base else (0.0 if not c.value else 1.0)
        mark = ""
        if change > TOLERANCE:
            rose.append(c.name)
            mark = " **ROSE**"
        elif change < -TOLERANCE:
            fell.append(c.name)
            mark = " (fell)"
        rows.append(f"| {c.name} | {c.unit} | {_fmt(base)} | {_fmt(c.value)} | {change:+.1%}{mark} |")
    return "\n".join(rows), rose, fell


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", metavar="WHY", help="write the counts as the new baseline, saying why")
    parser.add_argument("--only", action="append", choices=[*REPS, "dynamodb-turn"], help="count only these")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="valgrind processes at once")
    args = parser.parse_args(argv)
    only = args.only or [*REPS, "dynamodb-turn"]
    if args.update and args.only:
        parser.error("--update records every workload: drop --only")
    counts = measure([n for n in only if n in REPS], "dynamodb-turn" in only, args.jobs)
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    if args.update:
        record = {"why": args.update, "environment": environment(), "counts": {c.name: c.value for c in counts},
                  "units": {c.name: c.unit for c in counts}}
        BASELINE.write_text(json.dumps(record, indent=2) + "\n")
        print(f"speed_gate: wrote {BASELINE.relative_to(ROOT)}")
    table, rose, fell = compare(counts, baseline)
    if baseline.get("environment", environment()) != environment():
        print(f"speed_gate: the baseline was counted on {baseline['environment']}, this run on {environment()}")
    print(table)
    if args.update:
        return 0
    if fell:
        print(f"\nspeed_gate: {', '.join(fell)} fell more than {TOLERANCE:.0%}: lower the baseline in a commit "
              "that says why (python benchmarks/speed_gate.py --update \"why\")")
    if rose:
        print(f"\nspeed_gate: FAILED: {', '.join(rose)} rose more than {TOLERANCE:.0%} over the baseline. Find "
              "what made them slower (callgrind outputs: run a workload by hand, see gate_workloads.py), or, "
              "if the cost is deliberate, raise the baseline in a commit that says why.")
        return 1
    print("\nspeed_gate: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
