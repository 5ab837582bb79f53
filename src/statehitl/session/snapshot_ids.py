"""Snapshot ids: UUID version 7 (RFC 9562), so that sorting a session's ids lists its snapshots by age.

The first 48 bits are the Unix time in milliseconds; the 12 bits after the version count ids made in
the same millisecond by this process (from a random start, so two processes rarely collide even then),
and the last 62 bits are random. Ids made in one process are strictly increasing, however fast.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid

_lock = threading.Lock()
_last = [-1, 0]  # the millisecond of the last id, and its sequence number within it
_CANONICAL = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")
_SEQUENCE_MAX = 0xFFF


def _tick() -> tuple[int, int]:
    """This id's millisecond and sequence number: after the last id's, borrowing a millisecond from the
    clock when one millisecond's 4096 sequence numbers run out (the clock catches up within it)."""
    with _lock:
        now = int(time.time() * 1000)
        if now > _last[0]:
            _last[0], _last[1] = now, int.from_bytes(os.urandom(2), "big") & 0x7FF
        elif _last[1] < _SEQUENCE_MAX:
            _last[1] += 1
        else:
            _last[0], _last[1] = _last[0] + 1, int.from_bytes(os.urandom(2), "big") & 0x7FF
        return _last[0], _last[1]


def new_uuid7() -> str:
    """A new snapshot id, later in sort order than every id this process made before."""
    millisecond, sequence = _tick()
    value = (millisecond & ((1 << 48) - 1)) << 80 | 0x7 << 76 | sequence << 64 | 0b10 << 62
    value |= int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def is_uuid7(value: object) -> bool:
    """Whether ``value`` is a UUID version 7 in its canonical lower-case text (what ``new_uuid7`` gives)."""
    return isinstance(value, str) and _CANONICAL.match(value) is not None
