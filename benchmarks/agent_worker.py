"""bench_agent.py's worker processes: each framework in an interpreter of its own, driven turn by turn.

The commands run what agent_workload.py defines; `freeze_imports` serves `--profile` too.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from agent_workload import Conversation, long_session_trial, roundtrip_trial
from harness.timing import Trial


class WorkerError(RuntimeError):
    """A worker's command failed; the message holds the worker's traceback, verbatim."""


class Worker:
    """One framework in its own process, driven by commands over a pipe.

    Each side runs in a separate interpreter so neither pays for the other's heap: in one shared
    process statehitl's turns got slower as the Strands conversation beside them grew, which made
    statehitl's per-cycle cost look as if it grew with its own history. Times are taken inside the
    worker, around `agent(...)` only; the pipe round trip is outside the clock.
    """

    def __init__(self, side: str, workdir: Path) -> None:
        ctx = multiprocessing.get_context("spawn")  # a clean interpreter: statehitl's never imports Strands
        self.side = side
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=worker_main, args=(child, side, str(workdir)), name=f"bench-{side}",
                                   daemon=True)
        self.process.start()
        child.close()

    def call(self, command: str, *args: Any) -> Any:
        self.conn.send((command, *args))
        ok, value = self.conn.recv()
        if not ok:
            raise WorkerError(f"the {self.side} worker failed on {(command, *args)!r}:\n{value}")
        return value

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(("exit",))
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()


def worker_main(conn: Connection, side: str, workdir_str: str) -> None:
    """The worker loop: run one command at a time, answer (True, value) or (False, traceback)."""
    workdir = Path(workdir_str)
    conversation: Conversation | None = None
    roundtrip: Trial | None = None
    long_roundtrip: Callable[[], float] | None = None
    while True:
        command, *args = conn.recv()
        if command == "exit":
            return
        try:
            value: Any = None
            if command == "start":  # variant, label, turns
                conversation = None
                gc.collect()
                conversation = Conversation(side, args[0], workdir, args[1], args[2])
            elif command == "turn":
                assert conversation is not None
                value = conversation.turn(args[0])  # the collector runs as usual, never forced (harness.timing)
            elif command == "check":
                assert conversation is not None
                conversation.check(args[0])
            elif command == "freeze":
                freeze_imports()
            elif command == "roundtrip":
                roundtrip = roundtrip or roundtrip_trial(side, workdir)
                value = roundtrip(args[0])
            elif command == "long-session":  # history: build a session that many round trips long
                long_roundtrip = long_session_trial(side, workdir, args[0])
            elif command == "long-roundtrip":
                assert long_roundtrip is not None
                value = long_roundtrip()
            elif command == "info":
                value = {"tracer_provider": tracer_provider(), "pid": os.getpid()}
            else:
                raise ValueError(f"unknown worker command {command!r}")
            conn.send((True, value))
        except BaseException:
            conn.send((False, traceback.format_exc()))


@contextlib.contextmanager
def workers(sides: list[str], workdir: Path) -> Iterator[dict[str, Worker]]:
    started: dict[str, Worker] = {}
    try:
        for side in sides:
            started[side] = Worker(side, workdir)
        yield started
    finally:
        for worker in started.values():
            worker.close()


def freeze_imports() -> None:
    """Move everything alive now (the framework's modules, classes, tools) out of the collector's reach.

    A framework and its dependencies leave a great many long-lived objects behind at import; without
    this every full collection walks them all, inside whichever turn it happens in. Objects made later
    (the conversations) are collected as usual, inside the timed turns too.
    """
    gc.collect()
    gc.freeze()


def tracer_provider() -> str:
    """Whether OpenTelemetry tracing is live (Strands imports it; statehitl traces only with a real provider)."""
    trace = sys.modules.get("opentelemetry.trace")
    return "opentelemetry not imported" if trace is None else type(trace.get_tracer_provider()).__name__
