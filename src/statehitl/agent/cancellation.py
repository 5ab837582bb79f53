"""Strands' cancellation of a running call: ``agent.cancel()`` and an invocation's ``cancel_signal``.

A cancel is a request, honoured only where stopping leaves the conversation whole (Strands'
cancellation-safe points): between two chunks of the model's stream (the partial reply is dropped and
``"Cancelled by user"`` stands in for it), before a tool batch runs (every tool of it gets the error
result ``"Tool execution cancelled"``, no per-tool event fires), between two tools of a sequential
batch, and after a batch, before the model is called again. The call then ends with ``stop_reason ==
"cancelled"``, its conversation recorded in the agent's thread like any other ending, so the thread
goes on from there with the next prompt, in this process or any other. ``after_current_tools=True``
asks for the last of those points only: the tools already requested run, and the model is not called
again. A cancel never beats an interrupt: a batch that waits on a human stops on its interrupt.

The state is the agent's, not one call's: ``agent.cancel()`` made between calls cancels the next one (as
in Strands), and every call clears it when it ends, so a cancelled agent is usable again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from typing import Any, Final

__all__ = ["CANCELLED_BY_USER", "DENIED_INVOCATION", "TOOL_CANCELLED", "Cancellation", "StreamWatch", "watched_stream"]

CANCELLED_BY_USER: Final = "Cancelled by user"
"""The reply that stands in for a model stream cut by a cancel (Strands' words)."""

TOOL_CANCELLED: Final = "Tool execution cancelled"
"""The error result of a tool call a cancel kept from running (Strands' words)."""

DENIED_INVOCATION: Final = "invocation denied by hook"
"""The reply to a call a ``BeforeInvocationEvent`` hook cancelled with ``cancel = True`` (Strands' words)."""

_POLL_SECONDS: Final = 0.05
"""How often a caller's ``cancel_signal`` is looked at to set the agent's own while a call runs (as Strands
polls): each cancellation-safe point also reads it directly, so only tools watching
``tool_context.cancel_signal`` wait for the poll."""


class Cancellation:
    """One agent's cancellation state, shared by its calls and the tools and hooks they run.

    ``signal`` is the agent's ``cancel_signal`` (what tools see as ``tool_context.cancel_signal``): set
    by ``request`` or by the caller's event of the running call. ``deferred``: stop after the current tool
    batch only. ``message``: the text of the assistant message the cancelled call ends with.
    """

    def __init__(self) -> None:
        self.signal = threading.Event()
        self.deferred = False
        self.message: str | None = None
        self._external: threading.Event | None = None

    def request(self, *, message: str | None = None, after_current_tools: bool = False) -> None:
        """``agent.cancel()``: safe from any thread, idempotent; the last message given wins."""
        if message is not None:
            self.message = message
        if after_current_tools:
            self.deferred = True
        else:
            self.signal.set()

    def observed(self) -> bool:
        """Whether the running call is to stop at the next cancellation-safe point (the caller's event is
        read here too, so a cancel that landed between two polls is never missed)."""
        external = self._external
        if external is not None and external.is_set():
            self.signal.set()
        return self.signal.is_set()

    def ends_cycle(self) -> bool:
        """Whether the call stops after the tool batch that just ran (a deferred cancel, or an immediate one)."""
        return self.deferred or self.observed()

    @contextlib.contextmanager
    def invocation(self, external: threading.Event | None) -> Iterator[None]:
        """One call of the agent: ``external`` (the call's ``cancel_signal``, never set or cleared here)
        cancels it too; when the call ends, however it ends, the state is cleared for the next one."""
        self.deferred = False
        if not self.signal.is_set():
            self.message = None  # a cancel made before the call keeps its message
        self._external = external
        link: _Link | None = None
        if external is not None:
            if external.is_set():
                self.signal.set()
            else:
                link = _Link(external, self.signal)
        try:
            yield
        finally:
            if link is not None:
                link.stop()
            self._external = None
            self.signal.clear()
            self.deferred = False
            self.message = None


class _Link:
    """Sets the agent's signal once the caller's event is set, for the tools that watch it while a call runs.

    A thread, not a task of the call's event loop: a sync tool may run on that loop's thread and poll
    ``tool_context.cancel_signal`` there, and the loop could not run a task until it returned. Once
    ``stop`` is called (the call ended) it never sets the signal, so a late event cannot cancel the next
    call; it exits within one poll.
    """

    def __init__(self, external: threading.Event, internal: threading.Event) -> None:
        self._external = external
        self._internal = internal
        self._lock = threading.Lock()
        self._stopped = False
        threading.Thread(target=self._watch, name="statehitl-cancel-signal", daemon=True).start()

    def _watch(self) -> None:
        while not self._external.wait(_POLL_SECONDS):
            with self._lock:
                if self._stopped:
                    return
        with self._lock:
            if not self._stopped:
                self._internal.set()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True


class StreamWatch:
    """What ``watched_stream`` saw of one model stream."""

    def __init__(self) -> None:
        self.cut = False
        """A cancel stopped the stream before its end."""
        self.complete = False
        """The stream reached ``messageStop``: the reply is whole."""

    def cancelled(self, cancellation: Cancellation) -> bool:
        """Whether the reply is to be replaced by the cancellation's: the stream was cut, or it ended without
        ``messageStop`` after a cancel (a provider that aborts in flight)."""
        return self.cut or (not self.complete and cancellation.observed())


async def watched_stream(stream: AsyncIterable[Any], cancellation: Cancellation,
                         watch: StreamWatch) -> AsyncIterator[Any]:
    """``stream``, stopped (and closed) at the first chunk that arrives after a cancel; ``watch`` says so."""
    try:
        async for chunk in stream:
            if cancellation.observed():
                watch.cut = True
                return
            if "messageStop" in chunk:
                watch.complete = True
            yield chunk
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
