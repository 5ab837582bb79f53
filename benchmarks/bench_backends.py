"""Backend benchmark: the file store, S3 and DynamoDB side by side, on real servers over loopback HTTP.

Run from the repository root:

    uv run --all-packages python benchmarks/bench_backends.py          # full run
    uv run --all-packages python benchmarks/bench_backends.py --quick  # smoke run

Starts moto_server (S3, with `statehitl_checkpoint_s3.local`, as the tests do) and DynamoDB Local (the
jar in .cache/dynamodb-local; `./dev.sh test` or `./dev.sh bench` installs it) on free loopback ports,
with dummy AWS credentials, and stops both at the end. For each backend it measures the interrupt ->
resume round trip (same clock boundaries as bench_core.py) and counts storage requests per step and per
resume, both as statehitl `Storage` calls (`CountingStorage`) and as AWS API calls (boto3 events).
Nothing here talks to AWS. See benchmarks/README.md for what every column means.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from harness.aws import REGION, aws_servers, create_bucket_and_table
from harness.cli import bench_arguments
from harness.environment import base_environment, scratch_dir, version, write_results
from harness.graphs import STEP_LIMIT, SHState, add_linear_chain, statehitl_review_graph
from harness.peers import fmt
from harness.timing import Trial, run_interleaved, to_ms

from statehitl.checkpoint import Checkpointer
from statehitl.checkpoint.url import storage_from_url
from statehitl.testing import CountingStorage

CHAIN_NODES = 21
"""Nodes in the linear chain whose requests are divided by its length to give requests per step."""
BUCKET = "statehitl-bench"
TABLE = "statehitl-bench"


@dataclass(frozen=True)
class Config:
    roundtrip_warmup: int = 3
    roundtrip_reps: int = 30

    @classmethod
    def quick(cls) -> Config:
        return cls(1, 5)


@dataclass
class Requests:
    """What one measured invoke asked of storage: `Storage` calls, and AWS API calls / HTTP sends."""

    storage: dict[str, int]
    api: dict[str, int]
    http_sends: int

    def per(self, n: int) -> dict[str, dict[str, float]]:
        return {
            "storage": {k: v / n for k, v in self.storage.items()},
            "api": {k: v / n for k, v in self.api.items()},
        }


@dataclass
class BackendResult:
    backend: str
    url: str
    roundtrip_ms: float
    rebuild_ms: float
    """Median of the part of the round trip spent in `Checkpointer.from_url` and compiling the fresh app.

    DynamoDBStorage builds its boto3 client on first use, so for DynamoDB that cost is in the invoke instead.
    """
    chain: Requests
    resume: Requests
    roundtrip_samples_ms: list[float] = field(default_factory=list)
    rebuild_samples_ms: list[float] = field(default_factory=list)


# --------------------------------------------------------------------------- servers


def backend_urls(workdir: Path, s3_endpoint: str, dynamodb_endpoint: str) -> dict[str, str]:
    return {
        "file": f"file://{workdir / 'file-store'}",
        "s3": f"s3://{BUCKET}/bench?" + urlencode({"region": REGION, "endpoint_url": s3_endpoint}),
        "dynamodb": f"dynamodb://{TABLE}?" + urlencode({"region": REGION, "endpoint_url": dynamodb_endpoint}),
    }


# --------------------------------------------------------------------------- counting


class BotoCounter:
    """Counts the AWS API calls (`before-call`) and HTTP sends, retries included (`before-send`)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.sends = 0
        self._lock = threading.Lock()  # boto3 runs in asyncio.to_thread workers

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-call.*.*", self._on_call)
        client.meta.events.register("before-send.*.*", self._on_send)

    def _on_call(self, event_name: str, **_: Any) -> None:
        with self._lock:
            self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def _on_send(self, **_: Any) -> None:
        with self._lock:
            self.sends += 1


@dataclass
class Counted:
    checkpointer: Checkpointer
    storage: CountingStorage
    boto: BotoCounter

    def reset(self) -> None:
        self.storage.reset()
        self.boto.calls.clear()
        self.boto.sends = 0

    def snapshot(self) -> Requests:
        return Requests(dict(self.storage.counts.calls), dict(self.boto.calls), self.boto.sends)


def counted_checkpointer(url: str) -> Counted:
    """What `Checkpointer.from_url(url)` builds, with a CountingStorage and boto3 event counters in it."""
    storage = storage_from_url(url)
    boto = BotoCounter()
    client = getattr(storage, "client", None)  # S3Storage / DynamoDBStorage; the file store has none
    if client is not None:
        boto.attach(client)
    counting = CountingStorage(storage)
    return Counted(Checkpointer(counting), counting, boto)


def close_storage(checkpointer: Checkpointer) -> None:
    storage = checkpointer.storage
    inner = storage.inner if isinstance(storage, CountingStorage) else storage
    close = getattr(inner, "close", None)
    if close is not None:
        close()


def count_chain(url: str) -> Requests:
    """Requests of one invoke of a CHAIN_NODES-node no-op chain, run to completion on a new thread."""
    from statehitl.graph import END, START, StateGraph

    def noop(state: SHState) -> None:
        return None

    counted = counted_checkpointer(url)
    g = StateGraph(SHState)
    add_linear_chain(g, noop, START, END, length=CHAIN_NODES)
    app = g.compile(checkpointer=counted.checkpointer, step_limit=STEP_LIMIT)
    counted.reset()
    result = app.invoke({"n": 0}, thread_id=f"chain-{time.time_ns()}")
    assert result.stop_reason == "end", result.stop_reason
    requests = counted.snapshot()
    close_storage(counted.checkpointer)
    return requests


def count_resume(url: str) -> Requests:
    """Requests of the resuming invoke in a fresh app on a fresh checkpointer (the interrupt ran elsewhere)."""
    thread_id = f"resume-{time.time_ns()}"
    first_ckpt = Checkpointer.from_url(url)
    paused = statehitl_review_graph().compile(checkpointer=first_ckpt, step_limit=STEP_LIMIT).invoke(
        {"n": 0}, thread_id=thread_id
    )
    assert paused.stop_reason == "interrupt", paused.stop_reason
    close_storage(first_ckpt)
    counted = counted_checkpointer(url)
    app = statehitl_review_graph().compile(checkpointer=counted.checkpointer, step_limit=STEP_LIMIT)
    counted.reset()
    answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in paused.interrupts]
    done = app.invoke(answers, thread_id=thread_id)
    assert done.stop_reason == "end", done.stop_reason
    assert done.state.n == 1
    requests = counted.snapshot()
    close_storage(counted.checkpointer)
    return requests


# --------------------------------------------------------------------------- round trip


def roundtrip_trial(url: str, rebuild_samples: list[float]) -> Trial:
    """bench_core's statehitl round trip on `url`: first app prebuilt; the resume rebuilds app + from_url."""
    first = statehitl_review_graph().compile(checkpointer=Checkpointer.from_url(url), step_limit=STEP_LIMIT)

    def trial(thread_id: str) -> float:
        t0 = time.perf_counter()
        paused = first.invoke({"n": 0}, thread_id=thread_id)
        t1 = time.perf_counter()
        checkpointer = Checkpointer.from_url(url)
        resumed_app = statehitl_review_graph().compile(checkpointer=checkpointer, step_limit=STEP_LIMIT)
        t2 = time.perf_counter()
        answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in paused.interrupts]
        done = resumed_app.invoke(answers, thread_id=thread_id)
        elapsed = time.perf_counter() - t0
        close_storage(checkpointer)  # outside the clock: a fresh process would just exit
        assert paused.stop_reason == "interrupt", paused.stop_reason
        assert len(paused.interrupts) == 1
        assert done.stop_reason == "end", done.stop_reason
        assert done.state.n == 1
        rebuild_samples.append((t2 - t1) * 1e3)
        return elapsed

    return trial


def bench(cfg: Config, urls: dict[str, str]) -> list[BackendResult]:
    rebuilds: dict[str, list[float]] = {name: [] for name in urls}
    trials = {name: roundtrip_trial(url, rebuilds[name]) for name, url in urls.items()}
    raw = run_interleaved(trials, cfg.roundtrip_warmup, cfg.roundtrip_reps, "rt")
    results = []
    for name, url in urls.items():
        samples = to_ms(raw[name])
        rebuild = rebuilds[name][cfg.roundtrip_warmup :]  # the trial also recorded the warm-ups
        result = BackendResult(
            backend=name,
            url=url,
            roundtrip_ms=statistics.median(samples),
            rebuild_ms=statistics.median(rebuild),
            chain=count_chain(url),
            resume=count_resume(url),
            roundtrip_samples_ms=samples,
            rebuild_samples_ms=rebuild,
        )
        print(f"  done: {name}: round trip {fmt(result.roundtrip_ms)} ms", file=sys.stderr)
        results.append(result)
    return results


# --------------------------------------------------------------------------- output


def kinds(counts: dict[str, int], divisor: int = 1) -> str:
    if not counts:
        return "n/a"
    parts = []
    for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        value = n / divisor
        parts.append(f"{kind} {value:g}" if divisor == 1 else f"{kind} {value:.2f}")
    return ", ".join(parts)


def markdown_table(results: list[BackendResult]) -> str:
    lines = [
        "| backend | round trip (ms) | of which from_url + compile (ms) | storage calls / step | AWS requests / step "
        "| resume: storage calls | resume: AWS requests |",
        "| --- | ---: | ---: | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r.backend} | {fmt(r.roundtrip_ms)} | {fmt(r.rebuild_ms)} | {kinds(r.chain.storage, CHAIN_NODES)} "
            f"| {kinds(r.chain.api, CHAIN_NODES)} | {kinds(r.resume.storage)} | {kinds(r.resume.api)} |"
        )
    return "\n".join(lines)


def versions() -> dict[str, str]:
    out = {dist: version(dist) for dist in ("statehitl", "statehitl-checkpoint-s3", "statehitl-checkpoint-dynamodb",
                                            "boto3", "moto")}
    from statehitl_checkpoint_dynamodb.local import NPM_PACKAGE

    out["dynamodb_local"] = NPM_PACKAGE
    return out


def main(argv: list[str] | None = None) -> int:
    # --only and --lg-durability concern LangGraph, which this script does not run: accepted and ignored.
    args = bench_arguments(__doc__, "backends.json").parse_args(argv)
    cfg = Config.quick() if args.quick else Config()
    with scratch_dir(args.tmpdir) as workdir, aws_servers(workdir) as (s3_ep, ddb_ep):
        create_bucket_and_table(s3_ep, ddb_ep, BUCKET, TABLE)
        urls = backend_urls(workdir, s3_ep, ddb_ep)
        env: dict[str, Any] = {
            **base_environment(),
            "versions": versions(),
            "chain_nodes": CHAIN_NODES,
            "config": asdict(cfg),
        }
        results = bench(cfg, urls)

    table = markdown_table(results)
    print(table)
    payload = {
        "environment": env,
        "results": [{**asdict(r), "chain_per_step": r.chain.per(CHAIN_NODES)} for r in results],
        "table_markdown": table,
    }
    write_results(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
