"""JSON checks for values that cross the durable boundary (interrupt reasons and responses, agent state).

They are checked where they enter, so a bad value fails at the ``interrupt()`` call or the resume call
that introduced it, not later inside a checkpoint write where the culprit is no longer visible.

One nesting limit holds for every value stored (``MAX_NESTING`` levels of lists and objects): the JSON
reader refuses records nested about 200 deep, and a value that could be written but not read back
would make its thread (or, for an index entry, every listing of the store) unreadable. So the limit is
checked where a value enters and again on every record's bytes as it is written (``check_nesting``),
well within what the reader takes with a record's own levels around the value.
"""

from __future__ import annotations

import math
from typing import Any

from statehitl.errors import NestingTooDeepError, NotJSONError

__all__ = ["MAX_NESTING", "check_nesting", "find_non_json", "nesting_of", "require_json", "too_deep"]

MAX_NESTING = 100
"""Levels of lists and objects a stored value may nest (a record adds a few of its own around it)."""

_RECORD_NESTING = MAX_NESTING + 12
"""What a record's bytes may nest: a value's levels and the record's own around it (checkpoint, writes,
node, channel, a tag), still far within the JSON reader's limit of about 200."""

_SCALARS = (str, int, bool, type(None))
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_QUOTES_OR_BRACKETS = bytes(b for b in range(256) if b not in b'[]{}"')


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


def too_deep(path: str) -> str:
    """What a value nested too deep is told, at ``path`` (shortened: it is a hundred levels long)."""
    shown = path if len(path) <= 60 else f"{path[:40]}...{path[-12:]}"
    return (f"at {shown} the value nests deeper than {MAX_NESTING} levels of lists and objects, the most a stored "
            "value may (the JSON reader stops near 200); nothing was stored")


def nesting_of(data: bytes) -> int:
    """How deep the lists and objects of JSON ``data`` nest (0 for a scalar): strings dropped, then the
    innermost pairs of brackets removed level by level, all at the speed of ``bytes`` methods."""
    brackets = _outside_strings(data).translate(_BRACKETS, _NOT_BRACKETS)
    depth = 0
    while brackets:
        brackets = brackets.replace(b"[]", b"")
        depth += 1
    return depth


def _outside_strings(data: bytes) -> bytes:
    """JSON ``data`` without its strings: escaped backslashes dropped, then escaped quotes, so every quote
    left opens or closes a string; then everything but quotes and brackets (any other escape with it), and
    every other piece between quotes is outside the strings. Bytes methods only: a regular expression over
    the record took five times as long."""
    bare = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_QUOTES_OR_BRACKETS)
    return b"".join(bare.split(b'"')[::2])


def check_nesting(data: bytes, what: str) -> None:
    """``NestingTooDeepError`` if JSON ``data`` (a whole record) nests deeper than a record may. Counting
    the opening brackets first, a record with fewer than the limit (most of them) is not looked at again."""
    if data.count(b"[") + data.count(b"{") <= _RECORD_NESTING:
        return
    depth = nesting_of(data)
    if depth > _RECORD_NESTING:
        raise NestingTooDeepError(f"{what} nests {depth} levels of lists and objects deep: a value in it nests "
                                  f"deeper than the {MAX_NESTING} levels a stored value may, and the record could "
                                  "not be read back; nothing was stored")


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
