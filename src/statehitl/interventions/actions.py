"""The decisions an intervention handler returns, as Strands names them: ``Proceed``, ``Deny``, ``Guide``,
``Confirm``, ``Transform``.

A handler only decides; ``statehitl.interventions.effects`` says what each decision does to each event,
and the registry composes the decisions of several handlers. What each action does where::

    | Action    | before_invocation | before_tool_call | before_model_call | after_tool_call | after_model_call |
    |-----------|-------------------|------------------|-------------------|-----------------|------------------|
    | Proceed   | -                 | -                | -                 | -               | -                |
    | Deny      | cancel            | cancel           | cancel            | (no effect)     | (no effect)      |
    | Guide     | cancel, feedback  | cancel, feedback | add feedback      | (no effect)     | feedback + retry |
    | Confirm   | (no effect)       | ask a human      | (no effect)       | (no effect)     | (no effect)      |
    | Transform | apply             | apply            | apply             | apply           | apply            |

A cancel by ``Deny`` skips the handlers after it; every ``Guide`` of an event is gathered and applied
once, as ``[name] feedback`` lines. "No effect" is logged as a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from statehitl.hooks.agent_events import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)

__all__ = [
    "Confirm",
    "Deny",
    "Guide",
    "InterventionAction",
    "LifecycleEvent",
    "Proceed",
    "Transform",
    "default_evaluate",
]

LifecycleEvent: TypeAlias = (
    BeforeInvocationEvent | BeforeToolCallEvent | AfterToolCallEvent | BeforeModelCallEvent | AfterModelCallEvent
)
"""The events an intervention handler sees."""

_APPROVALS = frozenset({"y", "yes"})


def default_evaluate(response: Any) -> bool:
    """Whether a human's answer approves: ``True``, or ``"y"``/``"yes"`` in any case, spaces trimmed.

    Everything else refuses, so a typo or an empty answer never lets an action through.
    """
    if response is True:
        return True
    return isinstance(response, str) and response.lower().strip() in _APPROVALS


@dataclass(frozen=True)
class Proceed:
    """Let the operation go on unchanged. ``reason`` is for logs; the model never sees it."""

    type: str = field(default="proceed", init=False)
    reason: str | None = None


@dataclass(frozen=True)
class Deny:
    """Block the operation; the model reads ``"DENIED: {reason}"`` (a tool's error result, or the reply
    that stands in for a model call or an invocation)."""

    type: str = field(default="deny", init=False)
    reason: str = ""


@dataclass(frozen=True)
class Guide:
    """Steer the model with ``feedback``.

    Before a tool call or an invocation it cancels them with the feedback; before a model call it adds
    the feedback as a user message the model sees on that call; after a model call it discards the reply
    and calls the model again with the feedback. That last one retries without limit: a handler must
    stop guiding (count its retries, then ``Deny`` or ``Proceed``) or the turn never ends.
    """

    type: str = field(default="guide", init=False)
    feedback: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class Confirm:
    """Ask a human before a tool call runs (``before_tool_call`` only).

    Without ``response`` the agent stops with an interrupt named after the handler, whose reason is
    ``prompt``; with it (an answer already collected, e.g. by an inline prompt) the agent does not stop.
    The answer is the interrupt's: stored once, audited, bound to the tool call's digest, and it may come
    from the application's next call, the inbox, its page or a worker in another process. ``evaluate``
    reads it (default: ``default_evaluate``); a refusal cancels the call with
    ``"CONFIRMATION_FAILED: {prompt}"``. The answer vocabulary of ``statehitl.answers`` is understood
    too: ``Approve`` runs the call, ``Reject(message)`` cancels it with the message as the reason, and
    ``Edit(input)`` runs it with that input (checked against the tool's input schema).

    statehitl's own fields: ``responders`` (who may answer: names and ``group:NAME``), ``expires_in`` or
    ``expires_at`` with ``on_expire`` (the answer a sweep gives once the deadline passes), and
    ``response_schema``, the JSON schema of the answers ``evaluate`` takes besides the vocabulary (None:
    strings and booleans with the default ``evaluate``, any JSON with another); every door refuses an
    answer outside it before the thread is claimed.
    """

    type: str = field(default="confirm", init=False)
    prompt: str = ""
    reason: str | None = None
    response: Any = None
    evaluate: Callable[[Any], bool] | None = field(default=default_evaluate)
    responders: list[str] | None = None
    expires_in: float | None = None
    expires_at: float | None = None
    on_expire: Any = None
    response_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Transform:
    """Change the event in place: ``apply(event)`` runs now, and the handlers after this one, the tool,
    the model and the conversation see what it changed."""

    type: str = field(default="transform", init=False)
    apply: Callable[[LifecycleEvent], None] = field(default=lambda event: None)
    reason: str | None = None


InterventionAction: TypeAlias = Proceed | Deny | Guide | Confirm | Transform
"""Any decision a handler can return."""
