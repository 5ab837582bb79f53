"""Whether any graph run under LangChain callbacks is running in the process: a node call looks for its run's
callbacks (and makes a run of its own, ``node_runs``) only then, so a process that never traces pays one list
read per node call."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

ACTIVE = [0]
"""How many runs under LangChain callbacks are running (any thread)."""
_LOCK = threading.Lock()


@contextlib.contextmanager
def tracing() -> Iterator[None]:
    """Around a run under LangChain callbacks (``CompiledStateGraph._run``)."""
    with _LOCK:
        ACTIVE[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            ACTIVE[0] -= 1
