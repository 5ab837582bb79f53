"""A clock that is off, to test how your app and its workers fare on a machine whose clock is wrong.

Leases are judged by the store's clock where the store has one (S3 and DynamoDB say the time in every
response: ``statehitl.checkpoint.clock``), and a machine whose clock is further off than
``max_clock_skew`` refuses to claim anything (``ClockSkewError``). To see it in your own tests, run a
process with its clock moved: ``skew(seconds)`` moves ``time.time`` (and ``time.time_ns``) of this
process by ``seconds`` for good, which a worker started for the test can call first::

    python -c "from statehitl.testing.clocks import skew; skew(120); from statehitl.cli import main; \\
               raise SystemExit(main(['worker', '--app', 'myapp:build', '--store', 's3://...']))"

``skewed(seconds)`` does the same for the length of a ``with`` block, in the test's own process. Only
what reads ``time.time()`` sees it (statehitl does; ``datetime.now()`` does not).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

__all__ = ["skew", "skewed"]

_REAL_TIME = time.time
_REAL_TIME_NS = time.time_ns


def skew(seconds: float) -> None:
    """Move this process's ``time.time`` and ``time.time_ns`` by ``seconds`` (positive: fast), for good."""
    time.time = lambda: _REAL_TIME() + seconds
    time.time_ns = lambda: _REAL_TIME_NS() + int(seconds * 1e9)


@contextlib.contextmanager
def skewed(seconds: float) -> Iterator[None]:
    """This process's clock moved by ``seconds`` while in the block."""
    before, before_ns = time.time, time.time_ns
    skew(seconds)
    try:
        yield
    finally:
        time.time, time.time_ns = before, before_ns
