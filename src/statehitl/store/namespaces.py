"""Namespaces and keys: which ones a store takes, how a pattern matches them, and where each item lives in
a ``Storage`` (the four-method key/value contract every statehitl backend implements).

A namespace is a tuple of labels; LangGraph's rules for them hold here (a label is a non-empty str without
``.`` or NUL; a put's root label is not ``langgraph``). An item is stored under one storage key::

    store/n<label 1>/.../n<label k>/k<key>.

Each label becomes a segment of its own, so the items of one namespace share a storage "directory" (one
log file, one DynamoDB partition, one S3 prefix) and a search by namespace prefix is one listing. Labels
and keys are escaped into the characters every backend's keys allow: letters, digits, ``_`` and ``-``
stay, every other byte of their UTF-8 is ``=XX``. The ``n``/``k`` marks tell labels from keys, and the
final ``.``, which escaping never produces, ends a key, so no item's storage key is the start of
another's (deleting one item by its key, a prefix delete, deletes only it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from statehitl._echo import echo
from statehitl.errors import InvalidNamespaceError
from statehitl.store.ops import MatchCondition

ROOT = "store/"
"""Where every item lives in a storage, apart from a checkpointer's records (``threads/``, ``index/``...), so
one URL can hold both."""

_KEPT = re.compile(r"[A-Za-z0-9_-]")
_ESCAPED = re.compile(r"=([0-9A-F]{2})")
_SEGMENT_MAX = 200
"""Characters of one escaped label: a file store makes it a directory name (255 bytes at most)."""
_KEY_MAX = 900
"""Characters of a whole storage key: S3 keys and DynamoDB sort keys stop at 1,024 bytes, with room left
for a store URL's own prefix."""


def validate_labels(namespace: Sequence[object], what: str = "namespace") -> tuple[str, ...]:
    """The namespace as a tuple, each label checked (LangGraph's rules); ``InvalidNamespaceError`` names the
    label that breaks one."""
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise InvalidNamespaceError(f"a {what} is a tuple of str labels, got {echo(namespace)}; write "
                                    f"({echo(namespace)},) for a namespace of one label")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"{what} {tuple(namespace)!r} has a label {echo(label)} of type "
                                        f"{type(label).__name__}; labels are str")
        if not label:
            raise InvalidNamespaceError(f"{what} {tuple(namespace)!r} has an empty label")
        if "." in label or "\x00" in label:
            raise InvalidNamespaceError(f"{what} {tuple(namespace)!r} has a label {echo(label)} with a "
                                        f"{'period' if '.' in label else 'NUL byte'}, which labels cannot have")
    return tuple(namespace)  # type: ignore[arg-type]


def validate_namespace(namespace: Sequence[object], *, reserved: bool = False) -> tuple[str, ...]:
    """A namespace an item can be put under: non-empty, its labels valid, its root not ``langgraph`` (unless
    ``reserved``: a ``PutOp`` handed to ``batch`` directly may use it, as in LangGraph, where the library's own
    code keeps its items there)."""
    checked = validate_labels(namespace)
    if not checked:
        raise InvalidNamespaceError("the namespace of a put cannot be empty: give at least one label")
    if checked[0] == "langgraph" and not reserved:
        raise InvalidNamespaceError(f"namespace {checked!r}: the root label 'langgraph' is reserved")
    return checked


def _escape(text: str) -> str:
    return "".join(c if _KEPT.fullmatch(c) else "".join(f"={b:02X}" for b in c.encode()) for c in text)


def _unescape(text: str) -> str:
    raw = bytearray()
    at = 0
    for found in _ESCAPED.finditer(text):
        raw += text[at:found.start()].encode()
        raw.append(int(found[1], 16))
        at = found.end()
    raw += text[at:].encode()
    return raw.decode()


def _label_segment(label: str, namespace: tuple[str, ...]) -> str:
    segment = "n" + _escape(label)
    if len(segment) > _SEGMENT_MAX:
        raise InvalidNamespaceError(
            f"namespace {echo(namespace)} has a label {echo(label)} too long to store ({len(segment)} characters "
            f"escaped, at most {_SEGMENT_MAX}); use a shorter label, e.g. a hash of it")
    return segment


def namespace_prefix(namespace: tuple[str, ...]) -> str:
    """The storage prefix of every item whose namespace starts with ``namespace`` (``()``: every item)."""
    return ROOT + "".join(_label_segment(label, namespace) + "/" for label in namespace)


def item_key(namespace: tuple[str, ...], key: str) -> str:
    """The storage key of the item ``key`` in ``namespace``."""
    stored = f"{namespace_prefix(namespace)}k{_escape(key)}."
    if len(stored) > _KEY_MAX:
        raise InvalidNamespaceError(
            f"the item {echo(key)} in namespace {echo(namespace)} is too long to store ({len(stored)} characters "
            f"escaped, at most {_KEY_MAX}): shorten the key or the labels")
    return stored


def parse_item_key(stored: str) -> tuple[tuple[str, ...], str] | None:
    """The namespace and key a storage key holds, or None for a key that is not an item's."""
    if not stored.startswith(ROOT):
        return None
    *labels, last = stored[len(ROOT):].split("/")
    if not last.startswith("k") or not last.endswith(".") or not all(label.startswith("n") for label in labels):
        return None
    return tuple(_unescape(label[1:]) for label in labels), _unescape(last[1:-1])


def _fits(path: Sequence[str], labels: Sequence[str]) -> bool:
    return all(want == "*" or want == have for want, have in zip(path, labels, strict=False))


def matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with the condition's path."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        return _fits(path, namespace)
    if condition.match_type == "suffix":
        return _fits(path[::-1], namespace[::-1])
    raise ValueError(f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}")
