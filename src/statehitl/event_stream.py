"""Streaming a run: the events its callbacks emit, as an async iterator, then its result.

Agents, StateGraphs and the multi-agent orchestrators all stream the same way: the run gets an
``emit`` callback, each event goes to a queue as it happens, and the iterator yields them in order,
ending with one event built from the run's result. Breaking out of the loop cancels the run, and closing
the iterator returns once the run has stopped (a StateGraph's has then recorded where it stood).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

from statehitl.stream_sink import current_scope

T = TypeVar("T")
Emit = Callable[[Any], None]


def with_model_text(emit: Emit | None) -> Emit | None:
    """``emit``, also handing the model's text pieces to the stream the agent runs in, when that is a
    StateGraph node's whose reader asked for ``stream_mode="messages"`` (LangGraph's token stream)."""
    stream = current_scope()
    if stream is None or not stream.wants("messages"):
        return emit

    def tee(event: Any) -> None:
        if "data" in event:
            stream.model_text(event["data"])
        if emit is not None:
            emit(event)

    return tee


async def stream_run(run: Callable[[Emit], Awaitable[T]], last: Callable[[T], Any] | None,
                     also: Emit | None = None) -> AsyncGenerator[Any, None]:
    """Yield the events ``run(emit)`` emits, then ``last(result)`` (unless None). ``also`` sees each
    event too."""
    queue: asyncio.Queue[Any] = asyncio.Queue()
    done = object()

    def emit(event: Any) -> None:
        queue.put_nowait(event)
        if also is not None:
            also(event)

    async def produce() -> T:
        try:
            return await run(emit)
        finally:
            queue.put_nowait(done)

    task = asyncio.ensure_future(produce())
    try:
        while (event := await queue.get()) is not done:
            yield event
        result = await task
        if last is not None:
            yield last(result)
    finally:
        if not task.done():  # the reader stopped early: the run stops, and has recorded where, when this returns
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
