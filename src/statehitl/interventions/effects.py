"""What each intervention action does to each lifecycle event, with Strands' messages.

One function per event: it applies one handler's action and says whether the remaining handlers are
skipped (a ``Deny``, or a refused ``Confirm``). ``Guide`` reaches these functions once per event, with
the feedback of every guiding handler already joined into ``[name] feedback`` lines. An action that
means nothing on an event is logged as a warning and ignored, as in Strands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeAlias

from statehitl.interventions.actions import Confirm, Deny, Guide, InterventionAction, Proceed, Transform
from statehitl.interventions.confirm import apply_confirm
from statehitl.types.content import Message

logger = logging.getLogger("statehitl.interventions")

Effect: TypeAlias = Callable[[Any, InterventionAction, str], bool]
"""``effect(event, action, handler_name)``: apply the action; True when the other handlers are skipped."""


def feedback_message(feedback: str) -> Message:
    """Guidance as the user message the model reads."""
    return {"role": "user", "content": [{"text": feedback}]}


def _no_effect(handler_name: str, method: str, action: InterventionAction) -> bool:
    if not isinstance(action, Proceed):
        logger.warning("handler=<%s>, event=<%s> | %s has no effect", handler_name, method, action.type)
    return False


def _before_invocation(event: Any, action: InterventionAction, handler_name: str) -> bool:
    if isinstance(action, Deny):
        event.cancel = f"DENIED: {action.reason}"
        return True
    if isinstance(action, Guide):
        event.cancel = f"GUIDANCE: {action.feedback}"
        return False
    if isinstance(action, Transform):
        action.apply(event)
        return False
    return _no_effect(handler_name, "before_invocation", action)


def _before_tool_call(event: Any, action: InterventionAction, handler_name: str) -> bool:
    if isinstance(action, Deny):
        event.cancel_tool = f"DENIED: {action.reason}"
        return True
    if isinstance(action, Confirm):
        return apply_confirm(event, action, handler_name)
    if isinstance(action, Guide):
        event.cancel_tool = f"GUIDANCE: {action.feedback}"
        return False
    if isinstance(action, Transform):
        action.apply(event)
        return False
    return _no_effect(handler_name, "before_tool_call", action)


def _after_tool_call(event: Any, action: InterventionAction, handler_name: str) -> bool:
    if isinstance(action, Transform):
        action.apply(event)
        return False
    return _no_effect(handler_name, "after_tool_call", action)


def _before_model_call(event: Any, action: InterventionAction, handler_name: str) -> bool:
    if isinstance(action, Deny):
        event.cancel = f"DENIED: {action.reason}"
        return True
    if isinstance(action, Guide):
        event.new_messages.append(feedback_message(action.feedback))
        return False
    if isinstance(action, Transform):
        action.apply(event)
        return False
    return _no_effect(handler_name, "before_model_call", action)


def _after_model_call(event: Any, action: InterventionAction, handler_name: str) -> bool:
    if isinstance(action, Guide):
        event.retry = True
        event.new_messages.append(feedback_message(action.feedback))
        return False
    if isinstance(action, Transform):
        action.apply(event)
        return False
    return _no_effect(handler_name, "after_model_call", action)


EFFECTS: dict[str, Effect] = {
    "before_invocation": _before_invocation,
    "before_tool_call": _before_tool_call,
    "after_tool_call": _after_tool_call,
    "before_model_call": _before_model_call,
    "after_model_call": _after_model_call,
}
"""The effect of each lifecycle method's actions, by method name."""
