"""Bytes in messages (image and document blocks) through JSON checkpoints, and back.

Converse content carries raw ``bytes`` (``{"image": {"source": {"bytes": b"..."}}}``), which JSON
cannot hold. Checkpoints store each ``bytes`` value as ``{"$bytes": "<base64>"}`` and loading turns
it back, so a resumed agent sends the model exactly what the first one had.

User data may hold that very key (``agent.state.set("x", {"$bytes": "aGk="})``): it must come back
as it went in, not as bytes. So a key made of one or more ``$`` and then ``bytes`` gets one more ``$``
when stored and loses it when loaded; only a stored ``$bytes`` with a single ``$`` is a tag.
"""

from __future__ import annotations

import base64
import json
import marshal
import re
from collections.abc import Callable
from typing import Any

_TAG = "$bytes"
_TAG_UTF8 = _TAG.encode()
_TAG_LIKE = re.compile(r"\$+bytes")
"""Keys that are escaped: the tag itself, and the escapes of it (every one contains ``$bytes``)."""


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json_checker() -> Callable[[Any], str]:
    """The C encoder that ``json.dumps`` runs, made once (``_json`` is the accelerator ``json`` imports).

    ``JSONEncoder.encode`` makes a new one on every call, which costs as much as checking a small message
    does; an agent step checks several values per checkpoint. It returns the JSON text, which also
    shows at once whether the tag occurs anywhere in the value.
    """
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:  # an interpreter without CPython's accelerator
        return json.JSONEncoder(check_circular=False).encode
    encode = make_encoder(None, _refuse, encode_basestring, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


_encode_json = _json_checker()


_AS_IS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})


def to_json_safe(value: Any) -> Any:
    """``value`` with every ``bytes`` inside replaced by its tagged base64 form, and keys that look like
    the tag escaped.

    Most messages hold no bytes and no tag-like key: the C JSON encoder proves both (its text contains
    no ``$bytes``) far faster than a walk in Python, so the walk only runs when there is something to
    change. A scalar or an empty list or dict (an agent's ``stop_reason``, ``turn`` and fresh ``agent_state``
    in every checkpoint) has nothing to change: it is returned without encoding.
    """
    if type(value) in _AS_IS or (type(value) in _CONTAINERS and not value):
        return value
    try:
        text = _encode_json(value)
    except (TypeError, ValueError):
        return _tag_bytes(value)
    return _tag_bytes(value) if _TAG in text else value


def _holds_tag(value: Any) -> bool:
    """Whether ``$bytes`` occurs in any string of ``value`` (plain JSON here, so marshal writes it all)."""
    try:
        return _TAG_UTF8 in marshal.dumps(value)
    except ValueError:  # a type marshal cannot write: let the walk decide
        return True


def _tag_bytes(value: Any) -> Any:
    if isinstance(value, dict):
        return {(f"${k}" if isinstance(k, str) and _TAG_LIKE.fullmatch(k) else k): _tag_bytes(v)
                for k, v in value.items()}
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
    is anywhere in ``value`` and the walk is skipped. A scalar or an empty list or dict (a Graph's task, read
    for each node's input) holds none.
    """
    if type(value) in _AS_IS or (type(value) in _CONTAINERS and not value) or not _holds_tag(value):
        return value
    return _untag_bytes(value)


def _untag_bytes(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and _TAG in value and isinstance(value[_TAG], str):
            return base64.b64decode(value[_TAG])
        return {(k[1:] if isinstance(k, str) and k.startswith("$$") and _TAG_LIKE.fullmatch(k) else k):
                _untag_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untag_bytes(v) for v in value]
    return value
