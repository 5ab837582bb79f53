"""JSON checks for values that cross the durable boundary (interrupt reasons and responses, agent state).

They are checked where they enter, so a bad value fails at the ``interrupt()`` call or the resume call
that introduced it, not later inside a checkpoint write where the culprit is no longer visible.

A value is also held to the one nesting limit (``json_depth.MAX_NESTING``) where it enters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pydantic_core import PydanticSerializationError

from statehitl.channels import writer_label
from statehitl.errors import NestingTooDeepError, NotJSONError
from statehitl.json_depth import MAX_NESTING, too_deep

_SCALARS = (str, int, bool, type(None))


def find_non_json(value: Any, path: str = "$", depth: int = 0) -> tuple[str, Any] | None:
    """Return ``(path, value)`` of the first part of ``value`` that is not plain JSON, or None.
    A value nested deeper than ``MAX_NESTING`` raises ``NestingTooDeepError`` naming where."""
    if isinstance(value, _SCALARS):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    if not isinstance(value, list | tuple | dict):
        return (path, value)
    if depth >= MAX_NESTING:
        raise NestingTooDeepError(too_deep(path))
    return _find_inside(value, path, depth)


def _find_inside(value: list[Any] | tuple[Any, ...] | dict[Any, Any], path: str, depth: int
                 ) -> tuple[str, Any] | None:
    """``find_non_json`` of each item of a list, or of each key and value of a dict."""
    if not isinstance(value, dict):
        for index, item in enumerate(value):
            found = find_non_json(item, f"{path}[{index}]", depth + 1)
            if found:
                return found
        return None
    for key, item in value.items():
        if not isinstance(key, str):
            return (f"{path} key {key!r}", key)
        found = find_non_json(item, f"{path}.{key}", depth + 1)
        if found:
            return found
    return None


def require_json(value: Any, what: str, error: type[NotJSONError] = NotJSONError) -> None:
    """Raise ``error`` naming what was checked (``what``) and the offending part if ``value`` is not JSON.

    Interrupt reasons raise ``InterruptReasonError``, answers' responses ``InterruptResponseError``; other
    stored values (agent state) the plain ``NotJSONError``, so a handler for interrupt misuse does not
    catch a bad state value.
    """
    try:
        found = find_non_json(value)
    except NestingTooDeepError as exc:
        raise NestingTooDeepError(f"{what}: {exc}") from None
    if found is not None:
        where, bad = found
        detail = "" if where == "$" else f" at {where}"
        raise error(
            f"{what} must be JSON-serializable, but{detail} it holds {bad!r} of type {type(bad).__name__}; "
            "use str, int, float, bool, None, lists and dicts with str keys"
        )


def dump_written(dump: Callable[[dict[str, Any]], dict[str, Any]], writer: str,
                 update: dict[str, Any]) -> dict[str, Any]:
    """``dump(update)``, with a value JSON cannot hold reported by who wrote it (``writer``: a node's name, or
    ``channels.INPUT`` for the caller's input) and the channel it went to, before anything is stored. LangGraph
    keeps such a value (a Runnable, an open client) in memory; a statehitl checkpoint is JSON, so the write is
    refused where its culprit is visible. The channel is looked for only once the dump has failed: a step that
    writes JSON pays nothing for it."""
    try:
        return dump(update)
    except PydanticSerializationError:
        for channel, value in update.items():
            try:
                dump({channel: value})
            except PydanticSerializationError:
                raise NotJSONError(
                    f"{writer_label(writer)} wrote {value!r} of type {type(value).__name__} to channel {channel!r}, "
                    "which a checkpoint cannot store: a checkpoint is JSON and never runs code when read; keep "
                    "such objects out of the state (in the node's closure, the config or the runtime context)"
                ) from None
        raise
