"""A step's writes, stored by reference to what the record holds anyway.

A checkpoint keeps what the step that produced it applied (``writes``, for history and debugging), the
items its append-only channels gained (``appends``) and the value of every other channel
(``values``). Most writes repeat one of those: a conversation step would store its new message twice,
an agent's model step its answer twice (as the pending turn and as the model's write). So:

- a write to an append-only channel whose items are exactly the last items of the record's piece is
  stored as ``{"$items": [start, end]}``, the positions those items hold in the channel;
- a write to any other channel that is the value the record stores for it (the channel was replaced,
  or merged into nothing) is left out, and its node and channel are listed in ``value_writes``, when
  the value is big enough to be worth it (a list, an object, a longer string).

Both are read back when the record is decoded. Anything else (a reducer that changed what it was
given) is stored as it is.

Pure functions over JSON, testable without storage.
"""

from __future__ import annotations

from typing import Any

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


def split_value_writes(writes: dict[str, dict[str, Any]], values: dict[str, Any]
                       ) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    """``writes`` without each write that is the value ``values`` holds for its channel, and those
    writes' channels by node; the same dict and no channels when there is nothing to leave out."""
    same: dict[str, list[str]] = {}
    for node, update in writes.items():
        channels = [c for c, value in update.items()
                    if _sizeable(value) and c in values and values[c] == value and _same(values[c], value)]
        if channels:
            same[node] = channels
    if not same:
        return writes, same
    kept = {node: {c: v for c, v in update.items() if c not in same.get(node, ())} for node, update in writes.items()}
    return kept, same


def _sizeable(value: Any) -> bool:
    """Worth naming rather than repeating: a list, an object or a longer string (naming a ``null`` or a
    number costs more bytes than it saves)."""
    if isinstance(value, dict | list):
        return bool(value)
    return isinstance(value, str) and len(value) > _SHORT


_SHORT = 32
"""Strings up to this many characters are repeated rather than named."""


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (``==`` already said so): also of the same types throughout, since ``1 == 1.0 == True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return True


def resolve_writes(writes: dict[str, dict[str, Any]], whole: dict[str, Any],
                   value_writes: dict[str, list[str]] | None = None) -> dict[str, dict[str, Any]]:
    """``writes`` with every reference replaced by the items it names in the ``whole`` channels, and the
    writes ``value_writes`` lists put back from them."""
    resolved: dict[str, dict[str, Any]] | None = None
    for node, update in writes.items():
        for channel, value in update.items():
            if isinstance(value, dict) and ITEMS_REF in value and channel in whole:
                start, end = value[ITEMS_REF]
                resolved = resolved if resolved is not None else {n: dict(u) for n, u in writes.items()}
                resolved[node][channel] = whole[channel][start:end]
    if value_writes:
        resolved = resolved if resolved is not None else {n: dict(u) for n, u in writes.items()}
        for node, channels in value_writes.items():
            resolved.setdefault(node, {}).update({c: whole[c] for c in channels if c in whole})
    return writes if resolved is None else resolved
