"""Bytes in messages (image and document blocks) through JSON checkpoints, and back.

Converse content carries raw ``bytes`` (``{"image": {"source": {"bytes": b"..."}}}``), which JSON
cannot hold. Checkpoints store each ``bytes`` value as ``{"$bytes": "<base64>"}`` and loading turns
it back, so a resumed agent sends the model exactly what the first one had.
"""

from __future__ import annotations

import base64
import json
import marshal
from collections.abc import Callable
from typing import Any

__all__ = ["from_json_safe", "to_json_safe"]

_TAG = "$bytes"
_TAG_UTF8 = _TAG.encode()


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json_checker() -> Callable[[Any], object]:
    """The C encoder that ``json.dumps`` runs, made once (``_json`` is the accelerator ``json`` imports).

    ``JSONEncoder.encode`` makes a new one on every call, which costs as much as checking a small message
    does; an agent step checks several values per checkpoint.
    """
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:  # an interpreter without CPython's accelerator
        return json.JSONEncoder(check_circular=False).encode
    encode = make_encoder(None, _refuse, encode_basestring, None, ":", ",", False, False, True)
    return lambda value: encode(value, 0)


_encode_json = _json_checker()


def to_json_safe(value: Any) -> Any:
    """``value`` with every ``bytes`` inside replaced by its tagged base64 form.

    Most messages hold no bytes at all: the C JSON encoder proves that about ten times faster than a
    walk in Python, so the walk only runs when the encoder meets something it cannot write.
    """
    try:
        _encode_json(value)
    except (TypeError, ValueError):
        return _tag_bytes(value)
    return value


def _tag_bytes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tag_bytes(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_tag_bytes(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return {_TAG: base64.b64encode(value).decode("ascii")}
    return value


def from_json_safe(value: Any) -> Any:
    """The inverse of ``to_json_safe``.

    Restoring an agent loads its whole history, which rarely holds bytes. ``marshal`` goes through it
    in C, several times faster than the walk in Python on a typical history, and writes every string
    (once; later copies are references) as its UTF-8 bytes: if ``$bytes`` is not in its output, no tag
    is anywhere in ``value`` and the walk is skipped.
    """
    try:
        if _TAG_UTF8 not in marshal.dumps(value):
            return value
    except ValueError:
        pass  # a type marshal cannot write (never one from a stored checkpoint): the walk handles it
    return _untag_bytes(value)


def _untag_bytes(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and _TAG in value and isinstance(value[_TAG], str):
            return base64.b64decode(value[_TAG])
        return {k: _untag_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untag_bytes(v) for v in value]
    return value
