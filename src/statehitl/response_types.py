"""Typed interrupt responses: the JSON schema an interrupt carries, and the check of an answer.

``interrupt(name, response_type=T)`` takes any type pydantic validates: a model, a ``Literal[...]``,
a union, ``int``... The schema (``TypeAdapter(T).json_schema()``) travels with the interrupt so a UI
can render a form and a resume can refuse a wrong answer before it claims the thread
(``resume.parse_responses``); the handler that re-runs gets the validated value (a model instance
for a model), checked once more by the type itself, which is the authoritative check.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any

from pydantic import TypeAdapter, ValidationError

from statehitl.errors import ResponseValidationError

_KNOWN: OrderedDict[str, Any] = OrderedDict()
"""The response types of the typed interrupts this process raised or answered, by interrupt id (which names
its thread, step and call site): what lets every door check an answer with the type itself, validators
and all, before it is stored, when the door runs in the process that asked."""
_REMEMBERED = 4096


@functools.lru_cache(maxsize=256)
def _adapter(response_type: Any) -> TypeAdapter[Any]:
    # Building an adapter compiles a validator: once per type, not once per interrupt call.
    return TypeAdapter(response_type)


def _adapter_of(response_type: Any) -> TypeAdapter[Any]:
    try:
        return _adapter(response_type)
    except TypeError:  # an unhashable type expression: build it each time
        return TypeAdapter(response_type)


def response_schema(response_type: Any) -> dict[str, Any]:
    """The JSON schema of the responses ``response_type`` accepts.

    Closed: an object whose model does not say what to do with fields it does not declare (pydantic's
    default ignores them) refuses them, so a typo in an answer (``{"aproved": true}``) is an error the
    human sees, not a default silently applied. A model that allows extra fields keeps them allowed."""
    try:
        schema = _adapter_of(response_type).json_schema()
    except Exception as exc:  # pydantic's errors for types it cannot describe vary by version
        raise TypeError(f"response_type={response_type!r} has no JSON schema pydantic can write: {exc}") from exc
    closed: dict[str, Any] = _closed(schema)
    return closed


def _closed(node: Any) -> Any:
    """``node`` with ``additionalProperties: false`` on every object schema that declares properties and
    says nothing about others."""
    if isinstance(node, dict):
        closed = {key: _closed(value) for key, value in node.items()}
        if "properties" in closed and closed.get("type") == "object" and "additionalProperties" not in closed:
            closed["additionalProperties"] = False
        return closed
    if isinstance(node, list):
        return [_closed(item) for item in node]
    return node


def validate_response(response_type: Any, value: Any, where: str) -> Any:
    """``value`` validated as ``response_type``; ``ResponseValidationError`` naming ``where`` and each
    problem otherwise."""
    try:
        return _adapter_of(response_type).validate_python(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"at {'.'.join(str(p) for p in e['loc']) or '$'}: {e['msg']}" for e in exc.errors(include_url=False)[:5]
        )
        raise ResponseValidationError(f"{where} is not a valid response: {problems}") from None


def remember_type(interrupt_id: str, response_type: Any) -> None:
    """Keep ``response_type`` as the type of interrupt ``interrupt_id`` (the most recent few thousand)."""
    _KNOWN[interrupt_id] = response_type
    _KNOWN.move_to_end(interrupt_id)
    while len(_KNOWN) > _REMEMBERED:
        _KNOWN.popitem(last=False)


def known_type(interrupt_id: str) -> Any | None:
    """The response type interrupt ``interrupt_id`` declared, if this process raised or answered it."""
    return _KNOWN.get(interrupt_id)


def check_answer(interrupt_id: str, schema: dict[str, Any] | None, response: Any, where: str) -> None:
    """Refuse an answer before it is stored: against the interrupt's stored JSON schema, then against its
    type itself where this process knows it (``remember_type``), which runs the validators a schema cannot
    state (an ``AfterValidator``). ``ResponseValidationError`` naming ``where`` and each problem.

    A door in another process knows only the schema: the type then checks the answer when the handler
    re-runs, and an answer refused there is withdrawn, whichever door stored it."""
    if schema is None:
        return
    from statehitl.json_schema_check import schema_errors
    from statehitl.values import as_json, decode_value

    problems = schema_errors(as_json(response), schema)
    if problems:
        raise ResponseValidationError(f"{where} is not a valid response: {'; '.join(problems)}; nothing was "
                                      "applied, the thread still waits on it")
    response_type = known_type(interrupt_id)
    if response_type is not None:
        try:
            validate_response(response_type, decode_value(response), where)
        except ResponseValidationError as exc:
            raise ResponseValidationError(f"{exc}; nothing was applied, the thread still waits on it") from None
