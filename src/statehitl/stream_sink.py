"""One sink for a streamed run: every chunk it yields, from every producer, goes through ``StreamSink.put``.

LangGraph's stream has one door (its loop's ``_emit`` into a ``StreamProtocol``) that drops what the reader
did not ask for, by mode and by namespace, and turns task and checkpoint chunks into ``debug`` ones; this
sink is statehitl's. Its producers are the run itself (values, checkpoints), the step executor (tasks,
updates, interrupts) and the code of a node (custom chunks, an agent's text), which reaches the stream it
runs in through ``current_scope()``. A new mode, or a subgraph's namespace, is one more ``put``.

A streamed run is read on its event loop while sync nodes run in worker threads: a chunk sent from a
thread goes through the loop, and so does any chunk sent while such chunks wait there, so the reader gets
every chunk in the order it was sent. Once the reader is gone (``close``) chunks are dropped, so a node
still running in a thread sends into nothing instead of into a loop that may be closed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

StreamMode = Literal["updates", "values", "custom", "tasks", "checkpoints", "debug", "messages"]
STREAM_MODES: tuple[StreamMode, ...] = ("updates", "values", "custom", "tasks", "checkpoints", "debug", "messages")

Namespace = tuple[str, ...]
"""Where a chunk comes from: ``()`` for the graph streamed, ``("node:step", ...)`` for a subgraph in it."""

_SHOWN_IN_DEBUG = frozenset({"tasks", "checkpoints"})
"""The modes whose chunks ``debug`` also shows, wrapped with their step, time and type (LangGraph's)."""


class StreamSink:
    """The chunks of one streamed run, filtered by what the reader asked for and handed to ``emit`` in order.

    ``modes``: the stream modes asked for; ``paired``: chunks are ``(mode, chunk)`` (a list of modes was
    asked for); ``subgraphs``: chunks are prefixed with their namespace, and only then do a subgraph's
    chunks reach the reader at all. Built on the loop the run is read on.
    """

    def __init__(self, emit: Callable[[Any], None], modes: Sequence[str], *, paired: bool, subgraphs: bool) -> None:
        self.modes = frozenset(modes)
        self.subgraphs = subgraphs
        self._debug = "debug" in self.modes
        self._emit = emit
        self._paired = paired
        self._loop = asyncio.get_running_loop()
        self._home = threading.get_ident()
        self._queued = 0
        self._lock = threading.Lock()
        self._closed = False

    def wants(self, mode: str, namespace: Namespace = ()) -> bool:
        """Whether a chunk of ``mode`` from ``namespace`` would reach the reader (so it is worth making)."""
        if namespace and not self.subgraphs:
            return False
        return mode in self.modes or (self._debug and mode in _SHOWN_IN_DEBUG)

    def put(self, namespace: Namespace, mode: str, chunk: Any, *, step: int = 0, at: float | None = None) -> None:
        """Hand one chunk to the reader if it asked for it. A task or checkpoint chunk also goes out as a
        ``debug`` one when that was asked for: ``step`` is its step, ``at`` its time (now, if None)."""
        if namespace and not self.subgraphs:
            return
        if mode in self.modes:
            self._deliver(self._shaped(namespace, mode, chunk))
        if self._debug and mode in _SHOWN_IN_DEBUG:
            when = datetime.now(UTC) if at is None else datetime.fromtimestamp(at, UTC)
            kind = "checkpoint" if mode == "checkpoints" else "task_result" if "result" in chunk else "task"
            wrapped = {"step": step, "timestamp": when.isoformat(), "type": kind, "payload": chunk}
            self._deliver(self._shaped(namespace, "debug", wrapped))

    def close(self) -> None:
        """The reader is gone: drop whatever is still sent (a node finishing in a worker thread)."""
        self._closed = True

    def _shaped(self, namespace: Namespace, mode: str, chunk: Any) -> Any:
        if self._paired:
            return (namespace, mode, chunk) if self.subgraphs else (mode, chunk)
        return (namespace, chunk) if self.subgraphs else chunk

    def _deliver(self, item: Any) -> None:
        if self._closed:
            return
        here = threading.get_ident() == self._home
        if here and not self._queued:
            self._emit(item)
            return
        with self._lock:
            self._queued += 1
        try:
            if here:
                self._loop.call_soon(self._release, item)
            else:
                self._loop.call_soon_threadsafe(self._release, item)
        except RuntimeError:  # the loop closed under a thread that outlived the run: nobody reads any more
            self._closed = True

    def _release(self, item: Any) -> None:
        with self._lock:
            self._queued -= 1
        if not self._closed:
            self._emit(item)


class StreamScope(Protocol):
    """Where the code running in a node of a streamed run sends what it streams itself: custom chunks
    (``get_stream_writer()``), the text an agent's model streams and the messages of LangChain chat models
    (``stream_mode="messages"``)."""

    def wants(self, mode: str) -> bool:
        """Whether a chunk of ``mode`` from here reaches the reader."""
        ...

    def custom(self, chunk: Any) -> None:
        """One ``stream_mode="custom"`` chunk."""
        ...

    def model_text(self, text: str) -> None:
        """One piece of a model's streamed text (``stream_mode="messages"``)."""
        ...

    def watch_messages(self, config: dict[str, Any], given: Any
                       ) -> AbstractContextManager[Callable[[Any], None]] | None:
        """Around one node call given ``given`` and run under ``config``: the LangChain chat models it calls stream
        their messages here (``stream_mode="messages"``), and the function yielded takes what the node returned
        (its messages not streamed yet are sent whole). None when nobody reads messages from here."""
        ...


_SCOPE: ContextVar[StreamScope | None] = ContextVar("statehitl_stream_scope", default=None)


def current_scope() -> StreamScope | None:
    """The stream the running code is in (a node of a streamed run, or of a subgraph in one), if any."""
    return _SCOPE.get()


def enter_scope(scope: StreamScope | None) -> Token[StreamScope | None]:
    """Make ``scope`` the running code's stream (None: none); returns the token ``leave_scope`` takes."""
    return _SCOPE.set(scope)


def leave_scope(token: Token[StreamScope | None]) -> None:
    _SCOPE.reset(token)
