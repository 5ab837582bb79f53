"""Threads a polling worker keeps finding answered and does not get resumed: said out loud, not passed over.

Each pass works on every thread whose index entry marks a stored answer. Most are resumed at once; a few are
"busy" (another process holds them) or "done" (the resume found nothing to apply) for a moment, which is
normal while workers race. One that stays so pass after pass is stuck — an answer nobody applies — and a
worker that only counted it would hide that. ``Stalls`` remembers since when each thread has been due and
what the last look at it found, and logs a warning naming both once a thread has been due for
``STALL_AFTER`` seconds, and again every ``STALL_AFTER`` seconds while it stays so.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from statehitl.worker.thread_work import ThreadOutcome

logger = logging.getLogger("statehitl.worker")

STALL_AFTER = 60.0
"""Seconds a thread may stay due (answered, not yet resumed) before a worker warns of it."""


@dataclass
class _Due:
    since: float
    warned: float | None = None
    last: ThreadOutcome | None = None


class Stalls:
    """Since when each thread has been due, and what the last look found (see the module docstring)."""

    def __init__(self, after: float = STALL_AFTER) -> None:
        self.after = after
        self._due: dict[str, _Due] = {}

    def seen(self, due: Iterable[str], now: float) -> None:
        """A pass found ``due`` due at ``now``: threads no longer due are forgotten, and each one due for
        ``after`` seconds (since the last warning, if any) is warned of."""
        current = set(due)
        for gone in set(self._due) - current:
            del self._due[gone]
        for thread in current:
            state = self._due.setdefault(thread, _Due(now))
            if now - state.since >= self.after and (state.warned is None or now - state.warned >= self.after):
                state.warned = now
                logger.warning("thread %s: answered and due for %.0fs, still not resumed; the last look found %s",
                               thread, now - state.since, _found(state.last))

    def outcome(self, outcome: ThreadOutcome) -> None:
        """What working on a thread did: kept for the warning, while the thread is due."""
        state = self._due.get(outcome.thread_id)
        if state is not None:
            state.last = outcome


def _found(outcome: ThreadOutcome | None) -> str:
    if outcome is None:
        return "nothing yet (no look has finished)"
    return outcome.what + (f": {outcome.error}" if outcome.error else "")
