"""LangGraph's ``JsonPlusSerializer`` on statehitl's tagged JSON (``statehitl.values``): ``dumps_typed`` and
``loads_typed`` for code that serializes values itself, as it calls LangGraph's.

What round-trips is what a checkpoint keeps: JSON, the standard types (datetime, UUID, Decimal, bytes, set,
tuple, paths, IP addresses...), ``Send`` (with its ``timeout``), and the models, dataclasses and enums
registered with ``statehitl.values.register``. The data is always JSON (type ``"json"``; ``bytes`` and
``None`` as LangGraph types them); it is never pickled, and reading it never constructs a class the data names
unless it is registered, so LangGraph's pickle fallback is refused and its msgpack allow-lists have nothing
to allow. Anything else is ``ValueNotStorableError`` where it is dumped.
"""

from __future__ import annotations

import json
from typing import Any

import statehitl.commands  # noqa: F401  (registers Send, so a Send round-trips)
from statehitl.errors import CheckpointCorruptError
from statehitl.values import decode_value, encode_value

__all__ = ["JsonPlusSerializer"]


class JsonPlusSerializer:
    """``dumps_typed(value) -> (type, bytes)`` and ``loads_typed((type, bytes)) -> value`` over tagged JSON.
    ``pickle_fallback=True`` is refused (statehitl never pickles); ``allowed_json_modules`` and
    ``allowed_msgpack_modules`` are taken and have no effect: only registered classes are ever rebuilt."""

    def __init__(self, *, pickle_fallback: bool = False, allowed_json_modules: Any = None,
                 allowed_msgpack_modules: Any = None, **unsupported: Any) -> None:
        if pickle_fallback:
            raise ValueError("JsonPlusSerializer(pickle_fallback=True): statehitl never pickles; register the "
                             "classes to keep with statehitl.values.register(...)")
        if unsupported:
            raise TypeError(f"JsonPlusSerializer() got unexpected keyword argument(s) {sorted(unsupported)}")
        self.allowed_json_modules = allowed_json_modules
        self.allowed_msgpack_modules = allowed_msgpack_modules

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """``obj`` as a type name and bytes: ``("null", b"")``, ``("bytes", obj)``, else ``("json", ...)``."""
        if obj is None:
            return "null", b""
        if isinstance(obj, bytes):
            return "bytes", obj
        data = encode_value(obj, "the value given to JsonPlusSerializer.dumps_typed")
        return "json", json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """The value ``dumps_typed`` was given, from what it returned."""
        kind, payload = data
        if kind == "null":
            return None
        if kind == "bytes":
            return payload
        if kind == "json":
            return decode_value(json.loads(payload))
        raise CheckpointCorruptError(f"JsonPlusSerializer.loads_typed: type {kind!r} is not one statehitl writes "
                                     "(it reads 'json', 'bytes' and 'null'; never pickle or msgpack)")

