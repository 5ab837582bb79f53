"""Bytes in messages (image and document blocks) through JSON checkpoints, and back.

Converse content carries raw ``bytes`` (``{"image": {"source": {"bytes": b"..."}}}``), which JSON
cannot hold. Checkpoints store each ``bytes`` value as ``{"$bytes": "<base64>"}`` and loading turns
it back, so a resumed agent sends the model exactly what the first one had.
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["from_json_safe", "to_json_safe"]

_TAG = "$bytes"


def to_json_safe(value: Any) -> Any:
    """``value`` with every ``bytes`` inside replaced by its tagged base64 form."""
    if isinstance(value, dict):
        return {k: to_json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_safe(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return {_TAG: base64.b64encode(value).decode("ascii")}
    return value


def from_json_safe(value: Any) -> Any:
    """The inverse of ``to_json_safe``."""
    if isinstance(value, dict):
        if len(value) == 1 and _TAG in value and isinstance(value[_TAG], str):
            return base64.b64decode(value[_TAG])
        return {k: from_json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json_safe(v) for v in value]
    return value
