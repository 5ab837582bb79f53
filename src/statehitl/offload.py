"""Where sync user code runs: a sync node or tool, and an app's ``build``.

A lone sync node (or a tool called alone) runs inline by default: a hop to a worker thread costs more
than a small node's whole step, and a plain ``app.invoke`` has nothing else on its loop to hold up. A
process that serves many threads on one loop does: a worker resuming eight threads at once, the inbox
page answering requests. There one slow sync action (a payment API taking seconds) would stop every
other thread's resume and every request until it returned. ``off_the_loop()`` marks such a context:
in it every sync node and tool runs in a worker thread, alone or not. The inbox's and the worker's
resumes (``statehitl.resumable.resume_stored``) run in it.

Off the loop, but not on the loop's default thread pool when the caller gives a pool of its own: the
boto3 stores run every request there (a handful of threads on a small machine), and slow actions
sleeping in them would leave no thread to answer the other resumes' requests. A worker gives the
threads it resumes a pool sized to its ``--concurrency``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import Any, TypeVar

__all__ = ["call_sync", "may_run_inline", "off_the_loop", "sync_pool"]

T = TypeVar("T")

_OFF_LOOP: contextvars.ContextVar[tuple[bool, Executor | None]] = contextvars.ContextVar(
    "statehitl_off_loop", default=(False, None))


@contextlib.contextmanager
def off_the_loop(executor: Executor | None = None) -> Iterator[None]:
    """Run every sync node and tool started in this context in a worker thread, never on the loop: in
    ``executor`` when given, else the loop's default pool."""
    token = _OFF_LOOP.set((True, executor))
    try:
        yield
    finally:
        _OFF_LOOP.reset(token)


def may_run_inline(alone: bool) -> bool:
    """Whether a sync handler that runs ``alone`` may run on the loop's thread here."""
    return alone and not _OFF_LOOP.get()[0]


def sync_pool() -> Executor | None:
    """The pool sync work started here runs in (``off_the_loop``'s), or None: the loop's default pool."""
    return _OFF_LOOP.get()[1]


async def call_sync(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a worker thread (the context's pool, ``off_the_loop``), with this context's
    variables, as ``asyncio.to_thread`` does."""
    executor = sync_pool()
    if executor is None:
        return await asyncio.to_thread(func, *args, **kwargs)
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor, call)
