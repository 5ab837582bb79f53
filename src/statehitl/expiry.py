"""When an interrupt stops waiting for a human: ``expires_in=``/``expires_at=`` and ``on_expire=``.

Checked where ``interrupt()`` is called, before the run stops, so a mistake (a negative delay, both
forms at once, a default that is not JSON, an expiry without a default) fails in the handler that made
it, not hours later in a sweeper. Pure: the only I/O is reading the clock for ``expires_in``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from statehitl._json import require_json
from statehitl.errors import InterruptReasonError, InvalidExpiryError


@dataclass(frozen=True, slots=True)
class Expiry:
    """An interrupt's deadline (epoch seconds) and the response a sweep applies once it has passed."""

    at: float
    response: Any


def expiry(name: str, expires_in: float | None, expires_at: float | None, on_expire: Any,
           now: float | None = None) -> Expiry | None:
    """The expiry ``interrupt(name, expires_in=..., expires_at=..., on_expire=...)`` asks for, or None.

    ``on_expire`` is required with a deadline (a sweep must know what to answer) and refused without
    one (it would never be applied). ``now`` is for tests; by default the clock is read.
    """
    if expires_in is None and expires_at is None:
        if on_expire is not None:
            raise InvalidExpiryError(
                f"interrupt {name!r}: on_expire= is given without expires_in= or expires_at=, so it would "
                "never be applied; give a deadline too, or drop on_expire"
            )
        return None
    if expires_in is not None and expires_at is not None:
        raise InvalidExpiryError(f"interrupt {name!r}: give expires_in= (seconds from now) or expires_at= "
                                 "(epoch seconds), not both")
    given = expires_in if expires_in is not None else expires_at
    label = "expires_in" if expires_in is not None else "expires_at"
    if isinstance(given, bool) or not isinstance(given, int | float) or not math.isfinite(given):
        raise InvalidExpiryError(f"interrupt {name!r}: {label}= must be a finite number of seconds, got {given!r}")
    if expires_in is not None and expires_in <= 0:
        raise InvalidExpiryError(f"interrupt {name!r}: expires_in= must be positive seconds, got {expires_in!r}")
    if on_expire is None:
        raise InvalidExpiryError(
            f"interrupt {name!r}: {label}= needs on_expire=, the response a sweep applies once the deadline "
            "has passed (e.g. on_expire={'approved': False})"
        )
    require_json(on_expire, f"the on_expire response of interrupt {name!r}", InterruptReasonError)
    moment = time.time() if now is None else now
    return Expiry(float(moment + expires_in if expires_in is not None else given), on_expire)
