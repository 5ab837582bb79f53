"""The hook registry: typed events, all callbacks run, interrupts collected across them.

Strands' contract, which users of its hooks rely on: every callback registered for an event runs
(After* events in reverse registration order, so setup/teardown pairs nest), and when several
callbacks interrupt, all of their interrupts are returned together.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

from statehitl import observe
from statehitl.errors import InterruptOutsideRunError
from statehitl.interrupt import Interrupt, InterruptRaised, InterruptScope
from statehitl.transitions import HookFired

__all__ = ["HookCallback", "HookEvent", "HookProvider", "HookRegistry", "InterruptibleEvent", "annotated_event_types",
           "cancel_text"]

E = TypeVar("E", bound="HookEvent")
HookCallback = Callable[[E], "Awaitable[None] | None"]


class HookEvent:
    """Base of all hook events. After* events set ``should_reverse_callbacks``."""

    should_reverse_callbacks: bool = False


class InterruptibleEvent(HookEvent):
    """An event whose callbacks may call ``event.interrupt(name, reason=...)``.

    A run fires it with ``HookRegistry.fire(event, scope=...)``; outside a run it cannot interrupt.
    """

    _scope: InterruptScope | None = None

    def interrupt(self, name: str, reason: Any = None, response: Any = None, *, response_type: Any = None,
                  expires_in: float | None = None, expires_at: float | None = None, on_expire: Any = None,
                  responders: list[str] | None = None) -> Any:
        """Ask the human; returns their response on resume (or ``response``, an answer known in
        advance). ``reason`` must be JSON-serializable. ``response_type`` (a pydantic model, a
        ``Literal[...]``, any type pydantic validates): the response is validated as it at resume and
        returned as its value; the interrupt carries its JSON schema.
        ``expires_in`` (seconds) or ``expires_at`` (epoch) with ``on_expire``: past the deadline a sweep
        (``statehitl inbox sweep``) answers it with ``on_expire``. ``responders``: who may answer, names
        and ``group:NAME`` groups; an answer from anyone else is refused (``ResponderNotAllowedError``) and
        kept in the audit trail as ``refused``."""
        return self._active_scope(name).interrupt(name, reason, response, response_type, digest=self._digest(),
                                                  expires_in=expires_in, expires_at=expires_at, on_expire=on_expire,
                                                  responders=responders)

    def _active_scope(self, name: str) -> InterruptScope:
        if self._scope is None:
            raise InterruptOutsideRunError(
                f"{type(self).__name__}.interrupt({name!r}) is only available while a run fires it; this event "
                "was fired outside a run, where nothing could stop and resume"
            )
        return self._scope

    def _digest(self) -> str | None:
        """The digest of the tool call this event is about (``action_digest``), if it is about one."""
        return None


def annotated_event_types(callback: Callable[..., Any]) -> list[type[HookEvent]]:
    """The event types ``callback``'s first parameter is annotated with (one, or each of a union); a
    clear error when it names none."""
    if not callable(callback):
        raise TypeError(f"a hook callback must be callable, got {callback!r}")
    target = callback if inspect.isroutine(callback) else type(callback).__call__
    try:
        hints = typing.get_type_hints(target)
        first = next(iter(p for p in inspect.signature(callback).parameters.values()), None)
    except (NameError, TypeError, ValueError):
        hints, first = {}, None
    hint = hints.get(first.name) if first is not None else None
    named = typing.get_args(hint) or (hint,)
    found = [t for t in named if isinstance(t, type) and issubclass(t, HookEvent)]
    if not found or len(found) != len(named):
        raise TypeError(
            f"cannot tell which event {callback!r} is for: annotate its first parameter with a HookEvent subclass "
            "(or a union of them), or pass the event type"
        )
    return found


@runtime_checkable
class HookProvider(Protocol):
    """An object that registers several callbacks at once (the seed's ``ApprovalHook`` pattern)."""

    def register_hooks(self, registry: HookRegistry) -> None: ...


class HookRegistry:
    """Callbacks by event type. Empty registries cost one dict lookup per event site."""

    def __init__(self) -> None:
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], Any]]] = {}

    def add_callback(self, event_type: type[E] | None, callback: Callable[[E], Any]) -> None:
        """Run ``callback(event)`` whenever an event of exactly ``event_type`` fires; with None, of the
        type its first parameter is annotated with (each type of a union), as in Strands."""
        if event_type is None:
            kinds = annotated_event_types(callback)  # checks it is callable, and that each type is an event
        elif not (isinstance(event_type, type) and issubclass(event_type, HookEvent)):
            raise TypeError(f"add_callback expects a HookEvent subclass, got {event_type!r}")
        elif not callable(callback):
            raise TypeError(f"hook callback for {event_type.__name__} must be callable, got {callback!r}")
        else:
            kinds = [event_type]
        for one in kinds:
            self._callbacks.setdefault(one, []).append(callback)

    def add_hook(self, provider: HookProvider) -> None:
        """Let ``provider`` register its callbacks."""
        provider.register_hooks(self)

    def add(self, hook: HookProvider | HookRegistry) -> None:
        """Accept what users pass as ``hooks=[...]``: providers, or whole registries to merge."""
        if isinstance(hook, HookRegistry):
            for event_type, callbacks in hook._callbacks.items():
                self._callbacks.setdefault(event_type, []).extend(callbacks)
        elif hasattr(hook, "register_hooks"):
            hook.register_hooks(self)
        else:
            raise TypeError(f"hooks must be HookProvider objects (with register_hooks), got {hook!r}")

    def has_callbacks(self, event_type: type[HookEvent]) -> bool:
        """Whether firing ``event_type`` would do anything; lets hot paths skip building the event."""
        return event_type in self._callbacks

    async def fire(self, event: HookEvent, *, scope: InterruptScope | None = None) -> list[Interrupt]:
        """Run every callback for ``event``; return the interrupts they raised (all of them run).

        ``scope`` lets the callbacks of an ``InterruptibleEvent`` interrupt, for this firing only: the
        event object stays with the caller afterwards, where an interrupt could not be resumed.
        """
        if scope is not None:
            return await self._fire_in(event, scope)
        callbacks = self._callbacks.get(type(event), ())
        if event.should_reverse_callbacks:
            callbacks = list(reversed(callbacks))
        raised: list[Interrupt] = []
        for callback in callbacks:
            try:
                outcome = callback(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except InterruptRaised as stop:
                raised.extend(stop.interrupts)
        if observe.observers:
            observe.emit(HookFired(type(event).__name__, tuple(i.name for i in raised)))
        return raised

    async def _fire_in(self, event: HookEvent, scope: InterruptScope) -> list[Interrupt]:
        if not isinstance(event, InterruptibleEvent):
            raise TypeError(f"{type(event).__name__} is not an InterruptibleEvent, so it cannot fire with a scope")
        event._scope = scope
        try:
            return await self.fire(event)
        finally:
            event._scope = None


def cancel_text(cancel: bool | str, default: str) -> str | None:
    """The message a hook's cancel field asks for, or None if it does not cancel.

    Hooks cancel with ``True`` or with the message to report; every event reads the field the same way.
    """
    if not cancel:
        return None
    return cancel if isinstance(cancel, str) else default
