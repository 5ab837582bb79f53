"""``InterventionRegistry``: an agent's intervention handlers, wired to its hook events.

One hook callback per lifecycle method that some handler overrides (none at all for an agent without
handlers), registered at Strands' orders: ``HookOrder.INTERVENTION_INPUT`` on Before* events, so the
ordinary hooks have run first, and ``HookOrder.INTERVENTION_OUTPUT`` on After* events, so they run
after. For each event the handlers decide in registration order: a ``Deny`` (or a refused ``Confirm``)
skips the rest, every ``Guide`` is gathered and applied once at the end, a ``Transform`` changes the
event for the handlers after it. A handler's exception goes by its ``on_error``; interrupts, refused
answers and misuse of interrupts always go through, since they are the run's control flow and the
developer's to fix, never a policy's failure to swallow.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

from statehitl.errors import GraphInterrupt, InterruptError
from statehitl.hooks.agent_events import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)
from statehitl.hooks.registry import HookEvent, HookOrder, HookRegistry
from statehitl.interventions.actions import Confirm, Deny, Guide, InterventionAction, Proceed, Transform
from statehitl.interventions.effects import EFFECTS, Effect
from statehitl.interventions.handler import LIFECYCLE_METHODS, InterventionHandler, overrides

__all__ = ["InterventionRegistry"]

logger = logging.getLogger("statehitl.interventions")

_EVENTS: dict[str, tuple[type[HookEvent], int]] = {
    "before_invocation": (BeforeInvocationEvent, HookOrder.INTERVENTION_INPUT),
    "before_tool_call": (BeforeToolCallEvent, HookOrder.INTERVENTION_INPUT),
    "after_tool_call": (AfterToolCallEvent, HookOrder.INTERVENTION_OUTPUT),
    "before_model_call": (BeforeModelCallEvent, HookOrder.INTERVENTION_INPUT),
    "after_model_call": (AfterModelCallEvent, HookOrder.INTERVENTION_OUTPUT),
}
_ACTIONS = (Proceed, Deny, Guide, Confirm, Transform)
_ON_ERROR = ("throw", "proceed", "deny")
_CONTROL_FLOW = (GraphInterrupt, InterruptError)
"""What passes through every handler untouched: a stop for a human, a refused answer, misuse of interrupts."""


class InterventionRegistry:
    """The handlers of one agent, in evaluation order, and their hook callbacks in ``hook_registry``.

    ``ValueError`` for two handlers of one name (the name is the handler's interrupt name and feedback
    label), ``TypeError`` for something that is not a handler or a handler without a usable name or
    ``on_error``: all at ``Agent(...)``, before anything runs.
    """

    def __init__(self, handlers: Sequence[InterventionHandler], hook_registry: HookRegistry) -> None:
        if not isinstance(handlers, list | tuple):
            raise TypeError(f"interventions must be a list of InterventionHandler instances, got {handlers!r}"
                            + ("; write interventions=[handler]" if isinstance(handlers, InterventionHandler) else ""))
        seen: set[str] = set()
        for handler in handlers:
            _check(handler)
            if handler.name in seen:
                raise ValueError(f"Duplicate intervention handler name: '{handler.name}'")
            seen.add(handler.name)
        self._handlers = list(handlers)
        for method in LIFECYCLE_METHODS:
            deciding = [handler for handler in self._handlers if overrides(handler, method)]
            if deciding:
                event_type, order = _EVENTS[method]
                hook_registry.add_callback(event_type, _Dispatch(method, deciding, EFFECTS[method]), order=order)

    @property
    def handlers(self) -> list[InterventionHandler]:
        """The handlers, in registration (evaluation) order."""
        return list(self._handlers)


def _check(handler: Any) -> None:
    if not isinstance(handler, InterventionHandler):
        raise TypeError(f"interventions must be InterventionHandler instances (statehitl.interventions), got "
                        f"{handler!r}; hooks go in hooks=[...]")
    if not isinstance(handler.name, str) or not handler.name:
        raise TypeError(f"intervention handler {type(handler).__name__} needs a name, a non-empty str; got "
                        f"{handler.name!r}")
    if handler.on_error not in _ON_ERROR:
        raise TypeError(f"intervention handler {handler.name!r}: on_error must be one of "
                        f"{', '.join(map(repr, _ON_ERROR))}, got {handler.on_error!r}")


class _Dispatch:
    """The hook callback of one lifecycle method: its handlers decide, in order, and their actions apply."""

    def __init__(self, method: str, handlers: list[InterventionHandler], effect: Effect) -> None:
        self.method = method
        self.handlers = handlers
        self.effect = effect

    async def __call__(self, event: HookEvent) -> None:
        guides: list[tuple[str, Guide]] = []
        for handler in self.handlers:
            action = await self._decide(handler, event)
            if action is None:
                continue
            if isinstance(action, Guide):
                guides.append((handler.name, action))
            elif self._apply(handler, event, action):
                return
        if guides:
            feedback = "\n".join(f"[{name}] {guide.feedback}" for name, guide in guides)
            self.effect(event, Guide(feedback=feedback), "")

    async def _decide(self, handler: InterventionHandler, event: HookEvent) -> InterventionAction | None:
        """The handler's action (None: it failed with ``on_error="proceed"``)."""
        try:
            decided = getattr(handler, self.method)(event)
            if inspect.isawaitable(decided):
                decided = await decided
        except _CONTROL_FLOW:
            raise
        except Exception as error:
            return _on_error(handler, self.method, error)
        if decided is None:
            raise TypeError(f"handler '{handler.name}.{self.method}' returned None; expected an InterventionAction")
        if not isinstance(decided, _ACTIONS):
            raise TypeError(f"handler '{handler.name}.{self.method}' returned {decided!r}; expected an "
                            "InterventionAction (Proceed, Deny, Guide, Confirm or Transform)")
        return decided

    def _apply(self, handler: InterventionHandler, event: HookEvent, action: InterventionAction) -> bool:
        """Apply ``action``; True when the remaining handlers are skipped. A failure to apply it (a
        ``Transform`` that raises, an ``evaluate`` that raises) goes by the handler's ``on_error`` too."""
        try:
            return self.effect(event, action, handler.name)
        except _CONTROL_FLOW:
            raise
        except Exception as error:
            instead = _on_error(handler, self.method, error)
            return instead is not None and self.effect(event, instead, handler.name)


def _on_error(handler: InterventionHandler, method: str, error: Exception) -> InterventionAction | None:
    """What a handler's exception becomes: raised again (``throw``), a ``Deny`` (``deny``), or None, the
    handler skipped (``proceed``)."""
    if handler.on_error == "deny":
        logger.warning("handler=<%s>, event=<%s>, on_error=<deny> | %s", handler.name, method, error)
        return Deny(reason=f"Handler threw: {error}")
    if handler.on_error == "proceed":
        logger.warning("handler=<%s>, event=<%s>, on_error=<proceed> | handler error skipped (fail-open) | %s",
                       handler.name, method, error)
        return None
    raise error
