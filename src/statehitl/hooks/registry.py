"""The hook registry: typed events, all callbacks run, interrupts collected across them.

Strands' contract, which users of its hooks rely on: every callback registered for an event runs, by
``order`` (lower first; ``HookOrder`` names Strands' levels) and, within one order, in registration
order, reversed for After* events so setup/teardown pairs nest; when several callbacks interrupt, all
of their interrupts are returned together. The firing order is worked out when a callback is added,
so firing an event costs what it did before orders existed.
"""

from __future__ import annotations

import bisect
import inspect
import math
import typing
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

from statehitl import observe
from statehitl.errors import InterruptOutsideRunError, InvalidResponseError
from statehitl.interrupt import Interrupt, InterruptRaised, InterruptScope
from statehitl.transitions import HookFired

__all__ = ["HookCallback", "HookEvent", "HookOrder", "HookProvider", "HookRegistry", "InterruptibleEvent",
           "annotated_event_types", "cancel_text"]

E = TypeVar("E", bound="HookEvent")
HookCallback = Callable[[E], "Awaitable[None] | None"]


class HookEvent:
    """Base of all hook events. After* events set ``should_reverse_callbacks``."""

    should_reverse_callbacks: bool = False


class HookOrder:
    """Strands' named levels for ``add_callback(..., order=)``: lower runs first, equal keeps registration order.

    Intervention handlers (``statehitl.interventions``) run at ``INTERVENTION_INPUT`` on Before* events,
    after the ordinary hooks have had their say, and at ``INTERVENTION_OUTPUT`` on After* events, before
    them, so a policy sees what goes in last and what comes out first.
    """

    SDK_FIRST: int = -100
    INTERVENTION_OUTPUT: int = -90
    DEFAULT: int = 0
    MODEL_ROUTING: int = 50
    INTERVENTION_INPUT: int = 90
    SDK_LAST: int = 100


class InterruptibleEvent(HookEvent):
    """An event whose callbacks may call ``event.interrupt(name, reason=...)``.

    A run fires it with ``HookRegistry.fire(event, scope=...)``; outside a run it cannot interrupt.
    """

    _scope: InterruptScope | None = None

    def interrupt(self, name: str, reason: Any = None, response: Any = None, *, response_type: Any = None,
                  expires_in: float | None = None, expires_at: float | None = None, on_expire: Any = None,
                  responders: list[str] | None = None, response_schema: dict[str, Any] | None = None) -> Any:
        """Ask the human; returns their response on resume (or ``response``, an answer known in
        advance). ``reason`` must be JSON-serializable. ``response_type`` (a pydantic model, a
        ``Literal[...]``, any type pydantic validates): the response is validated as it at resume and
        returned as its value; the interrupt carries its JSON schema.
        ``response_schema``: a JSON schema the answer must fit, for answers no one Python type describes
        (it replaces ``response_type``'s on the interrupt); checked by every door before the thread is
        claimed, the response returned as given.
        ``expires_in`` (seconds) or ``expires_at`` (epoch) with ``on_expire``: past the deadline a sweep
        (``statehitl inbox sweep``) answers it with ``on_expire``. ``responders``: who may answer, names
        and ``group:NAME`` groups; an answer from anyone else is refused (``ResponderNotAllowedError``) and
        kept in the audit trail as ``refused``."""
        return self._active_scope(name).interrupt(name, reason, response, response_type, digest=self._digest(),
                                                  schema=response_schema, expires_in=expires_in,
                                                  expires_at=expires_at, on_expire=on_expire, responders=responders)

    def answered(self, name: str) -> bool:
        """Whether this run holds the human's answer to this event's interrupt ``name``: the run resumes
        it, and ``interrupt(name, ...)`` will return the answer rather than stop. Lets a hook skip work
        that only decides whether to ask (a classifier's model call) when the question was already put."""
        return self._active_scope(name).has_answer(name)

    def refuse_answer(self, error: InvalidResponseError, name: str) -> None:
        """Mark ``error`` as this run's refusal of the human's answer to interrupt ``name`` (a hook's own
        check, past the interrupt's type): the run then withdraws that answer whichever door stored it
        (``statehitl.refused_answers``), and the interrupt waits to be answered again."""
        error.refused_answer, error.interrupt_id = True, self._active_scope(name).id_of(name)

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
        self._entries: dict[type[HookEvent], list[tuple[float, Callable[[Any], Any]]]] = {}
        """Each type's callbacks with their order, sorted by order, registration order within one."""
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], Any]]] = {}
        """Each type's callbacks in the order they fire (derived from ``_entries`` on every addition)."""

    def add_callback(self, event_type: type[E] | None, callback: Callable[[E], Any], *,
                     order: float = HookOrder.DEFAULT) -> None:
        """Run ``callback(event)`` whenever an event of exactly ``event_type`` fires; with None, of the
        type its first parameter is annotated with (each type of a union), as in Strands. ``order``:
        lower runs first (``HookOrder``'s levels); callbacks of one order run in registration order."""
        if isinstance(order, bool) or not isinstance(order, int | float) or not math.isfinite(order):
            raise TypeError(f"hook order must be a finite number (a HookOrder level), got {order!r}")
        if event_type is None:
            kinds = annotated_event_types(callback)  # checks it is callable, and that each type is an event
        elif not (isinstance(event_type, type) and issubclass(event_type, HookEvent)):
            raise TypeError(f"add_callback expects a HookEvent subclass, got {event_type!r}")
        elif not callable(callback):
            raise TypeError(f"hook callback for {event_type.__name__} must be callable, got {callback!r}")
        else:
            kinds = [event_type]
        for one in kinds:
            self._insert(one, order, callback)

    def _insert(self, event_type: type[HookEvent], order: float, callback: Callable[[Any], Any]) -> None:
        entries = self._entries.setdefault(event_type, [])
        bisect.insort_right(entries, (order, callback), key=lambda entry: entry[0])
        self._callbacks[event_type] = _firing_order(entries, event_type.should_reverse_callbacks)

    def add_hook(self, provider: HookProvider) -> None:
        """Let ``provider`` register its callbacks."""
        provider.register_hooks(self)

    def add(self, hook: HookProvider | HookRegistry) -> None:
        """Accept what users pass as ``hooks=[...]``: providers, or whole registries to merge."""
        if isinstance(hook, HookRegistry):
            for event_type, entries in hook._entries.items():
                for order, callback in entries:
                    self._insert(event_type, order, callback)
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
        raised: list[Interrupt] = []
        for callback in self._callbacks.get(type(event), ()):
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


def _firing_order(entries: list[tuple[float, Callable[[Any], Any]]], reverse: bool) -> list[Callable[[Any], Any]]:
    """The callbacks of ``entries`` (sorted by order) as they fire: by order, and within one order in
    registration order, or its reverse for After* events (Strands reverses within an order, never across)."""
    if not reverse:
        return [callback for _, callback in entries]
    fired: list[Callable[[Any], Any]] = []
    start = 0
    for end in range(1, len(entries) + 1):
        if end == len(entries) or entries[end][0] != entries[start][0]:
            fired.extend(callback for _, callback in reversed(entries[start:end]))
            start = end
    return fired


def cancel_text(cancel: bool | str, default: str) -> str | None:
    """The message a hook's cancel field asks for, or None if it does not cancel.

    Hooks cancel with ``True`` or with the message to report; every event reads the field the same way.
    """
    if not cancel:
        return None
    return cancel if isinstance(cancel, str) else default
