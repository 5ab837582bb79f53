"""The model contract the agent drives: one ``stream`` call per model turn, yielding Converse events.

Providers translate their wire format into the events of ``statehitl.types.streaming`` and nothing
more; assembling those events into a message is ``collect_turn``'s job, shared by every provider.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar, cast

from statehitl.types.content import Messages
from statehitl.types.streaming import StreamEvent
from statehitl.types.tools import ToolSpec

T = TypeVar("T")

_DONE = object()


class Model(ABC):
    """A language model the agent can call. Subclass it to add a provider.

    ``stream`` is an async generator: ``async def stream(...)`` with ``yield`` in the body. It is called
    once per model turn with the whole conversation, and must not mutate ``messages``. Failures are
    raised as ``statehitl.models.errors`` exceptions so the agent can tell throttling and context
    overflow from everything else.
    """

    @abstractmethod
    def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation and yield the reply as Converse stream events, in order."""

    @abstractmethod
    def update_config(self, **model_config: Any) -> None:
        """Change options (model id, temperature, ...) for the calls that follow."""

    @abstractmethod
    def get_config(self) -> Mapping[str, Any]:
        """The options the next call will use."""


def require_known_options(model: str, given: Iterable[str], known: Collection[str]) -> None:
    """Reject misspelt options up front: a silently ignored ``temprature=`` is a slow bug to find."""
    unknown = sorted(set(given).difference(known))
    if unknown:
        raise TypeError(f"{model} got unknown option(s) {', '.join(unknown)}; it takes {', '.join(sorted(known))}")


async def iterate_in_thread(produce: Callable[[], Iterable[T]]) -> AsyncIterator[T]:
    """Iterate a blocking iterable (an SDK or socket stream) in a worker thread, yielding as items arrive.

    The event loop never waits on the network. ``produce`` runs in the thread too, so opening the
    request does not block either, and its exceptions surface here. If the consumer stops early, the
    thread stops at the next item and closes the iterator, which lets it release the connection.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()
    abandoned = threading.Event()

    def pump() -> None:
        try:
            iterator = iter(produce())
            try:
                for item in iterator:
                    if abandoned.is_set():
                        return
                    loop.call_soon_threadsafe(queue.put_nowait, item)
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()
        finally:
            if not abandoned.is_set():
                loop.call_soon_threadsafe(queue.put_nowait, _DONE)

    worker = asyncio.ensure_future(asyncio.to_thread(pump))
    try:
        while (item := await queue.get()) is not _DONE:
            yield cast(T, item)
        await worker
    finally:
        abandoned.set()
        if not worker.done():
            # Nobody will await the thread now; fetch its outcome so a late error is not reported as lost.
            worker.add_done_callback(lambda done: done.cancelled() or done.exception())
