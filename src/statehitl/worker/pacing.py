"""When a worker looks at a thread again: its timers, and the pauses after failures.

A stream-fed worker keeps timers (``schedule``, ``pop_due``): a stream carries writes, not time, so a
deadline, a lease another process holds, or a failed try needs a timer to be looked at again. A polling
worker finds such threads at its next pass anyway, but must not find one that keeps failing at every
pass: a thread whose work failed is paused (``pausing``) for the worker's interval, doubling with each
failure in a row up to ``MAX_BACKOFF`` (``failed``), so no thread is retried in a tight loop.
"""

from __future__ import annotations

import heapq
import logging
import random
from collections.abc import Callable

from statehitl.worker.thread_work import ThreadOutcome

logger = logging.getLogger("statehitl.worker")

MAX_BACKOFF = 300.0
"""The longest pause, in seconds, before a thread whose work keeps failing is tried again."""


class Pacing:
    """A worker's timers and its pauses after failures (see the module docstring)."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self.interval = interval
        self.clock = clock
        self._timers: list[tuple[float, str]] = []
        self._due: dict[str, float] = {}
        self._failures: dict[str, tuple[int, str]] = {}
        """Threads whose work keeps failing: how many times in a row, and the last error (logged once)."""
        self._paused: dict[str, float] = {}
        """Threads whose last work failed, with when to try again (a pass skips them until then)."""

    def schedule(self, thread_id: str, at: float) -> None:
        """Look at ``thread_id`` again at ``at`` (epoch seconds), or earlier if already due earlier."""
        if self._due.get(thread_id, float("inf")) <= at:
            return
        self._due[thread_id] = at
        heapq.heappush(self._timers, (at, thread_id))

    def scheduled(self, thread_id: str) -> bool:
        """Whether a timer will look at ``thread_id`` again."""
        return thread_id in self._due

    def pop_due(self) -> list[str]:
        """The threads whose timer is due, each once."""
        now, due = self.clock(), []
        while self._timers and self._timers[0][0] <= now:
            at, thread = heapq.heappop(self._timers)
            if self._due.get(thread) == at:
                del self._due[thread]
                due.append(thread)
        return due

    def failed(self, thread_id: str, error: str, *, exc: BaseException | None = None) -> float:
        """Count one more failure of ``thread_id`` and return how long to wait before the next try: the
        interval, doubling with each failure in a row up to ``MAX_BACKOFF``, drawn between half and all of
        that so that workers spread. With ``exc``, logged with its traceback the first time an error is
        seen, then only when it changes: a pass meets a thread that keeps failing again and again."""
        failures, last = self._failures.get(thread_id, (0, ""))
        failures += 1
        if exc is not None and last != error:
            logger.error("thread %s: %s (looked at again with growing pauses)", thread_id, error, exc_info=exc)
        self._failures[thread_id] = (failures, error)
        while len(self._failures) > 10_000:
            del self._failures[next(iter(self._failures))]
        step = min(MAX_BACKOFF, self.interval * 2 ** (failures - 1))
        return random.uniform(step / 2, step)

    def settle(self, outcome: ThreadOutcome) -> None:
        """Note how working on a thread ended: a failure pauses it until its ``retry_at``; anything else ends
        its run of failures."""
        if outcome.what == "failed" and outcome.retry_at is not None:
            self._paused[outcome.thread_id] = outcome.retry_at
        else:
            self._paused.pop(outcome.thread_id, None)
            self._failures.pop(outcome.thread_id, None)

    def pausing(self, thread_id: str, now: float) -> bool:
        """Whether ``thread_id``'s last work failed and its pause is not over at ``now``: a pass leaves it."""
        return self._paused.get(thread_id, 0.0) > now
