"""The JSON schemas a workflow describes itself with (LangGraph's ``get_input_jsonschema`` and friends), read
from the entrypoint function's annotations: its first parameter's type, its return type (``entrypoint.final[V,
S]``'s ``V``), and the ``context_schema``."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from statehitl.values import ValueTypes


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve describes nothing: Any, as LangGraph reads it
        return {}


def _titled(annotation: Any, title: str) -> dict[str, Any]:
    schema = {} if annotation is Any else TypeAdapter(annotation).json_schema()
    return {"title": title, **{k: v for k, v in schema.items() if k != "title"}}


def input_jsonschema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The schema of what ``invoke`` takes: the first parameter's annotation (``{}`` for none)."""
    first = next(iter(inspect.signature(fn).parameters.values()))
    return _titled(_hints(fn).get(first.name, Any), "LangGraphInput")


def output_jsonschema(fn: Callable[..., Any], final: type) -> dict[str, Any]:
    """The schema of the workflow's value: the return annotation, the value's type of an ``entrypoint.final``."""
    returned = _hints(fn).get("return", Any)
    if returned is final:
        returned = Any
    elif typing.get_origin(returned) is final:
        returned = typing.get_args(returned)[0]
    return _titled(returned, "LangGraphOutput")


def context_jsonschema(context_schema: Any) -> dict[str, Any] | None:
    """The schema of ``invoke(..., context=)``, when the entrypoint was given a ``context_schema``."""
    return None if context_schema is None else TypeAdapter(context_schema).json_schema()


def value_types(fn: Callable[..., Any]) -> ValueTypes:
    """The classes ``fn``'s annotations name (its parameters', its return's, through their fields): the models,
    dataclasses and enums its input, value or result is stored as and read back into (``statehitl.values``)."""
    return ValueTypes.of_annotations(_hints(fn).values())
