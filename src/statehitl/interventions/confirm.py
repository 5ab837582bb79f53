"""What a ``Confirm`` does to a tool call: ask through the interrupt, then read the answer.

The question is an ordinary statehitl interrupt on the ``BeforeToolCallEvent``, named after the handler,
with the prompt as its reason: so the answer is the interrupt's one binding answer (stored once, audited,
answerable from the app, the inbox, its page, a worker), bound to the tool call's digest, and it carries
the responders and the deadline the ``Confirm`` names. Its schema tells every door which answers it takes,
so a wrong one is refused before the thread is claimed: the answer vocabulary (``Approve``, ``Reject``,
``Edit`` with the tool's own input schema) and what ``evaluate`` reads (strings and booleans for the
default one).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from statehitl.answers import Approve, Edit, Reject, ToolAnswer, tool_answer_schema
from statehitl.errors import InvalidResponseError
from statehitl.hooks.agent_events import BeforeToolCallEvent
from statehitl.interventions.actions import Confirm, default_evaluate
from statehitl.response_types import validate_response

APPROVAL_ANSWERS: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "boolean"}]}
"""The answers ``default_evaluate`` reads (``True``, ``"y"``, ``"yes"`` approve; any other string or
``False`` refuses): a UI may send only these besides the answer vocabulary."""

_VOCABULARY = frozenset({"approve", "reject", "edit"})


def apply_confirm(event: BeforeToolCallEvent, action: Confirm, handler_name: str) -> bool:
    """Ask, then apply the answer to the call; True when the call is cancelled (the handlers after this
    one are skipped)."""
    preset = action.response.model_dump(mode="json") if isinstance(action.response, BaseModel) else action.response
    from_human = event.answered(handler_name)
    answer = event.interrupt(
        handler_name, reason=action.prompt, response=preset, response_schema=confirm_schema(event, action),
        responders=action.responders, expires_in=action.expires_in, expires_at=action.expires_at,
        on_expire=action.on_expire,
    )
    try:
        typed = tool_answer_of(answer, f"the answer to interrupt {handler_name!r} on tool "
                               f"{event.tool_use['name']!r}", from_human=from_human)
    except InvalidResponseError as refused:
        if refused.refused_answer:
            event.refuse_answer(refused, handler_name)  # withdrawn whichever door stored it
        raise
    if isinstance(typed, Approve):
        return False
    if isinstance(typed, Reject):
        event.cancel_tool = f"CONFIRMATION_FAILED: {action.prompt}\n  Reason: {typed.message}"
        return True
    if isinstance(typed, Edit):
        event.apply_edit(typed, handler_name)
        return False
    check = action.evaluate if action.evaluate is not None else default_evaluate
    if not check(answer):
        event.cancel_tool = f"CONFIRMATION_FAILED: {action.prompt}"
        return True
    return False


def tool_answer_of(answer: Any, where: str, *, from_human: bool) -> Approve | Reject | Edit | None:
    """``answer`` as the vocabulary's ``Approve``/``Reject``/``Edit`` when it is one (a model, or its JSON
    with ``"type"`` ``approve``, ``reject`` or ``edit``), else None (an answer for ``evaluate``).

    A tagged answer that does not fit is refused (``ResponseValidationError``); when the human gave it,
    as an answer refused at resume: nothing applied, the interrupt waits to be answered again.
    """
    if isinstance(answer, Approve | Reject | Edit):
        return answer
    if not (isinstance(answer, dict) and answer.get("type") in _VOCABULARY):
        return None
    try:
        typed: Approve | Reject | Edit = validate_response(ToolAnswer, answer, where)
    except InvalidResponseError as refused:
        refused.refused_answer = from_human
        raise
    return typed


def confirm_schema(event: BeforeToolCallEvent, action: Confirm) -> dict[str, Any] | None:
    """The interrupt's response schema: the vocabulary (``Edit`` held to the tool's input schema) or the
    answers ``evaluate`` reads; None (any JSON) when a custom ``evaluate`` says nothing of its answers."""
    others = action.response_schema
    if others is None:
        if action.evaluate is not None and action.evaluate is not default_evaluate:
            return None
        others = APPROVAL_ANSWERS
    return answers_schema(event.input_schema, others)


def answers_schema(input_schema: dict[str, Any] | None, others: dict[str, Any]) -> dict[str, Any]:
    """The vocabulary (its ``Edit`` held to ``input_schema``; None: any input) or ``others``, as one schema.

    ``TypeError`` when ``others`` keeps definitions where they would collide with the vocabulary's.
    """
    typed = tool_answer_schema(input_schema)
    definitions: dict[str, Any] = typed.pop("$defs")
    others = copy.deepcopy(others)
    for key, value in others.pop("$defs", {}).items():
        if key in definitions and definitions[key] != value:
            raise TypeError(f"response_schema defines {key!r}, a name the answer vocabulary's schema uses; rename "
                            "that definition")
        definitions[key] = value
    if "definitions" in others:
        raise TypeError("response_schema keeps its definitions under 'definitions'; put them under '$defs' so "
                        "they join the answer vocabulary's")
    return {"$defs": definitions, "anyOf": [typed, others]}
