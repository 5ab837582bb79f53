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
    return _depth(_quotes_and_brackets(data))


def _depth(bare: bytes) -> int:
    """``nesting_of`` the JSON whose quotes and brackets, escapes gone, are ``bare``."""
    brackets = _brackets_outside_strings(bare)
    depth = 0
    while brackets:
        brackets = brackets.replace(b"[]", b"")
        depth += 1
    return depth


def _quotes_and_brackets(data: bytes) -> bytes:
    """The quotes and brackets of JSON ``data``, without escaped quotes (and escaped backslashes, which could
    be taken for escaping a quote after them): every quote left opens or closes a string."""
    return _without_quote_escapes(data).translate(None, _NOT_QUOTES_OR_BRACKETS)


_ESCAPES_LOOKED_AT = 64
"""Backslashes looked at one by one before the text is searched for the two escapes instead."""


def _without_quote_escapes(data: bytes) -> bytes:
    """``data`` without its escaped backslashes and escaped quotes. Every other escape (``\\n``, ``\\u00e9``)
    goes with the letters, so a record whose few backslashes escape neither (most) is kept as it is, found
    by looking at each (``find`` runs at ``memchr``'s speed) rather than searching all of it twice."""
    at = data.find(b"\\")
    for _ in range(_ESCAPES_LOOKED_AT):
        if at == -1:
            return data
        if data.startswith((b'"', b"\\"), at + 1):
            break
        at = data.find(b"\\", at + 2)
    return data.replace(b"\\\\", b"").replace(b'\\"', b"")


def _brackets_outside_strings(bare: bytes) -> bytes:
    """The brackets outside the strings, ``{}`` as ``[]``, of the quotes and brackets ``bare``.

    Quotes there alternate opening and closing a string. Most strings hold no bracket, and are then pairs
    of adjacent quotes: when every quote is in such a pair, every bracket is outside the strings.
    Otherwise every other piece between quotes is (a split at every quote, which took most of the check's
    time on a multi-agent record). Bytes methods only: a regular expression over the record took five
    times as long."""
    if bare.count(b'""') * 2 == bare.count(b'"'):
        return bare.translate(_BRACKETS, b'"')
    return b"".join(bare.split(b'"')[::2]).translate(_BRACKETS)


def check_nesting(data: bytes, what: str) -> None:
    """``NestingTooDeepError`` if JSON ``data`` (a whole record) nests deeper than a record may. Counting
    the opening brackets first, a record with fewer than the limit (most of them) is not looked at again."""
    bare = _quotes_and_brackets(data)
    if bare.count(b"[") + bare.count(b"{") <= _RECORD_NESTING:
        return
    depth = _depth(bare)
    if depth > _RECORD_NESTING:
        raise NestingTooDeepError(f"{what} nests {depth} levels of lists and objects deep: a value in it nests "
                                  f"deeper than the {MAX_NESTING} levels a stored value may, and the record could "
                                  "not be read back; nothing was stored")
