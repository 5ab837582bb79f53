"""Fleet benchmark: N stateless worker processes racing to answer M interrupted agent turns, per backend.

Run from the repository root:

    uv run --group bench python benchmarks/bench_fleet.py            # N = 1, 2, 4, 8 workers, 32 threads
    uv run --group bench python benchmarks/bench_fleet.py --quick    # N = 1, 2, 8 threads: a smoke run
    uv run --group bench python benchmarks/bench_fleet.py --no-compress --only statehitl  # plain JSON records

Starts moto_server (S3) and DynamoDB Local on loopback, as bench_backends.py does, then for each backend
(the file store, S3, DynamoDB) and each N: one worker starts M agent turns, each of which stops on an
approval interrupt before its tool runs; then all N workers answer every thread at once, each in its own
shuffled order (a loser gets the conflict error and moves on; a thread found already answered is
skipped). It reports resumes per second, HTTP requests and bytes (sent and received, counted on the
boto3 clients' own events) per turn and per checkpoint, the file store's storage calls and bytes, the
dollars per million turns at public prices, and checks that every approved action ran exactly once and
every thread completed. LangGraph with AWS's DynamoDBSaver does the same work on the same DynamoDB
Local, side by side. See benchmarks/README.md for what every column means.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fleet_wire import PRICES, Wire, cost_per_million_turns
from fleet_workload import Stores, executions, worker_main
from harness.aws import REGION, aws_servers, create_bucket_and_table
from harness.cli import bench_arguments
from harness.environment import base_environment, scratch_dir, version, write_results
from harness.peers import Peer, fmt
from harness.workers import Worker, call_all

BUCKET = "statehitl-fleet"
TABLE = "statehitl-fleet"
LANGGRAPH_TABLE = "langgraph-fleet"
BACKENDS = ("file", "s3", "dynamodb")


@dataclass(frozen=True)
class Config:
    workers: tuple[int, ...] = (1, 2, 4, 8)
    threads: int = 32

    @classmethod
    def quick(cls) -> Config:
        return cls((1, 2), 8)


@dataclass
class FleetRun:
    """One backend, one N: what the fleet did and what it cost."""

    side: str
    backend: str
    workers: int
    threads: int
    seconds: float
    outcomes: dict[str, int]
    executions: dict[str, int]
    completed: int
    checkpoints: int
    """Checkpoints the race added, all threads together (statehitl: sequence numbers; LangGraph: listed)."""
    create: dict[str, Any]
    race: dict[str, Any]
    worker_seconds: list[float] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)

    @property
    def resumes_per_second(self) -> float:
        return self.threads / self.seconds

    @property
    def double_executions(self) -> int:
        return sum(max(0, n - 1) for n in self.executions.values())

    @property
    def exactly_once(self) -> bool:
        return all(n == 1 for n in self.executions.values())

    def wire(self, phase: str) -> Wire:
        return Wire.from_json(getattr(self, phase)["wire"])

    def turn_wire(self) -> Wire:
        """A whole turn's traffic: the request that stopped on the interrupt plus the racing answers."""
        return self.wire("create") + self.wire("race")

    def cost(self) -> float | None:
        return cost_per_million_turns(self.backend, self.turn_wire(), self.threads)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "resumes_per_second": self.resumes_per_second, "exactly_once": self.exactly_once,
                "double_executions": self.double_executions, "dollars_per_million_turns": self.cost()}


# --------------------------------------------------------------------------- servers


def create_stores(s3_endpoint: str, dynamodb_endpoint: str) -> None:
    """The bucket, statehitl's table, and LangGraph's table (PK/SK strings, on-demand, as the saver expects)."""
    import boto3

    create_bucket_and_table(s3_endpoint, dynamodb_endpoint, BUCKET, TABLE)
    ddb = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint, region_name=REGION)
    ddb.create_table(TableName=LANGGRAPH_TABLE, BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                                {"AttributeName": "SK", "KeyType": "RANGE"}],
                     AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                                           {"AttributeName": "SK", "AttributeType": "S"}])
    ddb.get_waiter("table_exists").wait(TableName=LANGGRAPH_TABLE)
    ddb.close()


# --------------------------------------------------------------------------- one run


def fleet_run(side: str, backend: str, pool: list[Worker], n: int, threads: int, effects: Path) -> FleetRun:
    """M new interrupted turns, then n workers racing to answer all of them; checked before it is returned."""
    run = uuid.uuid4().hex[:8]
    for i, worker in enumerate(pool[:n]):
        worker.call("warm", backend, f"warm-{side[:2]}-{backend}-{run}-w{i}")
    names = [f"{side[:2]}-{backend}-{n}-{run}-{i}" for i in range(threads)]
    creator = pool[0]
    create = creator.call("create", backend, names)
    before = creator.call("seqs", backend, names)
    t0 = time.perf_counter()
    races = call_all(pool[:n], "race", backend, names, run)
    seconds = time.perf_counter() - t0
    after = creator.call("seqs", backend, names)
    completed = creator.call("verify", backend, names)
    ran = executions(effects, names)
    outcomes: Counter[str] = Counter()
    race_wire = Wire()
    storage: Counter[str] = Counter()
    for race in races:
        outcomes.update(race["outcomes"])
        race_wire += Wire.from_json(race["wire"])
        storage.update(race["storage"])
    result = FleetRun(
        side=side, backend=backend, workers=n, threads=threads, seconds=seconds, outcomes=dict(outcomes),
        executions=ran, completed=sum(completed.values()),
        checkpoints=sum(after[t] - before[t] for t in names),
        create=create, race={"wire": race_wire.to_json(), "storage": dict(storage)},
        worker_seconds=[race["seconds"] for race in races],
        anomalies=[a for race in races for a in race["anomalies"]],
    )
    print(f"  done: {side} on {backend}, {n} workers: {result.resumes_per_second:.1f} resumes/s, outcomes "
          f"{dict(outcomes)}, double executions {result.double_executions}, completed {result.completed}/{threads}",
          file=sys.stderr)
    return result


def check(runs: list[FleetRun]) -> list[str]:
    """statehitl's promises, per run: every action exactly once, every thread completed, one winner per thread."""
    failures = []
    for r in runs:
        where = f"{r.side} on {r.backend} with {r.workers} workers"
        if r.completed != r.threads:
            failures.append(f"{where}: {r.threads - r.completed} of {r.threads} threads did not complete")
        if r.side == "statehitl":
            if not r.exactly_once:
                bad = {t: n for t, n in r.executions.items() if n != 1}
                failures.append(f"{where}: approved actions not run exactly once: {bad}")
            if r.outcomes.get("won", 0) != r.threads:
                failures.append(f"{where}: {r.outcomes.get('won', 0)} winning answers for {r.threads} threads")
    return failures


# --------------------------------------------------------------------------- output


def row_cells(r: FleetRun) -> list[str]:
    """One run's cells: AWS traffic for S3 and DynamoDB, storage calls and bytes for the file store."""
    wire = r.turn_wire()
    aws = r.backend != "file"
    storage: Counter[str] = Counter(r.create.get("storage", {})) + Counter(r.race.get("storage", {}))
    calls = sum(v for k, v in storage.items() if k.startswith("calls."))
    race_requests = r.wire("race").total_requests
    cost = r.cost()

    def only(condition: bool, text: str) -> str:
        return text if condition else "n/a"

    return [
        r.side, r.backend, str(r.workers), f"{r.resumes_per_second:.1f}",
        f"{r.outcomes.get('won', 0)} / {r.outcomes.get('lost', 0)} / {r.outcomes.get('done', 0)}"
        + (f" (+{r.outcomes['other']} other)" if r.outcomes.get("other") else ""),
        only(aws, fmt(wire.total_requests / r.threads)),
        only(aws and r.checkpoints > 0, fmt(race_requests / max(1, r.checkpoints))),
        only(aws, fmt(wire.bytes_sent / r.threads / 1024)),
        only(aws, fmt(wire.bytes_received / r.threads / 1024)),
        only(not aws, fmt(calls / r.threads)),
        only(not aws, f"{fmt(storage['bytes_written'] / r.threads / 1024)} / "
                      f"{fmt(storage['bytes_read'] / r.threads / 1024)}"),
        only(r.backend == "dynamodb", f"{fmt(wire.write_units / r.threads)} / {fmt(wire.read_units / r.threads)}"),
        "n/a" if cost is None else f"{cost:.2f}",
        str(r.double_executions), f"{r.completed}/{r.threads}",
    ]


def markdown_table(runs: list[FleetRun]) -> str:
    lines = [
        "| side | backend | workers | resumes/s | won / lost / already answered | HTTP requests / turn "
        "| race requests / checkpoint | KB sent / turn | KB received / turn | storage calls / turn (file) "
        "| KB written / read per turn (file) | WRU / RRU per turn | $ per million turns | actions run twice "
        "| completed |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in runs]
    return "\n".join(lines)


def requests_table(runs: list[FleetRun]) -> str:
    """The requests of a turn by operation, for the AWS backends: what the cost line is made of."""
    lines = ["| side | backend | workers | requests per turn by operation (create + race) |",
             "| --- | --- | ---: | --- |"]
    for r in runs:
        if r.backend == "file":
            continue
        wire = r.turn_wire()
        by_count = sorted(wire.requests.items(), key=lambda kv: -kv[1])
        ops = ", ".join(f"{name} {n / r.threads:.2f}" for name, n in by_count)
        lines.append(f"| {r.side} | {r.backend} | {r.workers} | {ops} |")
    return "\n".join(lines)


def versions() -> dict[str, str]:
    from statehitl_checkpoint_dynamodb.local import NPM_PACKAGE

    out = {dist: version(dist) for dist in ("statehitl", "boto3", "moto", "langgraph", "langgraph-checkpoint-aws")}
    out["dynamodb_local"] = NPM_PACKAGE
    return out


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    # --lg-durability is accepted (./dev.sh bench passes the same ARGS to every script) and ignored
    parser = bench_arguments(__doc__, "fleet.json")
    parser.add_argument("--no-compress", dest="compress", action="store_false",
                        help="statehitl's records stored as plain JSON (Checkpointer(..., compress=False)), "
                             "as a fleet with readers older than compression runs it")
    args = parser.parse_args(argv)
    cfg = Config.quick() if args.quick else Config()
    sides = Peer("langgraph").measured(args.only)
    runs: list[FleetRun] = []
    with scratch_dir(args.tmpdir) as workdir, aws_servers(workdir) as (s3_endpoint, dynamodb_endpoint):
        create_stores(s3_endpoint, dynamodb_endpoint)
        stores = Stores(str(workdir / "file-store"), s3_endpoint, dynamodb_endpoint, BUCKET, TABLE, LANGGRAPH_TABLE,
                        compress=args.compress)
        effects = workdir / "effects"
        effects.mkdir()
        env: dict[str, Any] = {**base_environment(), "versions": versions(), "config": asdict(cfg),
                               "workdir": str(workdir), "prices": PRICES, "statehitl_compress": args.compress}
        for side in sides:
            pool = [Worker(side, worker_main, stores, str(effects)) for _ in range(max(cfg.workers))]
            try:
                for backend in BACKENDS if side == "statehitl" else ("dynamodb",):
                    for n in cfg.workers:
                        runs.append(fleet_run(side, backend, pool, n, cfg.threads, effects))
            finally:
                for worker in pool:
                    worker.close()

    table = markdown_table(runs)
    ops = requests_table(runs)
    failures = check(runs)
    print(table)
    print()
    print(ops)
    if failures:
        print("\nFAILED: " + "; ".join(failures))
    write_results(args.out, {"environment": env, "runs": [r.to_json() for r in runs], "table_markdown": table,
                             "requests_markdown": ops, "failures": failures})
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
