"""Whether a sync node or tool that runs alone may use the event loop's own thread.

A lone sync node (or a tool called alone) runs inline by default: a hop to a worker thread costs more
than a small node's whole step, and a plain ``app.invoke`` has nothing else on its loop to hold up. A
process that serves many threads on one loop does: a worker resuming eight threads at once, the inbox
page answering requests. There one slow sync action (a payment API taking seconds) would stop every
other thread's resume and every request until it returned. ``off_the_loop()`` marks such a context:
in it every sync node and tool runs in a worker thread, alone or not. The inbox's and the worker's
resumes (``statehitl.resumable.resume_stored``) run in it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["may_run_inline", "off_the_loop"]

_OFF_LOOP: ContextVar[bool] = ContextVar("statehitl_off_loop", default=False)


@contextlib.contextmanager
def off_the_loop() -> Iterator[None]:
    """Run every sync node and tool started in this context in a worker thread, never on the loop."""
    token = _OFF_LOOP.set(True)
    try:
        yield
    finally:
        _OFF_LOOP.reset(token)


def may_run_inline(alone: bool) -> bool:
    """Whether a sync handler that runs ``alone`` may run on the loop's thread here."""
    return alone and not _OFF_LOOP.get()
