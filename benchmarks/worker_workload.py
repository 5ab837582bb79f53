"""What bench_worker.py's workers resume, and what its driver does to the store.

The app is a StateGraph that asks a human before it acts: `ask` interrupts (with a deadline and a
default for the threads that have one), `act` records the approved action in a ledger keyed by the
step's idempotency key, as a service that honours idempotency keys does: every call is an attempt
(one line in the calling process's own attempts file), and only the first attempt of a key takes
effect (a file created with O_EXCL). So the ledger tells how often each action ran and how often it
took effect, across every process, killed ones included. A thread made with ``slow`` acts slowly, a sync
node blocking for ``SLOW_SECONDS`` (a payment API taking its time): the worker must keep resuming the
others meanwhile.

``FlakyReceiver`` is the webhook receiver the workers tell of each answer: a real HTTP server in the
driver's process that refuses a share of the deliveries (503) and can be down for a while, and counts
each event once (by its ``webhook-id``), so the benchmark can say whether any event was lost.

The workers are `statehitl worker --app worker_workload:build` processes (this directory on their
PYTHONPATH, the store and ledger in `BENCH_WORKER_STORE` / `BENCH_WORKER_LEDGER`). The driver answers
through the inbox's own door (`statehitl.inbox.answers.answer_waiting`: the create-once answer, marked in
the thread's index entry), as a reviewer answering in the inbox or on its page does.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from statehitl.checkpoint.engine import Checkpointer
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.testing.webhooks import WebhookReceiver

STORE_ENV = "BENCH_WORKER_STORE"
LEDGER_ENV = "BENCH_WORKER_LEDGER"
APPROVAL = "payout-approval"
SLOW_SECONDS = 1.5


class Payout(BaseModel):
    thread: str
    expires_at: float | None = None
    slow: bool = False
    decision: Any = None
    paid: bool = False


def ask(state: Payout, ctx: NodeContext) -> dict[str, Any]:
    options = {"expires_at": state.expires_at, "on_expire": "expired"} if state.expires_at is not None else {}
    return {"decision": ctx.interrupt(APPROVAL, reason={"thread": state.thread}, **options)}


def act(state: Payout, ctx: NodeContext) -> dict[str, Any]:
    if state.slow:
        time.sleep(SLOW_SECONDS)  # a sync call that takes its time: blocking, as a sync HTTP client does
    ledger_apply(Path(os.environ[LEDGER_ENV]), ctx.idempotency_key, f"{ctx.thread_id} {state.decision}")
    return {"paid": True}


def graph() -> StateGraph[Payout]:
    g = StateGraph(Payout, name="PayoutGraph")
    g.add_node("ask", ask)
    g.add_node("act", act)
    g.add_edge(START, "ask")
    g.add_edge("ask", "act")
    g.add_edge("act", END)
    return g


_APPS: dict[str, Any] = {}


def app_on(store: str) -> Any:
    """The compiled graph on ``store``, one per process and store (a worker serves many threads with it)."""
    if store not in _APPS:
        _APPS[store] = graph().compile(checkpointer=Checkpointer.from_url(store))
    return _APPS[store]


def build(thread_id: str) -> Any:
    """The worker's registration: ``--app worker_workload:build``."""
    return app_on(os.environ[STORE_ENV])


# --------------------------------------------------------------------------- the ledger


def ledger_apply(root: Path, key: str, what: str) -> bool:
    """One attempt of the action named ``key``; True if it took effect (the first attempt of that key)."""
    with open(root / f"attempts.{os.getpid()}", "a", encoding="utf-8") as attempts:
        attempts.write(f"{key} {what}\n")
    try:
        fd = os.open(root / "applied" / key, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as applied:
        applied.write(what)
    return True


def ledger_reset(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "applied").mkdir(exist_ok=True)
    for path in [*root.glob("attempts.*"), *(root / "applied").iterdir()]:
        path.unlink()


def ledger_applied(root: Path) -> dict[str, str]:
    """Idempotency key -> what took effect (``<thread> <decision>``)."""
    return {p.name: p.read_text(encoding="utf-8") for p in (root / "applied").iterdir()}


def ledger_attempts(root: Path) -> list[tuple[str, str]]:
    """Every attempt, from every process: (idempotency key, ``<thread> <decision>``)."""
    found = []
    for path in root.glob("attempts.*"):
        for line in path.read_text(encoding="utf-8").splitlines():
            key, _, what = line.partition(" ")
            found.append((key, what))
    return found


def applied_count(root: Path) -> int:
    return sum(1 for _ in os.scandir(root / "applied"))


# --------------------------------------------------------------------------- the flaky receiver


class FlakyReceiver(WebhookReceiver):
    """A webhook receiver that refuses ``fail_rate`` of the deliveries with 503 at random (and all of them while
    ``down()``); ``answered`` is the threads whose answer event it accepted, each once."""

    def __init__(self, secret: bytes, fail_rate: float, seed: int = 7) -> None:
        super().__init__(secret)
        self.fail_rate = fail_rate
        self.refused = 0
        self._random = random.Random(seed)
        self._flaky = threading.Lock()

    def receive(self, body: bytes, headers: dict[str, str]) -> int:
        with self._flaky:
            refuse = self._random.random() < self.fail_rate
        if refuse:
            self.refused += 1
            return 503
        return super().receive(body, headers)

    def answered(self) -> set[str]:
        return {event["thread_id"] for event in list(self.events) if event["event"] == "answer"}
