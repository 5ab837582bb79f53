"""Strands' storage keys, and how they are kept in statehitl's stores (pure functions, no I/O).

A key given to a ``statehitl.storage`` store is normalised as Strands normalises it: runs of ``/``
collapse, a leading or trailing ``/`` goes, and an empty key, a backslash or a ``..`` segment is
refused (``StorageKeyError``), so a key never names a place outside its store. A listing prefix is
normalised alike, keeping a trailing ``/`` (it matters to which keys match) and allowing ``""``.

Any other text is a valid key, but the compare-and-set stores under ``statehitl.storage`` take keys of
``/``-separated segments of ``[A-Za-z0-9_.:@=+-]`` that start with a letter, digit or ``_``. So each key
is written there under a *record key*: its characters escaped one by one, ``=`` and the bytes of its
UTF-8 in hex (``"a b"`` is ``a=20b``; a segment that starts with anything but a letter or digit has
a leading ``_``: ``.env`` is ``_=2Eenv``), with ``@`` after the last one, under the root ``_blobs/``.

Why this shape:

- Escaping is character by character, so the record key of a prefix is a prefix of the record key of
  every key that starts with it: a listing is one listing of the store, not a scan.
- ``@`` is always escaped inside a key, so ``a/b@`` starts no record key but its own: deleting one key
  is deleting the one record whose key starts with it (the store deletes by prefix).
- Every record key starts with ``_blobs/``, and no checkpoint key does (a namespace path is escaped the
  same way, and an escaped segment starts with a letter, a digit or ``_=``), so the values a store
  holds and the checkpoints of a ``SnapshotSessionManager`` on the same store never meet.
"""

from __future__ import annotations

import re
import string
from typing import Final

from statehitl.errors import StorageKeyError

RECORD_ROOT: Final = "_blobs/"
"""Where a store's values live among its records."""

_END: Final = "@"
_LITERAL = frozenset(string.ascii_letters + string.digits + "_.:+-")
"""Kept as they are inside a segment (``=`` escapes, ``@`` ends a key: both are always escaped)."""
_FIRST = frozenset(string.ascii_letters + string.digits)
"""Kept as they are at the start of a segment."""
_SLASHES = re.compile(r"/+")
_ESCAPE = re.compile(r"=([0-9A-F]{2})")


def _quote(text: str) -> str:
    return f"'{text}'"


def normalize_key(key: str) -> str:
    """``key`` as Strands' path-based stores keep it: slash runs collapsed, stripped of ``/`` at both ends.

    ``StorageKeyError`` for a key that is not a str, is empty once normalised, holds a backslash, has a
    ``..`` segment, or cannot be written as UTF-8 (a lone surrogate).
    """
    if not isinstance(key, str):
        raise StorageKeyError(f"storage keys are str, got {type(key).__name__} {key!r}")
    if "\\" in key:
        raise StorageKeyError(f"Invalid storage key {_quote(key)}: backslashes are not allowed")
    normalized = _SLASHES.sub("/", key).strip("/")
    if not normalized:
        raise StorageKeyError("Storage key must not be empty")
    if ".." in normalized.split("/"):
        raise StorageKeyError(f"Invalid storage key {_quote(key)}: '..' path segments are not allowed")
    _require_utf8(key, "key")
    return normalized


def normalize_prefix(prefix: str) -> str:
    """A listing prefix as Strands normalises it: slash runs collapsed, no leading ``/``; a trailing ``/``
    stays (``"a/"`` lists ``a/x`` but not ``ab``) and ``""`` lists every key. Refused like a key for a
    backslash or a ``..`` segment."""
    if not isinstance(prefix, str):
        raise StorageKeyError(f"storage prefixes are str, got {type(prefix).__name__} {prefix!r}")
    if "\\" in prefix:
        raise StorageKeyError(f"Invalid storage prefix {_quote(prefix)}: backslashes are not allowed")
    normalized = _SLASHES.sub("/", prefix).lstrip("/")
    if ".." in normalized.split("/"):
        raise StorageKeyError(f"Invalid storage prefix {_quote(prefix)}: '..' path segments are not allowed")
    _require_utf8(prefix, "prefix")
    return normalized


def _require_utf8(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise StorageKeyError(f"Invalid storage {what} {text!r}: it cannot be written as UTF-8") from None


def _escaped(char: str) -> str:
    return "".join(f"={byte:02X}" for byte in char.encode("utf-8"))


def encode_path(text: str) -> str:
    """``text`` (a normalised key or prefix, or a namespace path) as safe record-key segments."""
    out: list[str] = []
    starting = True
    for char in text:
        if char == "/":
            out.append("/")
            starting = True
            continue
        if starting:
            out.append(char if char in _FIRST else "_" + _escaped(char))
        else:
            out.append(char if char in _LITERAL else _escaped(char))
        starting = False
    return "".join(out)


def decode_path(text: str) -> str | None:
    """The text ``encode_path`` made ``text`` from, or None for text it cannot have made."""
    segments = [_decoded_segment(segment) for segment in text.split("/")]
    if any(segment is None for segment in segments):
        return None
    decoded = "/".join(segment for segment in segments if segment is not None)
    return decoded if encode_path(decoded) == text else None  # only the one spelling encode_path writes


def _decoded_segment(segment: str) -> str | None:
    if segment.startswith("_"):
        segment = segment[1:]
    raw = bytearray()
    at = 0
    while at < len(segment):
        char = segment[at]
        if char == "=":
            byte = _ESCAPE.match(segment, at)
            if byte is None:
                return None
            raw.append(int(byte.group(1), 16))
            at = byte.end()
        elif char in _LITERAL:
            raw.append(ord(char))
            at += 1
        else:
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def record_key(path: str, key: str) -> str:
    """The record key of normalised ``key`` in a view at namespace ``path`` (``""`` or ending in ``/``)."""
    return f"{RECORD_ROOT}{encode_path(path + key)}{_END}"


def record_prefix(path: str, prefix: str) -> str:
    """The record-key prefix that lists normalised ``prefix`` in a view at namespace ``path``."""
    return RECORD_ROOT + encode_path(path + prefix)


def stored_key(path: str, record: str) -> str | None:
    """The key a view at ``path`` knows the record ``record`` by; None for a record that is not one of its
    values (nothing else is written under the root, so only a damaged or foreign record)."""
    if not record.startswith(RECORD_ROOT) or not record.endswith(_END):
        return None
    key = decode_path(record[len(RECORD_ROOT):-len(_END)])
    if key is None or not key.startswith(path):
        return None
    return key[len(path):]
