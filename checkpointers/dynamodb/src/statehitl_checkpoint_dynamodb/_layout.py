"""How storage keys, version tokens and large values map onto DynamoDB items (pure functions, no I/O).

A key ``a/b/c`` is the item ``pk="a/b", sk="c"``: everything up to the last ``/`` is the partition,
so the records of one thread (``threads/<t>/<slot>``) share a partition and finding its head is one
``Query`` in sort-key order. A key without ``/`` lives in the ``ROOT`` partition.

Listing by plain string prefix must also find keys in *deeper* partitions (``list("t/a")`` includes
``t/a/1`` and ``t/ab/1``), which DynamoDB cannot query by partition-key prefix. So every nested
partition ``p/c`` is announced in its parent by a *marker* item ``pk="p", sk="c/"``. Valid key segments
never contain ``/``, so a marker cannot collide with a record, and it sorts exactly where the keys it
stands for sort (``"c/"`` compares to any sibling segment as ``"c/anything"`` does): a ``Query`` of one
partition walks records and sub-partitions in the global key order. Top-level partitions have no
marker; listings with no ``/`` in the prefix (``""``, ``"thr"``) fall back to a ``Scan``.

Values too big for one item (400 KB) keep their first piece in the record and the rest in *chunk*
items in a partition of their own, ``"#" + pk``, which no listing ever queries. The version token of a
split value names its chunks: ``<write id>.<count>``; chunk ``i`` is ``sk#<write id>#<i>``. A writer
puts the chunks first and the record last, conditionally, so a reader that follows the record always
finds the chunks it names, and a replaced value's chunks can be deleted from its token alone.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Final

from statehitl.checkpoint.storage import validate_key

ROOT: Final = "/"
"""The partition of keys without ``/``. Not a valid key directory, so it cannot collide with one."""

INLINE_BYTES: Final = 390_000
"""Bytes of a value kept in the record itself; the item limit is 409,600 bytes including keys and
attribute names, and keys are at most 2,048 + 1,024 bytes, so this always fits."""

CHUNK_BYTES: Final = 390_000
"""Bytes per chunk item, for the same reason. A 5 MB value is the record plus 13 chunks."""


@dataclass(frozen=True)
class Entry:
    """One stored record found by a listing: its key, item key, version token, whether it expired, and
    (when the listing asked for values) the value the item holds inline."""

    key: str
    pk: str
    sk: str
    token: str
    expired: bool = False
    inline: bytes | None = None


def split_key(key: str) -> tuple[str, str]:
    """``(pk, sk)`` of a storage key, after refusing keys that could escape the store."""
    directory, sep, name = validate_key(key).rpartition("/")
    return (directory if sep else ROOT), name


def join(pk: str, sk: str) -> str:
    """The storage key (or, for a marker, the key prefix it stands for) of an item."""
    return sk if pk == ROOT else f"{pk}/{sk}"


def parent(pk: str) -> tuple[str, str] | None:
    """``(parent partition, name)`` of a nested partition; None for a top-level one or ``ROOT`` (no marker)."""
    if pk == ROOT:
        return None
    head, sep, name = pk.rpartition("/")
    return (head, name) if sep else None


def is_marker(sk: str) -> bool:
    """Markers are the only items whose sort key holds a ``/``."""
    return sk.endswith("/")


def marker_chain(pk: str) -> list[tuple[str, str]]:
    """The ``(pk, sk)`` of every marker that must exist for partition ``pk`` to be listable.

    Deepest first: ``a/b/c`` needs ``("a/b", "c/")`` and ``("a", "b/")``.
    """
    chain: list[tuple[str, str]] = []
    current = pk
    while (up := parent(current)) is not None:
        chain.append((up[0], up[1] + "/"))
        current = up[0]
    return chain


def chunk_partition(pk: str) -> str:
    """Where the chunks of partition ``pk``'s large values live; ``#`` never starts a key."""
    return "#" + pk


def new_token(chunks: int) -> str:
    """A fresh version token: random, so two writes never share one, and naming the chunk count."""
    write_id = uuid.uuid4().hex
    return write_id if chunks == 0 else f"{write_id}.{chunks}"


def token_chunks(token: str) -> tuple[str, int]:
    """``(write id, chunk count)`` of a token this backend issued (count 0: the value is inline)."""
    write_id, _, count = token.partition(".")
    return write_id, int(count) if count.isdigit() else 0


def chunk_keys(sk: str, token: str) -> list[str]:
    """Sort keys of the chunks a record with version ``token`` refers to, in order."""
    write_id, count = token_chunks(token)
    return [f"{sk}#{write_id}#{i:05d}" for i in range(count)]


def split_value(data: bytes) -> tuple[bytes, list[bytes]]:
    """The inline first piece and the chunks of a value."""
    head, rest = data[:INLINE_BYTES], data[INLINE_BYTES:]
    return head, [rest[i : i + CHUNK_BYTES] for i in range(0, len(rest), CHUNK_BYTES)]
