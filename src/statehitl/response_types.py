"""Typed interrupt responses: the JSON schema an interrupt carries, and the check of an answer.

``interrupt(name, response_type=T)`` takes any type pydantic validates: a model, a ``Literal[...]``,
a union, ``int``... The schema (``TypeAdapter(T).json_schema()``) travels with the interrupt so a UI
can render a form and a resume can refuse a wrong answer before it claims the thread
(``resume.parse_responses``); the handler that re-runs gets the validated value (a model instance
for a model), checked once more by the type itself, which is the authoritative check.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter, ValidationError

from statehitl.errors import ResponseValidationError

__all__ = ["response_schema", "validate_response"]


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
