"""Streaming a run: the events its callbacks emit, as an async iterator, then its result.

Agents, StateGraphs and the multi-agent orchestrators all stream the same way: the run gets an
``emit`` callback, each event goes to a queue as it happens, and the iterator yields them in order,
ending with one event built from the run's result. Breaking out of the loop cancels the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["MODEL_TEXT", "Emit", "stream_run", "with_model_text"]

T = TypeVar("T")
Emit = Callable[[Any], None]

MODEL_TEXT: ContextVar[Callable[[str], None] | None] = ContextVar("statehitl_model_text", default=None)
"""Where the text an agent's model streams also goes, while it runs in a StateGraph node whose graph streams
with ``stream_mode="messages"`` (LangGraph's token stream); None: nowhere."""


def with_model_text(emit: Emit | None) -> Emit | None:
    """``emit``, also handing the model's text pieces to ``MODEL_TEXT``'s reader when one is listening."""
    text = MODEL_TEXT.get()
    if text is None:
        return emit

    def tee(event: Any) -> None:
        if "data" in event:
            text(event["data"])
        if emit is not None:
            emit(event)

    return tee


async def stream_run(run: Callable[[Emit], Awaitable[T]], last: Callable[[T], Any] | None,
                     also: Emit | None = None) -> AsyncIterator[Any]:
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
        if not task.done():
            task.cancel()
