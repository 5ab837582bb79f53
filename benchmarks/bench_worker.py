"""Worker benchmark: `statehitl worker` processes resuming answered threads on their own, under chaos.

Run from the repository root:

    uv run python benchmarks/bench_worker.py            # the full run (about 25 minutes)
    uv run python benchmarks/bench_worker.py --quick    # a smoke run: small numbers, don't quote them

On DynamoDB Local (the workers read the table's stream) and on the file store (they poll the index),
three phases, each on a fresh table or directory:

1. **Throughput.** The same work, answering N threads and resuming them, done two ways: the app's own
   process answers each thread and resumes it (`answer_waiting` then `invoke(None)`, 8 at a time), and a
   driver answers the same way while one worker process resumes them; three rounds of each, taking
   turns, medians. Resumes per second per worker, and the worker's time over the direct time (target:
   at most 1.2x), with the CPU both ways take.
2. **Latency.** Four workers; answers arrive at a steady rate (10/s); for each, the time from the answer's
   write (its stored `answered_at`) to the resumed run's completion (its last checkpoint's
   `created_at`). p50 and p99 (target on DynamoDB Local: p50 <= 250 ms, p99 <= 1 s).
3. **Chaos.** Four workers with `--retry-unknown --lease 2`; 2,000 threads answered at a steady rate (5/s) and
   500 with deadlines, each answered late around its deadline (the default and the answer race); one
   worker killed with SIGKILL every ~2 s and restarted at once. Then: threads lost (not completed),
   side effects doubled (an action that took effect twice, or under two keys), audit entries per
   applied answer (exactly one), re-runs absorbed by the idempotency key, and the latencies.

In phases 2 and 3 a tenth of the threads act slowly (a sync node blocking 1.5 s: the others must go on
meanwhile; their latency is left out of the percentiles, which measure the rest), and every answer is
sent to a flaky webhook receiver (`worker_workload.FlakyReceiver`: a fifth of the deliveries refused
with 503, and in phase 3 down for a while): every answer event must reach it (through the workers'
outbox), none lost.

The app and the ledger are in worker_workload.py. Progress goes to stderr; the tables to stdout; every
number and the environment to benchmarks/results/worker.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.aws import DYNAMODB_LOCAL_DIR, REGION
from harness.cli import bench_arguments
from harness.environment import base_environment, filesystem, scratch_dir, version, write_results
from worker_workload import (
    LEDGER_ENV,
    STORE_ENV,
    FlakyReceiver,
    app_on,
    applied_count,
    ledger_applied,
    ledger_attempts,
    ledger_reset,
)

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.index import read_index
from statehitl.errors import AlreadyAnsweredError, NotInterruptedError, UnknownInterruptError
from statehitl.inbox.answers import answer_waiting
from statehitl.resumable import resume_stored
from statehitl.worker.notify import read_outbox

HERE = Path(__file__).resolve().parent
BACKENDS = ("dynamodb", "file")
ANSWERS_AT_ONCE = 8
"""Concurrent answers (and, for the direct way, answer + resume) in the throughput phase: the worker's own
default concurrency, so both ways keep as many threads in flight."""


@dataclass(frozen=True)
class Config:
    throughput_threads: int = 300
    throughput_rounds: int = 3
    latency_threads: int = 400
    latency_rate: float = 10.0
    answered: int = 2000
    expiring: int = 500
    chaos_rate: float = 5.0
    """Answers per second in the chaos phase: what a 2-core machine sustains with four workers racing for
    every answer and one restarting (a new interpreter, its imports, its first pass) every two seconds."""
    kill_every: float = 2.0
    workers: int = 4
    lease: float = 2.0
    interval: float = 0.2
    """The workers' --interval on DynamoDB (their timers: deadlines, held threads)."""
    slow_share: float = 0.1
    """The share of the threads of phases 2 and 3 whose action is a slow sync call (``SLOW_SECONDS``)."""
    webhook_fail_rate: float = 0.2
    """The share of webhook deliveries the receiver refuses (503)."""
    webhook_down: float = 10.0
    """Seconds the receiver is down in the middle of phase 3."""
    delivery_schedule: str = "0.5,1,2,4,8,16,32"
    """The workers' --delivery-schedule: the outbox's pauses between failed rounds (short, for a benchmark)."""
    file_interval: float = 0.5
    """The workers' --interval on the file store, a pass over the whole index each: 4 workers passing over
    2,500 threads every 0.2 s took a core of this machine's two; four at 0.5 s, staggered, still look
    every 0.125 s on average."""

    def interval_on(self, backend: str) -> float:
        return self.file_interval if backend == "file" else self.interval

    @classmethod
    def quick(cls) -> Config:
        return cls(throughput_threads=40, throughput_rounds=1, latency_threads=40, answered=100, expiring=25)


def log(message: str) -> None:
    print(f"[bench_worker {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --------------------------------------------------------------------------- stores and worker processes


class Stores:
    """A fresh store per phase (and per throughput round): a directory, or a DynamoDB table with its stream on,
    on a DynamoDB Local of its own.

    Why a new DynamoDB Local each time: it keeps every table's stream records in one store of its own that a
    deleted table does not empty, and each ``GetRecords`` costs more the more records it holds (8 ms on a
    new server, 15 ms after 20,000 writes to another table, 21 ms once that table was deleted). With four
    workers asking ten times a second, the server spent its CPU on the earlier phases' records: the latency
    phase measured after the throughput rounds took 13 s a resume instead of 50 ms. AWS keeps a stream
    per table, read per shard, so a fresh server is what each phase would meet there."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.made = 0
        self.server: Any = None

    def fresh(self, backend: str) -> str:
        self.made += 1
        if backend == "file":
            return f"file://{self.workdir / f'store-{self.made}'}"
        from statehitl_checkpoint_dynamodb import create_table
        from statehitl_checkpoint_dynamodb.local import DynamoDBLocal

        self.close()
        self.server = DynamoDBLocal(DYNAMODB_LOCAL_DIR, heap="2g")
        endpoint = self.server.start()
        table = f"bench-worker-{self.made}"
        create_table({"region_name": REGION, "endpoint_url": endpoint}, table, stream=True)
        return f"dynamodb://{table}?region={REGION}&endpoint_url={endpoint}"

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


SECRET = b"bench-worker-webhook-secret"


def hook_args(cfg: Config, receiver: FlakyReceiver, workdir: Path) -> list[str]:
    """The workers' options that send every answer to ``receiver`` through their outbox."""
    secret = workdir / "webhook-secret"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    return ["--on-answer", receiver.url, "--webhook-secret-file", str(secret), "--delivery-schedule",
            cfg.delivery_schedule]


def slow_ones(names: list[str], share: float, seed: int) -> frozenset[str]:
    rng = random.Random(seed)
    return frozenset(name for name in names if rng.random() < share)


async def events_delivered(receiver: FlakyReceiver, expected: set[str], checkpointer: Checkpointer,
                           timeout: float = 180.0) -> dict[str, Any]:
    """Wait until ``receiver`` took the answer event of every thread in ``expected`` (or ``timeout``): what
    reached it, once each, and what did not, split by where it is. An event still in the workers' outbox
    (tried again later, or given up and waiting for ``statehitl deliveries --retry``) is late, not lost: only
    one neither delivered nor in the outbox is lost. A loaded machine stretches the outbox's backoff past the
    wait, so "not delivered in time" alone says little."""
    with contextlib.suppress(TimeoutError):
        await until(lambda: expected <= receiver.answered(), timeout, "every answer event")
    got = receiver.answered()
    missing = expected - got
    outbox = [entry for entry, _ in (await read_outbox(checkpointer)).values()
              if entry.event_kind == "answer" and entry.thread_id in missing]
    waiting = {e.thread_id for e in outbox if e.state != "failed"}
    given_up = {e.thread_id for e in outbox if e.state == "failed"} - waiting
    lost = sorted(missing - waiting - given_up)
    return {"events_expected": len(expected), "events_lost": len(lost), "events_lost_threads": lost[:20],
            "events_late_in_outbox": len(waiting), "events_given_up_in_outbox": len(given_up),
            "event_copies": receiver.copies, "deliveries_refused": receiver.refused,
            "bad_signatures": receiver.bad_signatures}


class Fleet:
    """``statehitl worker`` processes on one store, each restartable in its slot; logs under ``logs``."""

    def __init__(self, store: str, ledger: Path, logs: Path, args: list[str]) -> None:
        self.store = store
        self.args = args
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, STORE_ENV: store, LEDGER_ENV: str(ledger),
                    "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
        self.processes: list[subprocess.Popen[bytes]] = []
        self.started = 0
        self.kills = 0

    def start(self, slot: int | None = None) -> None:
        self.started += 1
        log_file = open(self.logs / f"worker-{self.started}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen([sys.executable, "-m", "statehitl.cli", "worker", "--app", "worker_workload:build",
                                    "--store", self.store, *self.args], env=self.env, stdout=log_file,
                                   stderr=log_file)
        log_file.close()
        if slot is None:
            self.processes.append(process)
        else:
            self.processes[slot] = process

    def kill_and_restart(self, slot: int) -> None:
        self.processes[slot].send_signal(signal.SIGKILL)
        self.processes[slot].wait()
        self.kills += 1
        self.start(slot)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def ready(self) -> bool:
        """Whether every worker started so far says it is watching its store."""
        return all("watching" in p.read_text(errors="replace") for p in self.logs.glob("worker-*.log"))

    async def started_all(self) -> None:
        """Wait until every worker watches its store; on a timeout, the workers' logs say why."""
        try:
            await until(self.ready, 120, "the workers' start")
        except TimeoutError:
            for path in sorted(self.logs.glob("worker-*.log")):
                log(f"{path.name}: {path.read_text(errors='replace')[-2000:]}")
            raise


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds a process has used so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def warm_up(checkpointer: Checkpointer, app: Any, ledger: Path, count: int = 8) -> None:
    """Answer ``count`` threads one after the other, each once the last is done: every worker then has built
    the app and run a resume (a fresh process's first one pays for its imports: about a second)."""
    names = [f"warm-up-{i}" for i in range(count)]
    ids = await create(app, names)
    for name in names:
        before = applied_count(ledger)
        await answer(checkpointer, name, ids[name], "approve")
        await until(lambda before=before: applied_count(ledger) > before, 60, "a warm-up resume")


async def until(done: Any, timeout: float, what: str, pause: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f}s")
        await asyncio.sleep(pause)


# --------------------------------------------------------------------------- the driver


async def create(app: Any, names: list[str], deadlines: dict[str, float] | None = None,
                 slow: frozenset[str] = frozenset()) -> dict[str, str]:
    """New threads, each stopped at its approval (those in ``slow`` acting slowly); their interrupt ids."""
    slots = asyncio.Semaphore(16)
    found: dict[str, str] = {}

    async def one(name: str) -> None:
        async with slots:
            state = {"thread": name, "expires_at": (deadlines or {}).get(name), "slow": name in slow}
            found[name] = (await app.ainvoke(state, thread_id=name)).interrupts[0].id

    await asyncio.gather(*(one(n) for n in names))
    return found


async def answer(checkpointer: Checkpointer, thread: str, interrupt_id: str, response: str,
                 responder: str = "reviewer") -> float | None:
    """Answer through the inbox's door; the stored ``answered_at``, or None when something else came first."""
    try:
        stored = await answer_waiting(checkpointer, thread, interrupt_id, response, responder=responder, via="inbox")
    except (AlreadyAnsweredError, NotInterruptedError, UnknownInterruptError):
        return None
    return stored.answered_at if stored.responder == responder else None


async def finals(checkpointer: Checkpointer, names: list[str]) -> dict[str, Any]:
    """Each thread's newest checkpoint (its status and when it was written)."""
    slots = asyncio.Semaphore(16)
    found: dict[str, Any] = {}

    async def one(name: str) -> None:
        async with slots:
            found[name] = await checkpointer.latest(name)

    await asyncio.gather(*(one(n) for n in names))
    return found


# --------------------------------------------------------------------------- phase 1: throughput


async def direct_round(backend: str, stores: Stores, n: int, ledger: Path) -> tuple[float, float]:
    """The app's own process answers, then resumes, each of ``n`` new threads (8 at a time): seconds, CPU."""
    slots = asyncio.Semaphore(ANSWERS_AT_ONCE)
    store = stores.fresh(backend)
    ledger_reset(ledger)
    checkpointer = Checkpointer.from_url(store)
    app = app_on(store)
    names = [f"direct-{i}" for i in range(n + 1)]
    ids = await create(app, names)
    await answer(checkpointer, names[0], ids[names[0]], "approve")
    await resume_stored(app, names[0])  # warm-up: the first resume of a process pays for its imports

    async def direct(name: str) -> None:
        async with slots:
            await answer(checkpointer, name, ids[name], "approve")
            await resume_stored(app, name)

    t0, cpu0 = time.time(), time.process_time()
    await asyncio.gather(*(direct(name) for name in names[1:]))
    seconds, cpu = time.time() - t0, time.process_time() - cpu0
    assert applied_count(ledger) == n + 1
    return seconds, cpu


async def worker_round(backend: str, stores: Stores, cfg: Config, n: int, ledger: Path, logs: Path
                       ) -> tuple[float, float, float]:
    """A driver answers ``n`` new threads the same way while one worker process resumes them: seconds from
    the first answer to the last resume's end, the driver's CPU and the worker's."""
    slots = asyncio.Semaphore(ANSWERS_AT_ONCE)
    store = stores.fresh(backend)
    ledger_reset(ledger)
    checkpointer = Checkpointer.from_url(store)
    names = [f"worker-{i}" for i in range(n + 1)]
    ids = await create(app_on(store), names)
    fleet = Fleet(store, ledger, logs, ["--interval", str(cfg.interval)])
    fleet.start()
    try:
        await fleet.started_all()
        await answer(checkpointer, names[0], ids[names[0]], "approve")
        await until(lambda: applied_count(ledger) == 1, 60, "the warm-up resume")

        async def answered(name: str) -> None:
            async with slots:
                await answer(checkpointer, name, ids[name], "approve")

        worker_cpu0 = cpu_seconds(fleet.processes[0].pid)
        t0, cpu0 = time.time(), time.process_time()
        await asyncio.gather(*(answered(name) for name in names[1:]))
        answers_cpu = time.process_time() - cpu0
        await until(lambda: applied_count(ledger) == n + 1, 300, "the worker's resumes")
        worker_cpu = cpu_seconds(fleet.processes[0].pid) - worker_cpu0
        last = max(record.created_at for record in (await finals(checkpointer, names[1:])).values())
    finally:
        fleet.stop()
    return last - t0, answers_cpu, worker_cpu


async def throughput(backend: str, stores: Stores, cfg: Config, ledger: Path, workdir: Path) -> dict[str, Any]:
    """Rounds of the two ways, taking turns (this machine's load moves: a turn each keeps them fair); medians."""
    n = cfg.throughput_threads
    direct: list[tuple[float, float]] = []
    worker: list[tuple[float, float, float]] = []
    for r in range(cfg.throughput_rounds):
        direct.append(await direct_round(backend, stores, n, ledger))
        worker.append(await worker_round(backend, stores, cfg, n, ledger, workdir / f"logs-throughput-{backend}-{r}"))
    direct_seconds = statistics.median(d[0] for d in direct)
    worker_seconds = statistics.median(w[0] for w in worker)
    direct_cpu = statistics.median(d[1] for d in direct)
    answers_cpu = statistics.median(w[1] for w in worker)
    worker_cpu = statistics.median(w[2] for w in worker)
    result = {
        "backend": backend, "threads": n, "rounds": cfg.throughput_rounds,
        "direct_seconds": [d[0] for d in direct], "worker_seconds": [w[0] for w in worker],
        "direct_per_second": n / direct_seconds, "worker_per_second": n / worker_seconds,
        "cost_ratio": worker_seconds / direct_seconds,
        "direct_cpu_ms_per_resume": 1000 * direct_cpu / n, "answers_cpu_ms_per_thread": 1000 * answers_cpu / n,
        "worker_cpu_ms_per_resume": 1000 * worker_cpu / n,
        "cpu_ratio": (answers_cpu + worker_cpu) / direct_cpu,
    }
    log(f"throughput on {backend}: direct {result['direct_per_second']:.1f}/s, one worker "
        f"{result['worker_per_second']:.1f}/s, {result['cost_ratio']:.2f}x the time, "
        f"{result['cpu_ratio']:.2f}x the CPU")
    return result


# --------------------------------------------------------------------------- phase 2: latency


async def steady_answers(checkpointer: Checkpointer, ids: dict[str, str], names: list[str], rate: float,
                         responder: str = "reviewer") -> dict[str, float]:
    """Answer ``names`` at ``rate`` per second (each on its own schedule, whatever the last one took)."""
    start = time.time()
    answered: dict[str, float] = {}

    async def one(i: int, name: str) -> None:
        await asyncio.sleep(max(0.0, start + i / rate - time.time()))
        at = await answer(checkpointer, name, ids[name], "approve", responder)
        if at is not None:
            answered[name] = at

    await asyncio.gather(*(one(i, n) for i, n in enumerate(names)))
    return answered


def latencies(answered: dict[str, float], done: dict[str, Any]) -> list[float]:
    return [done[name].created_at - at for name, at in answered.items()
            if done.get(name) is not None and done[name].status == "completed"]


async def latency(backend: str, stores: Stores, cfg: Config, ledger: Path, workdir: Path) -> dict[str, Any]:
    store = stores.fresh(backend)
    ledger_reset(ledger)
    checkpointer = Checkpointer.from_url(store)
    names = [f"steady-{i}" for i in range(cfg.latency_threads)]
    slow = slow_ones(names, cfg.slow_share, 2026)
    ids = await create(app_on(store), names, slow=slow)
    with FlakyReceiver(SECRET, cfg.webhook_fail_rate) as receiver:
        fleet = Fleet(store, ledger, workdir / f"logs-latency-{backend}",
                      ["--interval", str(cfg.interval_on(backend)), *hook_args(cfg, receiver, workdir)])
        for _ in range(cfg.workers):
            fleet.start()
        try:
            await fleet.started_all()
            await warm_up(checkpointer, app_on(store), ledger)
            warmed = applied_count(ledger)
            answered = await steady_answers(checkpointer, ids, names, cfg.latency_rate)
            await until(lambda: applied_count(ledger) == warmed + len(names), 300, "the resumes")
            done = await finals(checkpointer, names)
            events = await events_delivered(receiver, set(names), checkpointer)
        finally:
            fleet.stop()
    seconds = latencies({n: a for n, a in answered.items() if n not in slow}, done)
    attempts = Counter(key for key, _ in ledger_attempts(ledger))
    result = {"backend": backend, "workers": cfg.workers, "threads": len(names), "rate": cfg.latency_rate,
              "slow_threads": len(slow), "p50_ms": 1000 * percentile(seconds, 0.5),
              "p99_ms": 1000 * percentile(seconds, 0.99), "max_ms": 1000 * max(seconds),
              "ran_twice": sum(1 for n in attempts.values() if n > 1), **events}
    log(f"latency on {backend}: p50 {result['p50_ms']:.0f} ms, p99 {result['p99_ms']:.0f} ms ({len(slow)} slow "
        f"threads left out); events lost {events['events_lost']}, refused deliveries {events['deliveries_refused']}")
    return result


# --------------------------------------------------------------------------- phase 3: chaos


async def chaos(backend: str, stores: Stores, cfg: Config, ledger: Path, workdir: Path) -> dict[str, Any]:
    rng = random.Random(2026_12_05)
    store = stores.fresh(backend)
    ledger_reset(ledger)
    checkpointer = Checkpointer.from_url(store)
    app = app_on(store)
    answering = cfg.answered / cfg.chaos_rate
    answered_names = [f"answer-{i}" for i in range(cfg.answered)]
    expiring_names = [f"expire-{i}" for i in range(cfg.expiring)]
    log(f"chaos on {backend}: creating {len(answered_names) + len(expiring_names)} threads")
    t0 = time.time()
    lead = 15.0  # the workers start and warm up before the first deadline
    deadlines = {name: 0.0 for name in expiring_names}  # set below, once creating took what it took
    slow = slow_ones(answered_names, cfg.slow_share, 2027)
    ids = await create(app, answered_names, slow=slow)
    begin = time.time() + lead
    for name in expiring_names:
        deadlines[name] = begin + rng.uniform(0.0, answering)
    ids.update(await create(app, expiring_names, deadlines))
    log(f"chaos on {backend}: {len(ids)} threads made in {time.time() - t0:.0f}s")
    receiver = FlakyReceiver(SECRET, cfg.webhook_fail_rate).__enter__()
    fleet = Fleet(store, ledger, workdir / f"logs-chaos-{backend}",
                  ["--interval", str(cfg.interval_on(backend)), "--lease", str(cfg.lease), "--retry-unknown",
                   *hook_args(cfg, receiver, workdir)])
    for _ in range(cfg.workers):
        fleet.start()
    stop_killing = asyncio.Event()

    async def outage() -> None:
        await asyncio.sleep(answering / 2)
        receiver.down()
        await asyncio.sleep(cfg.webhook_down)
        receiver.up()

    async def killer() -> None:
        while not stop_killing.is_set():
            await asyncio.sleep(cfg.kill_every * rng.uniform(0.75, 1.25))
            if not stop_killing.is_set():
                fleet.kill_and_restart(rng.randrange(cfg.workers))

    async def late(name: str) -> tuple[str, float | None]:
        await asyncio.sleep(max(0.0, deadlines[name] + rng.uniform(-0.25, 0.25) - time.time()))
        return name, await answer(checkpointer, name, ids[name], "approve-late", "late-reviewer")

    everything = answered_names + expiring_names
    try:
        await fleet.started_all()
        await warm_up(checkpointer, app, ledger)
        warmed = applied_count(ledger)
        await asyncio.sleep(max(0.0, begin - time.time()))
        killing = asyncio.create_task(killer())
        down = asyncio.create_task(outage())
        late_answers = [asyncio.create_task(late(name)) for name in expiring_names]
        answered = await steady_answers(checkpointer, ids, answered_names, cfg.chaos_rate)
        late_won = dict(await asyncio.gather(*late_answers))
        await asyncio.sleep(2 * cfg.kill_every)  # keep killing a little while after the last answer
        stop_killing.set()
        await killing
        log(f"chaos on {backend}: answering done, {fleet.kills} kills; waiting for the stragglers")
        with_timeout = asyncio.create_task(until(lambda: applied_count(ledger) == warmed + len(everything), 180,
                                                 "completion"))
        try:
            await with_timeout
        except TimeoutError as exc:
            log(f"chaos on {backend}: {exc}")
        settled = time.time()
        await asyncio.sleep(1.0)  # a second, wrong run would show in this second
        done = await finals(checkpointer, everything)
        # Every action took effect, but a thread whose worker died after its action and before its record is
        # still being recovered (an unknown outcome, retried under its key): give those the rest of the wait.
        while (unfinished := [n for n, r in done.items() if r is None or r.status != "completed"]) and (
                time.time() < settled + 180):
            await asyncio.sleep(2.0)
            done.update(await finals(checkpointer, unfinished))
        await explain_lost(backend, checkpointer, done, fleet.logs)
        await down
        events = await events_delivered(receiver, set(everything), checkpointer)
        if events["events_lost"] or any(r is None or r.status != "completed" for r in done.values()):
            kept = Path(tempfile.mkdtemp(prefix=f"statehitl-worker-logs-{backend}-"))  # outlives the scratch dir
            shutil.copytree(fleet.logs, kept, dirs_exist_ok=True)
            log(f"chaos on {backend}: the workers' logs are kept in {kept}")
    finally:
        fleet.stop()
        receiver.__exit__(None, None, None)
    report = chaos_report(backend, cfg, fleet.kills, checkpointer, ledger,
                          {t: a for t, a in answered.items() if t not in slow}, late_won, deadlines, done,
                          settled - begin, await audits(checkpointer, everything))
    report.update(slow_threads=len(slow), **events)
    log(f"chaos on {backend}: events lost {events['events_lost']} {events['events_lost_threads'][:5]} (late, "
        f"still in the outbox: "
        f"{events['events_late_in_outbox']}, given up: {events['events_given_up_in_outbox']}), copies "
        f"{events['event_copies']}, refused deliveries {events['deliveries_refused']}")
    return report


async def explain_lost(backend: str, checkpointer: Checkpointer, done: dict[str, Any], logs: Path,
                       shown: int = 3) -> None:
    """For the first threads not completed: their newest checkpoint, its claim, their index entry (what a
    polling worker goes by) and the workers' last log lines about them, so a loss can be told from a thread
    still paused after failures."""
    lost = sorted(n for n, record in done.items() if record is None or record.status != "completed")
    for name in lost[:shown]:
        head = await checkpointer.head(name)
        entry = await read_index(checkpointer.storage, name, checkpointer.signing_key)
        log(f"chaos on {backend}: not completed: {name}: "
            + ("no checkpoint" if head is None else
               f"{head.record.status} at seq {head.record.seq}, lease_until {head.record.lease_until}, "
               f"claim {head.claim!r}")
            + f"; index entry: {entry!r}")
        pattern = re.compile(rf"\b{re.escape(name)}\b(?!-)")
        lines = [line for path in sorted(logs.glob("*")) if path.is_file()
                 for line in path.read_text(errors="replace").splitlines() if pattern.search(line)]
        for line in lines[-8:]:
            log(f"    {line[:300]}")


async def audits(checkpointer: Checkpointer, names: list[str]) -> dict[str, list[Any]]:
    slots = asyncio.Semaphore(16)
    found: dict[str, list[Any]] = {}

    async def one(name: str) -> None:
        async with slots:
            found[name] = await checkpointer.audit(name)

    await asyncio.gather(*(one(n) for n in names))
    return found


def chaos_report(backend: str, cfg: Config, kills: int, checkpointer: Checkpointer, ledger: Path,
                 answered: dict[str, float], late_won: dict[str, float | None], deadlines: dict[str, float],
                 done: dict[str, Any], seconds: float, trails: dict[str, list[Any]]) -> dict[str, Any]:
    del checkpointer
    applied = {k: v for k, v in ledger_applied(ledger).items() if not v.startswith("warm-up")}
    attempts = [(k, v) for k, v in ledger_attempts(ledger) if not v.startswith("warm-up")]
    keys_per_thread: Counter[str] = Counter(what.split()[0] for what in applied.values())
    runs_per_key = Counter(key for key, _ in attempts)
    lost = sorted(n for n, record in done.items() if record is None or record.status != "completed")
    # The ledger applies a key once (O_EXCL), as a service honouring idempotency keys does: an action took
    # effect twice only if it ran under a second key, which would show as two applied keys for its thread.
    doubled = sorted(t for t, keys in keys_per_thread.items() if keys > 1)
    applied_rows = {t: sum(1 for e in trail if e.outcome in ("applied", "edited", "rejected")) for t, trail in
                    trails.items()}
    retried = {t for t, trail in trails.items() if any(e.outcome == "retried" for e in trail)}
    hit = {t for t, trail in trails.items() if any(e.outcome in ("retried", "unknown") for e in trail)}
    all_lat = latencies(answered, done)
    calm_lat = latencies({t: a for t, a in answered.items() if t not in hit}, done)
    hit_lat = latencies({t: a for t, a in answered.items() if t in hit}, done)
    expiry_wins = sum(1 for t in deadlines if trails[t] and trails[t][0].via == "expiry")
    late_wins = sum(1 for t in deadlines if trails[t] and trails[t][0].via == "inbox")
    after_deadline = [done[t].created_at - deadlines[t] for t in deadlines
                      if trails[t] and trails[t][0].via == "expiry" and done[t] is not None]
    result = {
        "backend": backend, "workers": cfg.workers, "answered": cfg.answered, "expiring": cfg.expiring,
        "kills": kills, "seconds": seconds, "lost": len(lost), "lost_threads": lost[:20],
        # what a thread not completed in time was left as: "interrupted" with its answer stored is late (a
        # worker resumes it on its next pass), anything else is the bug this phase hunts
        "lost_by_status": dict(Counter("missing" if done[n] is None else done[n].status for n in lost)),
        "doubled_side_effects": len(doubled),
        "actions_run": len(attempts), "actions_applied": len(applied),
        "reruns_absorbed_by_key": len(attempts) - len(applied),
        "keys_run_more_than_once": sum(1 for n in runs_per_key.values() if n > 1),
        "threads_with_not_one_applied_audit_row": sum(1 for n in applied_rows.values() if n != 1),
        "audit_rows_per_applied_answer": (sum(applied_rows.values()) / max(1, len(applied_rows))),
        "threads_retried_after_unknown_outcome": len(retried),
        "expiry_won": expiry_wins, "late_answer_won": late_wins,
        "late_answers_refused": sum(1 for v in late_won.values() if v is None),
        "p50_ms": 1000 * percentile(all_lat, 0.5), "p99_ms": 1000 * percentile(all_lat, 0.99),
        "calm_p50_ms": 1000 * percentile(calm_lat, 0.5), "calm_p99_ms": 1000 * percentile(calm_lat, 0.99),
        "hit_by_kill": len(hit_lat), "hit_p50_ms": 1000 * percentile(hit_lat, 0.5),
        "expiry_applied_after_deadline_p50_ms": 1000 * percentile(after_deadline, 0.5),
        "expiry_applied_after_deadline_p99_ms": 1000 * percentile(after_deadline, 0.99),
    }
    log(f"chaos on {backend}: {kills} kills, lost {result['lost']}, doubled {result['doubled_side_effects']}, "
        f"audit rows not one: {result['threads_with_not_one_applied_audit_row']}, p50 {result['p50_ms']:.0f} ms, "
        f"p99 {result['p99_ms']:.0f} ms")
    return result


# --------------------------------------------------------------------------- output


def tables(runs: dict[str, list[dict[str, Any]]]) -> str:
    out = ["| backend | threads | direct resumes/s | one worker resumes/s | worker / direct time | CPU ms per thread: "
           "direct / answers + worker | worker / direct CPU |",
           "| --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in runs["throughput"]:
        out.append(f"| {r['backend']} | {r['threads']} | {r['direct_per_second']:.1f} | "
                   f"{r['worker_per_second']:.1f} | {r['cost_ratio']:.2f}x | {r['direct_cpu_ms_per_resume']:.2f} / "
                   f"{r['answers_cpu_ms_per_thread']:.2f} + {r['worker_cpu_ms_per_resume']:.2f} | "
                   f"{r['cpu_ratio']:.2f}x |")
    out += ["", "| backend | workers | answers (slow) | rate /s | p50 ms | p99 ms | max ms | actions run twice | "
            "answer events lost / refused deliveries |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in runs["latency"]:
        out.append(f"| {r['backend']} | {r['workers']} | {r['threads']} ({r['slow_threads']}) | {r['rate']:g} | "
                   f"{r['p50_ms']:.0f} | {r['p99_ms']:.0f} | {r['max_ms']:.0f} | {r['ran_twice']} | "
                   f"{r['events_lost']} / {r['deliveries_refused']} |")
    out += ["", "| backend | answered + expiring | kills | lost | doubled side effects | applied audit rows per "
            "answer | threads retried after a kill | re-runs absorbed by the key | expiry / late answer won | "
            "p50 / p99 ms (all) | p50 / p99 ms (no kill) | expiry applied after deadline p50 / p99 ms | "
            "slow threads | answer events lost / copies / refused deliveries |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | ---: | --- |"]
    for r in runs["chaos"]:
        out.append(
            f"| {r['backend']} | {r['answered']} + {r['expiring']} | {r['kills']} | {r['lost']} | "
            f"{r['doubled_side_effects']} | {r['audit_rows_per_applied_answer']:.3f} "
            f"({r['threads_with_not_one_applied_audit_row']} threads not 1) | "
            f"{r['threads_retried_after_unknown_outcome']} | {r['reruns_absorbed_by_key']} | "
            f"{r['expiry_won']} / {r['late_answer_won']} | "
            f"{r['p50_ms']:.0f} / {r['p99_ms']:.0f} | {r['calm_p50_ms']:.0f} / {r['calm_p99_ms']:.0f} | "
            f"{r['expiry_applied_after_deadline_p50_ms']:.0f} / {r['expiry_applied_after_deadline_p99_ms']:.0f} | "
            f"{r['slow_threads']} | {r['events_lost']} / {r['event_copies']} / {r['deliveries_refused']} |")
    return "\n".join(out)


def check(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    failures = []
    for r in runs["chaos"]:
        if r["lost"]:
            failures.append(f"chaos on {r['backend']}: {r['lost']} threads lost ({r['lost_threads']})")
        if r["doubled_side_effects"]:
            failures.append(f"chaos on {r['backend']}: {r['doubled_side_effects']} side effects doubled")
        if r["threads_with_not_one_applied_audit_row"]:
            failures.append(f"chaos on {r['backend']}: {r['threads_with_not_one_applied_audit_row']} threads without "
                            "exactly one applied audit row")
    for r in runs["latency"]:
        if r["ran_twice"]:
            failures.append(f"latency on {r['backend']}: {r['ran_twice']} actions ran twice without a kill")
    for phase in ("latency", "chaos"):
        for r in runs[phase]:
            if r["events_lost"] or r["bad_signatures"]:
                failures.append(f"{phase} on {r['backend']}: {r['events_lost']} answer events lost, "
                                f"{r['bad_signatures']} badly signed")
    return failures


async def run_all(cfg: Config, backends: tuple[str, ...], workdir: Path, phases: tuple[str, ...]
                  ) -> dict[str, list[dict[str, Any]]]:
    stores = Stores(workdir)
    ledger = workdir / "ledger"
    os.environ[LEDGER_ENV] = str(ledger)
    ledger_reset(ledger)
    runs: dict[str, list[dict[str, Any]]] = {"throughput": [], "latency": [], "chaos": []}
    try:
        for backend in backends:
            if "throughput" in phases:
                runs["throughput"].append(await throughput(backend, stores, cfg, ledger, workdir))
            if "latency" in phases:
                runs["latency"].append(await latency(backend, stores, cfg, ledger, workdir))
            if "chaos" in phases:
                runs["chaos"].append(await chaos(backend, stores, cfg, ledger, workdir))
    finally:
        stores.close()
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = bench_arguments(__doc__, "worker.json")
    parser.add_argument("--backend", choices=BACKENDS, action="append", help="only these backends (repeatable)")
    parser.add_argument("--phase", choices=("throughput", "latency", "chaos"), action="append",
                        help="only these phases (repeatable)")
    parser.add_argument("--rate", type=float, help="answers per second in the latency and chaos phases")
    args = parser.parse_args(argv)
    cfg = Config.quick() if args.quick else Config()
    if args.rate is not None:
        cfg = dataclasses.replace(cfg, latency_rate=args.rate, chaos_rate=args.rate)
    backends = tuple(args.backend or BACKENDS)
    phases = tuple(args.phase or ("throughput", "latency", "chaos"))
    from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

    for name in AWS_ENV_TO_CLEAR:
        os.environ.pop(name, None)
    os.environ.update(DUMMY_AWS_ENV)
    with scratch_dir(args.tmpdir) as workdir:
        env: dict[str, Any] = {**base_environment(), "config": asdict(cfg), "workdir": str(workdir),
                               "filesystem": filesystem(workdir),
                               "versions": {d: version(d) for d in ("statehitl", "boto3")}}
        if "dynamodb" in backends:
            from statehitl_checkpoint_dynamodb.local import NPM_PACKAGE

            env["versions"]["dynamodb_local"] = NPM_PACKAGE
        runs = asyncio.run(run_all(cfg, backends, workdir, phases))
    table = tables(runs)
    failures = check(runs)
    print(table)
    if failures:
        print("\nFAILED: " + "; ".join(failures))
    write_results(args.out, {"environment": env, "runs": runs, "table_markdown": table, "failures": failures})
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
