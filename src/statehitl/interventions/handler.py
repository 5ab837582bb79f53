"""``InterventionHandler``: the base class of a control layer (authorization, guardrails, steering).

A handler overrides the lifecycle methods it cares about, at class level, and returns a decision from
``statehitl.interventions.actions``; the base methods proceed. Only overridden methods are wired to the
agent's hooks, so a handler costs nothing on the events it does not look at. A method may be a plain
``def`` or an ``async def`` (to await an authorization service, a database, a person).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from typing import Any, Literal, TypeAlias, TypeVar

from statehitl.hooks.agent_events import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)
from statehitl.interventions.actions import Confirm, Deny, Guide, Proceed, Transform

__all__ = ["LIFECYCLE_METHODS", "InterventionHandler", "OnError", "overrides"]

_T = TypeVar("_T")
_MaybeAwaitable: TypeAlias = _T | Awaitable[_T]

OnError = Literal["throw", "proceed", "deny"]
"""What a handler's exception does: ``"throw"`` fails the run (the default: a broken policy blocks);
``"deny"`` logs it and denies (fail-closed); ``"proceed"`` logs it and goes on as if the handler had
proceeded (fail-open: the policy silently stops holding, so use it only where availability comes first)."""

LIFECYCLE_METHODS = ("before_invocation", "before_tool_call", "after_tool_call", "before_model_call",
                     "after_model_call")
"""The methods a handler may override, one per hook event."""


class InterventionHandler(ABC):
    """A control layer over an agent: ``Agent(interventions=[MyHandler()])``.

    Subclasses set ``name`` (unique among an agent's handlers: it names the handler's interrupt and its
    ``[name]`` feedback lines) and override lifecycle methods on the class; a method assigned to an
    instance is not seen. ``on_error`` (default ``"throw"``) says what a handler's exception does.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """The handler's unique name."""

    @property
    def on_error(self) -> OnError:
        """What this handler's exceptions do (``OnError``)."""
        return "throw"

    def before_invocation(
        self, event: BeforeInvocationEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Deny | Guide | Transform]:
        """A call to the agent begins."""
        return Proceed()

    def before_tool_call(
        self, event: BeforeToolCallEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Deny | Guide | Confirm | Transform]:
        """A tool is about to run."""
        return Proceed()

    def after_tool_call(self, event: AfterToolCallEvent, **kwargs: Any) -> _MaybeAwaitable[Proceed | Transform]:
        """A tool finished (or was cancelled)."""
        return Proceed()

    def before_model_call(
        self, event: BeforeModelCallEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Deny | Guide | Transform]:
        """The model is about to be called."""
        return Proceed()

    def after_model_call(
        self, event: AfterModelCallEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Guide | Transform]:
        """The model answered (or failed)."""
        return Proceed()


def overrides(handler: InterventionHandler, method: str) -> bool:
    """Whether ``handler``'s class overrides lifecycle ``method`` (instance attributes do not count)."""
    return getattr(type(handler), method, None) is not getattr(InterventionHandler, method)
