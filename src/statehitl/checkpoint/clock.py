"""Time for leases: the store's clock where the store has one, and a lease length per call.

A claim or a running step holds a thread until ``lease_until``, written by one process and judged by
another. Judged by each machine's own clock, a machine whose clock runs 120 s fast takes every live
claim of a 60 s lease for expired (and, with ``--retry-unknown``, runs an action a second time while
the first run is inside it); one that runs slow leaves a dead process's threads alone too long. So on a
store that answers over HTTP (S3, DynamoDB: every response carries the server's ``Date``) leases are
written and judged in the store's time: ``StoreClock`` keeps this machine's offset from it, narrowed
response by response (a ``Date`` has one-second resolution: the server handled the request somewhere
between sending it and the answer, at a time within a second of the header, so each response bounds
the offset, and their intersection is what is known). Everyone judging by one clock, a skewed machine
judges leases right.

A clock too far off is refused all the same (``ClockSkewError``) when a claim is taken: deadlines an
interrupt carries and the times answers record are this machine's, and a clock minutes off is broken in
ways a lease cannot mend (``Checkpointer(max_clock_skew=)``, default ``MAX_CLOCK_SKEW``).

The file store and memory have no clock of their own: the machine's is the store's.

``leased(seconds)`` sets the lease of the claims and steps written in its context, for a caller that
resumes someone else's app (a worker's ``--lease``) without changing that app's settings.
"""

from __future__ import annotations

import contextlib
import email.utils
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["MAX_CLOCK_SKEW", "StoreClock", "lease_override", "leased", "watch_boto_client"]

MAX_CLOCK_SKEW = 30.0
"""Seconds this machine's clock may differ from the store's before claims are refused (``ClockSkewError``)."""

_LEASE: ContextVar[float | None] = ContextVar("statehitl_lease", default=None)


@contextlib.contextmanager
def leased(seconds: float | None) -> Iterator[None]:
    """Claims and running steps written in this context hold their thread ``seconds`` (None: the
    checkpointer's own ``lease_seconds``)."""
    if seconds is not None and not seconds > 0:
        raise ValueError(f"a lease is a positive number of seconds, got {seconds!r}")
    token = _LEASE.set(seconds)
    try:
        yield
    finally:
        _LEASE.reset(token)


def lease_override() -> float | None:
    """The lease ``leased`` set for this context, if any."""
    return _LEASE.get()


class StoreClock:
    """This machine's offset from a store's clock, learnt from the ``Date`` of the store's responses.

    ``observe(date, sent, received)`` takes one response: the server stamped it at a moment between
    ``sent`` and ``received`` (this machine's clock), within the second its ``Date`` names. Each
    response bounds the offset (server minus local) to ``[date - received, date + 1 - sent]``; the
    clock keeps the intersection of all of them, and starts afresh from the newest response when they
    stop agreeing (either clock was stepped, by NTP or by hand).
    """

    def __init__(self) -> None:
        self._low: float | None = None
        self._high: float | None = None
        self._lock = threading.Lock()

    def observe(self, date: float, sent: float, received: float) -> None:
        low, high = date - received, date + 1.0 - sent
        with self._lock:
            if self._low is None or self._high is None or low > self._high or high < self._low:
                self._low, self._high = low, high
            else:
                self._low, self._high = max(self._low, low), min(self._high, high)

    def observe_header(self, header: str | None, sent: float, received: float) -> None:
        """``observe`` an HTTP ``Date`` header (RFC 7231's form); one that does not parse is ignored."""
        if not header:
            return
        with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
            self.observe(email.utils.parsedate_to_datetime(header).timestamp(), sent, received)

    @property
    def known(self) -> bool:
        """Whether any response was seen (before one, the machine's own clock stands in)."""
        return self._low is not None

    @property
    def offset(self) -> float:
        """The store's clock minus this machine's, in seconds (0 until a response was seen)."""
        with self._lock:
            if self._low is None or self._high is None:
                return 0.0
            return (self._low + self._high) / 2

    def now(self) -> float:
        """The store's time now, as well as this machine knows it."""
        return time.time() + self.offset


def watch_boto_client(client: Any, clock: StoreClock | None = None) -> StoreClock:
    """The ``StoreClock`` fed by every response a boto3 client receives: ``clock`` (or a new one) the first
    time a client is watched, the same one after that (a client shared by many stores is hooked once)."""
    found = getattr(client, "_statehitl_clock", None)
    if isinstance(found, StoreClock):
        return found
    clock = clock if clock is not None else StoreClock()

    def before(context: dict[str, Any], **_: Any) -> None:
        context["statehitl_sent"] = time.time()

    def after(http_response: Any = None, context: dict[str, Any] | None = None, **_: Any) -> None:
        sent = (context or {}).get("statehitl_sent")
        headers = getattr(http_response, "headers", None)
        if sent is not None and headers is not None:
            clock.observe_header(headers.get("Date") or headers.get("date"), sent, time.time())

    events = client.meta.events
    events.register("before-call", before)
    events.register("after-call", after)
    client._statehitl_clock = clock
    return clock
