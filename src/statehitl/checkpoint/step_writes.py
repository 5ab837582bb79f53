"""A step's writes to append-only channels, stored by reference to the record's own piece.

A checkpoint keeps what the step that produced it applied (``writes``, for history and debugging) and
the items its append-only channels gained (``appends``). For a channel whose reducer appends, those
are the same items: a conversation step would store its new message twice. So a write whose items
are exactly the last items of the record's piece is stored as ``{"$items": [start, end]}``, the
positions those items hold in the channel, and read back from the channel when the record is
decoded. Anything else (a write the reducer did not append as it came) is stored as it is.

Pure functions over JSON, testable without storage.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ITEMS_REF", "reference_writes", "resolve_writes"]

ITEMS_REF = "$items"
"""The key of a reference: ``{"$items": [start, end]}`` stands for items ``start:end`` of the channel.
An append-only channel's write is always a list, so a dict there can only be a reference."""


def reference_writes(writes: dict[str, dict[str, Any]], appends: dict[str, dict[str, Any]]
                     ) -> dict[str, dict[str, Any]]:
    """``writes`` with every append-only write that ``appends`` (channel -> piece) holds replaced by a
    reference; the same dict when there is nothing to replace."""
    lean: dict[str, dict[str, Any]] | None = None
    for channel, piece in appends.items():
        written = [(node, update[channel]) for node, update in writes.items() if channel in update]
        if not written or not all(isinstance(items, list) for _, items in written):
            continue
        total = sum(len(items) for _, items in written)
        tail: list[Any] = piece["items"][len(piece["items"]) - total:] if total else []
        if total > len(piece["items"]) or [item for _, items in written for item in items] != tail:
            continue
        lean = lean if lean is not None else {node: dict(update) for node, update in writes.items()}
        at = piece["start"] + len(piece["items"]) - total
        for node, items in written:
            lean[node][channel] = {ITEMS_REF: [at, at + len(items)]}
            at += len(items)
    return writes if lean is None else lean


def resolve_writes(writes: dict[str, dict[str, Any]], whole: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """``writes`` with every reference replaced by the items it names in the ``whole`` channels."""
    resolved: dict[str, dict[str, Any]] | None = None
    for node, update in writes.items():
        for channel, value in update.items():
            if isinstance(value, dict) and ITEMS_REF in value and channel in whole:
                start, end = value[ITEMS_REF]
                resolved = resolved if resolved is not None else {n: dict(u) for n, u in writes.items()}
                resolved[node][channel] = whole[channel][start:end]
    return writes if resolved is None else resolved
