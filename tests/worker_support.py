"""What the worker tests of every backend share: a webhook receiver on loopback, worker processes, waiting.

``Receiver`` is a real HTTP server on 127.0.0.1 (``statehitl.testing.webhooks.WebhookReceiver``) that
checks each POST's signature the way docs/workers.md tells a receiver to, keeps every event it accepted
once, and can answer the first requests with errors, or be down. ``WorkerProcess`` runs ``statehitl
worker`` as a subprocess, the deployment shape,
with the test apps (``worker_app.py``) importable.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from statehitl.testing.webhooks import WebhookReceiver

TESTS = Path(__file__).resolve().parent
TIMEOUT = 60.0
"""How long a test waits for a worker to get somewhere: a safety net against hangs, never asserted."""


def wait_for(done: Callable[[], Any], *, timeout: float = TIMEOUT, what: str = "the worker") -> Any:
    """Poll ``done()`` until it returns something truthy, which is returned; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        found = done()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not get there within {timeout}s")
        time.sleep(0.02)


Receiver = WebhookReceiver
"""The receiver the worker tests send to: statehitl's own test receiver (``statehitl.testing.webhooks``)."""


def answer_waiting(store: str, thread: str, response: object, responder: str = "ann") -> None:
    """Answer the one interrupt ``thread`` waits on, in the inbox (stored, not applied)."""
    from statehitl import inbox

    [item] = [p for p in inbox.pending(store) if p.thread_id == thread]
    inbox.answer(store, item.id, response, responder=responder)


def worker_env(store: str, ledger: Path, **extra: str) -> dict[str, str]:
    """The environment of a worker subprocess: the test apps' store and ledger, ``worker_app`` importable."""
    from worker_app import LEDGER_ENV, STORE_ENV

    return {**os.environ, STORE_ENV: store, LEDGER_ENV: str(ledger), "NO_COLOR": "1",
            "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]), **extra}


class WorkerProcess:
    """``statehitl worker ARGS`` in a subprocess (its clock ``clock_skew`` seconds off); ``log`` is what it wrote
    to stderr so far."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, *, clock_skew: float = 0.0) -> None:
        self.log_path = log
        self._log = open(log, "w", encoding="utf-8")  # noqa: SIM115
        command = [sys.executable, "-m", "statehitl.cli", "worker", *args]
        if clock_skew:  # the worker's process with its clock moved (statehitl.testing.clocks)
            command = [sys.executable, "-c", f"from statehitl.testing.clocks import skew; skew({clock_skew!r}); "
                       f"from statehitl.cli import main; raise SystemExit(main(['worker', *{args!r}]))"]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=self._log, text=True)

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind, as a lost container or the OOM killer does it."""
        self.process.kill()
        self.process.wait(timeout=TIMEOUT)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()

    def stop(self) -> tuple[int, str]:
        """SIGTERM, which lets it finish the threads in hand: its exit code and stdout (the summary)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=TIMEOUT)
        self._log.close()
        return self.process.returncode, out


@contextmanager
def workers(count: int, args: list[str], env: dict[str, str], logs: Path) -> Iterator[list[WorkerProcess]]:
    """``count`` worker processes, stopped (SIGTERM) on the way out whatever happened."""
    logs.mkdir(parents=True, exist_ok=True)
    started = [WorkerProcess(args, env, logs / f"worker-{n}.log") for n in range(count)]
    try:
        yield started
    finally:
        for worker in started:
            if worker.process.poll() is None:
                worker.stop()
