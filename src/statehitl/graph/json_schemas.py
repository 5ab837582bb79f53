"""The JSON schemas a compiled StateGraph publishes (``get_input_jsonschema``, ``get_output_jsonschema``,
``get_context_jsonschema``), as LangGraph derives them: a pydantic model's own schema, a TypedDict's (also one
from ``typing`` on Python < 3.12, which pydantic refuses to read directly), and for a dataclass or a root value
a model titled after the graph (``<name>Input``/``<name>Output``)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import TYPE_CHECKING, Any, NotRequired, Required

from pydantic import BaseModel, PydanticUserError, TypeAdapter, create_model
from typing_extensions import is_typeddict

if TYPE_CHECKING:
    from statehitl.graph.state_kinds import StateKind


def state_json_schema(schema: Any, kind: StateKind, title: str) -> dict[str, Any]:
    """The JSON schema of ``schema`` (the state's, or an input or output schema of it)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if is_typeddict(schema):
        return _typeddict_schema(schema)
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        return _dataclass_schema(schema, title)
    found: dict[str, Any] = TypeAdapter(_plain(kind.model.model_fields["root"].annotation)).json_schema()
    return {"default": None, **found, "title": title}


def context_json_schema(schema: Any) -> dict[str, Any] | None:
    """The JSON schema of a ``context_schema`` (a pydantic model, a TypedDict or a dataclass), None for none."""
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if is_typeddict(schema):
        return _typeddict_schema(schema)
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        found: dict[str, Any] = TypeAdapter(schema).json_schema()
        return found
    raise ValueError(f"Invalid context schema type: {schema!r}. Must be a BaseModel, TypedDict or dataclass.")


def _typeddict_schema(schema: Any) -> dict[str, Any]:
    try:
        found: dict[str, Any] = TypeAdapter(schema).json_schema()
        return found
    except PydanticUserError:  # typing.TypedDict on Python < 3.12: the same schema from its fields
        required = set(getattr(schema, "__required_keys__", ()))
        hints = typing.get_type_hints(schema, include_extras=True)
        fields: dict[str, Any] = {name: (_plain(hint), ... if _required(hint, name in required) else None)
                                  for name, hint in hints.items()}
        found = create_model(schema.__name__, **fields).model_json_schema()
        for name, hint in hints.items():
            if not _required(hint, name in required):
                found["properties"][name].pop("default", None)
        return found


def _dataclass_schema(schema: Any, title: str) -> dict[str, Any]:
    hints = typing.get_type_hints(schema, include_extras=True)
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(schema):
        if item.default is not dataclasses.MISSING:
            default = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:  # no default: optional all the same when its type is a union with None (LangGraph's)
            default = None if _admits_none(_plain(hints.get(item.name, Any))) else ...
        fields[item.name] = (_plain(hints.get(item.name, Any)), default)
    found: dict[str, Any] = create_model(title, **fields).model_json_schema()
    return found


def _required(hint: Any, by_totality: bool) -> bool:
    """Whether a TypedDict key is required: ``Required``/``NotRequired`` (also inside ``Annotated``) decide,
    else the class's totality."""
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint)
    if origin in (Required, typing.Required):
        return True
    if origin in (NotRequired, typing.NotRequired):
        return False
    return by_totality


def _admits_none(hint: Any) -> bool:
    """Whether ``hint`` is a union with None (``X | None``, ``Optional[X]``); ``Any`` and ``None`` alone are not,
    as LangGraph reads them."""
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint)


def _plain(hint: Any) -> Any:
    """A field's type without its reducer (``Annotated`` extras) or ``Required``/``NotRequired`` wrapper."""
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated or origin in (Required, NotRequired, typing.Required, typing.NotRequired):
            hint = typing.get_args(hint)[0]
        else:
            return hint
