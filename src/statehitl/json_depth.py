"""How deep JSON may nest: the one limit for every value stored, and its check on a record's bytes.

One nesting limit holds for every value stored (``MAX_NESTING`` levels of lists and objects): the JSON
reader refuses records nested about 200 deep, and a value that could be written but not read back
would make its thread (or, for an index entry, every listing of the store) unreadable. So the limit is
checked where a value enters (``_json.find_non_json``, ``values.encode_value``) and again on every
record's bytes as it is written (``check_nesting``, which the codec runs before its layers), well within
what the reader takes with a record's own levels around the value.

A module of its own, with no import of statehitl's but its errors: the value checks (``_json``,
``values``) and the codec all use it, and ``_json`` also reports writers through ``channels``, which
stores tagged values through ``values``.
"""

from __future__ import annotations

from statehitl.errors import NestingTooDeepError

MAX_NESTING = 100
"""Levels of lists and objects a stored value may nest (a record adds a few of its own around it)."""

_RECORD_NESTING = MAX_NESTING + 12
"""What a record's bytes may nest: a value's levels and the record's own around it (checkpoint, writes,
node, channel, a tag), still far within the JSON reader's limit of about 200."""

_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_QUOTES_OR_BRACKETS = bytes(b for b in range(256) if b not in b'[]{}"')


def too_deep(path: str) -> str:
    """What a value nested too deep is told, at ``path`` (shortened: it is a hundred levels long)."""
    shown = path if len(path) <= 60 else f"{path[:40]}...{path[-12:]}"
    return (f"at {shown} the value nests deeper than {MAX_NESTING} levels of lists and objects, the most a stored "
            "value may (the JSON reader stops near 200); nothing was stored")


def nesting_of(data: bytes) -> int:
    """How deep the lists and objects of JSON ``data`` nest (0 for a scalar): strings dropped, then the
    innermost pairs of brackets removed level by level, all at the speed of ``bytes`` methods."""
    brackets = _brackets_outside_strings(data)
    depth = 0
    while brackets:
        brackets = brackets.replace(b"[]", b"")
        depth += 1
    return depth


def _brackets_outside_strings(data: bytes) -> bytes:
    """The brackets of JSON ``data`` outside its strings, ``{}`` as ``[]``.

    Escaped backslashes dropped, then escaped quotes, every quote left opens or closes a string; then
    everything but quotes and brackets (any other escape with it). Most strings hold no bracket, and are
    then pairs of adjacent quotes: when removing those pairs leaves no quote, every bracket is outside
    the strings. Otherwise every other piece between quotes is (a split at every quote, which took most
    of the check's time on a multi-agent record). Bytes methods only: a regular expression over the
    record took five times as long."""
    bare = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_QUOTES_OR_BRACKETS)
    if b'"' not in bare.replace(b'""', b""):
        return bare.translate(_BRACKETS, b'"')
    return b"".join(bare.split(b'"')[::2]).translate(_BRACKETS)


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
