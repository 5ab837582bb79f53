"""Worker processes: each framework in an interpreter of its own, driven command by command over a pipe.

Each side runs in a separate interpreter so neither pays for the other's heap, garbage and threads: in
one shared process statehitl got slower beside Strands (bench_agent.py's conversations, and
bench_multiagent.py's round trip; see benchmarks/README.md). A script's worker function (the `target`)
sets up its side and hands its commands to `serve`; the script drives the workers with `Worker.call`.
Times are taken inside the worker, so the pipe round trip stays outside the clock; a block of
repetitions (`WorkerTrial.many`) is one command, so the worker runs them back to back, as in a loop,
instead of idling on the pipe between them (see `harness.timing.BLOCK`).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any


class WorkerError(RuntimeError):
    """A worker's command failed; the message holds the worker's traceback, verbatim."""


class Worker:
    """One framework in its own process: `target(conn, side, *args)`, which answers commands with `serve`."""

    def __init__(self, side: str, target: Callable[..., None], *args: Any) -> None:
        ctx = multiprocessing.get_context("spawn")  # a clean interpreter: statehitl's never imports Strands
        self.side = side
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=target, args=(child, side, *args), name=f"bench-{side}", daemon=True)
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


@dataclass(frozen=True)
class WorkerTrial:
    """A timed trial run by a worker: its `command` with `args`, then the repetition's label (unless not
    `labelled`); the worker's answer is the timed seconds. `many` runs a block of labels as one command."""

    worker: Worker
    command: str
    args: tuple[Any, ...] = ()
    labelled: bool = True

    def _args(self, label: str) -> list[Any]:
        return [*self.args, label] if self.labelled else list(self.args)

    def __call__(self, label: str) -> float:
        seconds: float = self.worker.call(self.command, *self._args(label))
        return seconds

    def many(self, labels: list[str]) -> list[float]:
        seconds: list[float] = self.worker.call("repeat", self.command, [self._args(label) for label in labels])
        return seconds


def call_all(pool: list[Worker], command: str, *args: Any) -> list[Any]:
    """`command` on every worker of `pool` at once: sent to all before any answer is awaited, so they run together.

    For work whose point is concurrency (bench_fleet.py's racing workers); `Worker.call` runs one at a time.
    """
    for worker in pool:
        worker.conn.send((command, *args))
    answers = [(worker, *worker.conn.recv()) for worker in pool]
    for worker, ok, value in answers:
        if not ok:
            raise WorkerError(f"the {worker.side} worker failed on {(command, *args)!r}:\n{value}")
    return [value for _, _, value in answers]


def serve(conn: Connection, handle: Callable[..., Any]) -> None:
    """The worker loop: `handle(command, *args)` one command at a time, answer (True, value) or (False, traceback).

    `exit` ends the loop; `freeze` runs `freeze_imports`; `info` says what the worker runs with;
    `repeat COMMAND ARG_LISTS` runs `handle(COMMAND, *args)` for each list of args, back to back, and
    answers the list of their answers.
    """
    while True:
        command, *args = conn.recv()
        if command == "exit":
            return
        try:
            if command == "freeze":
                value: Any = freeze_imports()
            elif command == "info":
                value = {"tracer_provider": tracer_provider(), "pid": multiprocessing.current_process().pid}
            elif command == "repeat":
                repeated, arg_lists = args
                value = [handle(repeated, *each) for each in arg_lists]
            else:
                value = handle(command, *args)
            conn.send((True, value))
        except BaseException:
            conn.send((False, traceback.format_exc()))


@contextlib.contextmanager
def workers(sides: list[str], target: Callable[..., None], *args: Any) -> Iterator[dict[str, Worker]]:
    """A started worker per side, all closed at the end."""
    started: dict[str, Worker] = {}
    try:
        for side in sides:
            started[side] = Worker(side, target, *args)
        yield started
    finally:
        for worker in started.values():
            worker.close()


def freeze_imports() -> None:
    """Move everything alive now (the framework's modules, classes, tools) out of the collector's reach.

    A framework and its dependencies leave a great many long-lived objects behind at import; without
    this every full collection walks them all, inside whichever timed call it happens in. Objects made
    later (the conversations, the graphs) are collected as usual, inside the timed calls too.
    """
    gc.collect()
    gc.freeze()


def tracer_provider() -> str:
    """Whether OpenTelemetry tracing is live (Strands imports it; statehitl traces only with a real provider)."""
    trace = sys.modules.get("opentelemetry.trace")
    return "opentelemetry not imported" if trace is None else type(trace.get_tracer_provider()).__name__
