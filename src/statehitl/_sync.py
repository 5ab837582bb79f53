"""The one place where async code is driven from sync callers.

statehitl is async inside; ``invoke()`` and friends are thin wrappers. A fresh event loop per call
costs more than a whole step of a small graph, so each thread keeps one loop and reuses it. When the
caller is already inside a running loop (Jupyter, an async web handler calling sync code), the
coroutine runs on a private loop in a thread of its own instead of failing with "loop already running".
A thread per such call, not a pool: a notebook that keeps a half-read ``stream()`` holds its thread until
the iterator goes, and with a pool of four, four of those made every later nested call wait forever.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import queue
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from concurrent.futures import Future
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_local = threading.local()
_private: ContextVar[bool] = ContextVar("statehitl_private_loop", default=False)


def on_private_loop() -> bool:
    """Whether the running code is a sync call on statehitl's own loop, where nothing else runs.

    Blocking I/O (an fsync) may then run inline: moving it to a worker thread would only add the
    thread hop, since no other coroutine is waiting for the loop.
    """
    return _private.get()


class _ThreadLoop:
    """The loop of one thread, closed when the thread ends (its thread-local slot is dropped).

    Not ``asyncio.Runner``: its ``run`` swaps the SIGINT handler in and out on every call, which costs
    more than an agent cycle. Ctrl-C still works: KeyboardInterrupt cancels the task and propagates.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        token = _private.set(True)
        try:
            task = self.loop.create_task(coro)  # the task runs in a copy of this context
        finally:
            _private.reset(token)
        try:
            return self.loop.run_until_complete(task)
        except BaseException:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    self.loop.run_until_complete(task)
            raise

    def close(self) -> None:
        """Finish the loop's async generators and executor, and close it (from its own thread, not running)."""
        if not self.loop.is_closed():
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.run_until_complete(self.loop.shutdown_default_executor())
            self.loop.close()

    def __del__(self) -> None:
        # Only closes the loop (its executor told to stop, not waited for): a finalizer runs wherever the
        # collector happens to run, possibly inside threading's own bookkeeping while it holds the lock a
        # thread needs to end, so waiting there for the executor's threads deadlocked. At interpreter exit
        # the process is ending anyway.
        if sys.is_finalizing() or self.loop.is_closed() or self.loop.is_running():
            return
        self.loop.close()


def _thread_loop() -> _ThreadLoop:
    holder: _ThreadLoop | None = getattr(_local, "loop", None)
    if holder is None:
        holder = _local.loop = _ThreadLoop()
        if threading.current_thread() is threading.main_thread():
            atexit.register(_close_at_exit, holder)
    return holder


def _close_at_exit(holder: _ThreadLoop) -> None:
    """The main thread's loop outlives every call and its thread-local slot is never dropped: closed at exit
    (without stopping its executor, which would start a thread at shutdown), so the process does not end
    warning of an unclosed loop and its sockets."""
    if not holder.loop.is_closed() and not holder.loop.is_running():
        holder.loop.close()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code and return its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_loop().run(coro)
    # in the caller's context: a graph invoked by a sync node's code finds the node it runs in
    context = contextvars.copy_context()
    return _on_own_thread(lambda: context.run(lambda: _thread_loop().run(coro))).result()


def iterate_sync(events: AsyncIterator[T]) -> Iterator[T]:
    """Iterate an async iterator from synchronous code (``app.stream()`` over ``app.astream()``).

    Outside a running loop each item is awaited on this thread's loop, so the iterator stays on one
    loop from start to end; inside one (a notebook), a worker thread iterates it on that thread's loop,
    one item per item asked for: a caller that stops early (``break``) stops the run there, as it does
    outside a loop, instead of the worker running it to the end.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        yield from _iterate_here(events)
        return
    wanted: queue.Queue[bool] = queue.Queue()  # True: the next item; False: stop
    items: queue.Queue[tuple[bool, Any]] = queue.Queue()

    def pump() -> None:
        source = _iterate_here(events)
        try:
            while wanted.get():
                try:
                    items.put((True, next(source)))
                except StopIteration:
                    items.put((False, None))
                    return
        except BaseException as exc:
            items.put((False, exc))
        finally:
            source.close()  # closes the async iterator, on this worker's loop

    pumping = _on_own_thread(pump)
    try:
        while True:
            wanted.put(True)
            ok, item = items.get()
            if ok:
                yield item
            elif item is None:
                return
            else:
                raise item
    finally:
        wanted.put(False)
        pumping.result()  # closed: the source has stopped (a run has recorded where it stood) when this returns


def _iterate_here(events: AsyncIterator[T]) -> Generator[T, None, None]:
    loop = _thread_loop()

    async def following() -> tuple[bool, Any]:
        try:
            return True, await events.__anext__()
        except StopAsyncIteration:
            return False, None

    try:
        while True:
            more, item = loop.run(following())
            if not more:
                return
            yield item
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            loop.run(close())


def _on_own_thread(work: Callable[[], T]) -> Future[T]:
    """``work()`` on a new thread, its outcome in the future returned. The thread's loop (``_thread_loop``) is
    closed when the thread ends."""
    outcome: Future[T] = Future()

    def run() -> None:
        try:
            outcome.set_result(work())
        except BaseException as exc:
            outcome.set_exception(exc)
        finally:
            held: _ThreadLoop | None = getattr(_local, "loop", None)
            if held is not None:
                del _local.loop
                held.close()

    threading.Thread(target=run, name="statehitl-sync", daemon=True).start()
    return outcome


def now_or_awaited(make: Callable[[], Coroutine[Any, Any, T]]) -> Coroutine[Any, Any, T]:
    """A call that is sync for sync callers and async for async ones, for a name LangGraph's API makes sync
    (``checkpointer.delete_thread(thread_id)``) where statehitl's is awaited: inside a running event loop, the
    coroutine ``make`` builds, to await; outside one, the work is done now and what is returned is a coroutine
    already finished, so ``await``/``asyncio.run``/``run_sync`` of it still give its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _Finished(run_sync(make()))
    return make()


class _Finished(Coroutine[Any, Any, T]):
    """A coroutine whose work is done: its first ``send`` returns ``value``."""

    def __init__(self, value: T) -> None:
        self.value = value

    def send(self, _sent: Any) -> Any:
        raise StopIteration(self.value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        raise typ if val is None else val

    def close(self) -> None:
        """Nothing to stop: the work is done."""

    def __await__(self) -> Generator[Any, None, T]:
        return self.value
        yield  # a generator that returns at once
