"""The one place where async code is driven from sync callers.

statehitl is async inside; ``invoke()`` and friends are thin wrappers. A fresh event loop per call
costs more than a whole step of a small graph, so each thread keeps one loop and reuses it. When the
caller is already inside a running loop (Jupyter, an async web handler calling sync code), the
coroutine runs on a private loop in a worker thread instead of failing with "loop already running".
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_local = threading.local()
_worker = ThreadPoolExecutor(max_workers=4, thread_name_prefix="statehitl-sync")


def _thread_runner() -> asyncio.Runner:
    runner: asyncio.Runner | None = getattr(_local, "runner", None)
    if runner is None:
        runner = asyncio.Runner()
        _local.runner = runner
    return runner


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code and return its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_runner().run(coro)
    return _worker.submit(lambda: _thread_runner().run(coro)).result()
