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

import threading
from typing import Any, Final

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
    by ``request`` or by the caller's event of the running call; made when first needed, so an agent that
    is never cancelled and calls no tool makes none. ``deferred``: stop after the current tool batch only.
    ``message``: the text of the assistant message the cancelled call ends with.
    """

    __slots__ = ("_external", "_link", "_signal", "armed", "deferred", "message")

    def __init__(self) -> None:
        self._signal: threading.Event | None = None
        self.deferred = False
        self.message: str | None = None
        self.armed = False
        """Something can cancel the running call: ``request`` was called, or the call has a caller's event.
        Until then every cancellation-safe point is a single read (the signal is read-only to others)."""
        self._external: threading.Event | None = None
        self._link: _Link | None = None

    @property
    def signal(self) -> threading.Event:
        signal = self._signal
        if signal is None:
            with _MAKING:  # two threads asking at once (a cancel and a tool) must get the same event
                if self._signal is None:
                    self._signal = threading.Event()
                signal = self._signal
        return signal

    def request(self, *, message: str | None = None, after_current_tools: bool = False) -> None:
        """``agent.cancel()``: safe from any thread, idempotent; the last message given wins."""
        if message is not None:
            self.message = message
        if after_current_tools:
            self.deferred = True
        else:
            self.signal.set()
        self.armed = True

    def observed(self) -> bool:
        """Whether the running call is to stop at the next cancellation-safe point (the caller's event is
        read here too, so a cancel that landed between two polls is never missed)."""
        if not self.armed:
            return False
        external = self._external
        if external is not None and external.is_set():
            self.signal.set()
        signal = self._signal
        return signal is not None and signal.is_set()

    def ends_cycle(self) -> bool:
        """Whether the call stops after the tool batch that just ran (a deferred cancel, or an immediate one)."""
        return self.deferred or self.observed()

    def begin(self, external: threading.Event | None) -> None:
        """A call of the agent starts (``end`` must follow, however it ends): ``external`` (the call's
        ``cancel_signal``, never set or cleared here) cancels it too."""
        self.deferred = False
        signal = self._signal
        self.armed = signal is not None and signal.is_set()
        if not self.armed:
            self.message = None  # a cancel made before the call keeps its message
        if external is not None:
            self.armed = True
            self._external = external
            if external.is_set():
                self.signal.set()
            else:
                self._link = _Link(external, self.signal)

    def end(self) -> None:
        """The call ended: the state is cleared for the next one."""
        if self._link is not None:
            self._link.stop()
            self._link = None
        self._external = None
        if self._signal is not None:
            self._signal.clear()
        self.deferred = False
        self.message = None
        self.armed = False


_MAKING = threading.Lock()


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
    """``collect_turn``'s ``stop`` for one model stream of a call: stops it at the first event that arrives
    after a cancel, and remembers what it saw."""

    __slots__ = ("_cancellation", "complete", "cut")

    def __init__(self, cancellation: Cancellation) -> None:
        self._cancellation = cancellation
        self.cut = False
        """A cancel stopped the stream before its end."""
        self.complete = False
        """The stream reached ``messageStop``: the reply is whole."""

    def __call__(self, event: Any) -> bool:
        cancellation = self._cancellation
        if cancellation.armed and cancellation.observed():  # asked for every event: one read, most of the time
            self.cut = True
            return True
        if "messageStop" in event:
            self.complete = True
        return False

    def cancelled(self) -> bool:
        """Whether the reply is to be replaced by the cancellation's: the stream was cut, or it ended without
        ``messageStop`` after a cancel (a provider that aborts in flight)."""
        return self.cut or (not self.complete and self._cancellation.observed())
