"""A StateGraph's state schema as LangGraph's channel objects (``graph.channels``), for code that inspects them:
a field with a reducer is a ``BinaryOperatorAggregate`` of it, any other field a ``LastValue``.

A view only: the engine stores and merges the state through its own model (``state_channels``), not these.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin

from statehitl.channels.base import BaseChannel
from statehitl.channels.binop import BinaryOperatorAggregate
from statehitl.channels.last_value import LastValue
from statehitl.graph.state_channels import hints_of, is_field_schema, unrequire
from statehitl.managed import managed_value


def _channel(annotation: Any) -> BaseChannel:
    annotation = unrequire(annotation)
    if get_origin(annotation) is Annotated:
        base, *meta = get_args(annotation)
        if meta and callable(meta[-1]) and not isinstance(meta[-1], type):
            return BinaryOperatorAggregate(base, meta[-1])
        return LastValue(base)
    return LastValue(annotation)


def state_channel_views(schema: Any) -> dict[str, BaseChannel]:
    """The channels of ``schema`` (a TypedDict, dataclass or pydantic model; a root value is ``__root__``), by
    name, its managed keys left out."""
    if not is_field_schema(schema):
        return {"__root__": _channel(schema)}
    return {name: _channel(hint) for name, hint in hints_of(schema).items()
            if managed_value(unrequire(hint)) is None}
