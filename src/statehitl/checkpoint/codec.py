"""Records to bytes and back: the converter (a pydantic record to JSON), then the payload codecs.

Layered like Temporal's converter and codecs: pydantic makes JSON here, and a chain of byte-to-byte
layers (``payload_codecs.py``: compression, then the HMAC signature bound to the record's place) turns
it into what the store holds, undone in reverse on the way out. The chain a writer uses is its
checkpointer's (``compress``, ``signing_key``); a reader undoes any layer it meets, so a store can hold
compressed and plain, signed and unsigned records together. Errors name the record and what is wrong:
a bad signature, corrupt compressed data, JSON that is not a record, a schema version this statehitl
does not know.

A statehitl from before compression reads only JSON, so a fleet that still runs one writes with
``compress=False`` until it is upgraded.
"""

from __future__ import annotations

import logging
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, from_json, to_json

from statehitl.checkpoint.payload_codecs import reading_chain, writing_chain
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.errors import CheckpointCorruptError
from statehitl.json_depth import MAX_NESTING, check_nesting

ModelT = TypeVar("ModelT", bound=BaseModel)
logger = logging.getLogger(__name__)


def encode(record: BaseModel, signing_key: bytes | None, *, place: str = "", compress: bool = False) -> bytes:
    """The bytes to store for ``record`` under the key ``place``: ``model_dump_json``'s JSON, made as bytes
    (no ``str`` to encode), without what a stored checkpoint or claim leaves out (``stored_exclude``),
    through the writing chain: compressed when asked, then signed with a key (the signature covers the
    bytes as stored, and the place)."""
    return encode_counted(record, signing_key, place=place, compress=compress)[0]


def encode_counted(record: BaseModel, signing_key: bytes | None, *, place: str = "", compress: bool = False
                   ) -> tuple[bytes, int]:
    """``encode``, and how many characters of ``record`` its bytes hold as U+FFFD (``_with_text_replaced``):
    a writer that keeps the record in memory must then read it back, to hold what the store holds.
    ``NestingTooDeepError`` for a record nested deeper than the reader takes back (``json_depth.check_nesting``)."""
    leave_out = getattr(record, "stored_exclude", None)
    exclude = leave_out() if leave_out is not None else None
    replaced = 0
    try:
        body = to_json(record, by_alias=False, exclude=exclude)
    except PydanticSerializationError as exc:
        if "surrogates not allowed" not in str(exc):
            raise
        body, replaced = _with_text_replaced(record, exclude)
    # A short record with few brackets cannot nest that deep: no call at all. A longer one is counted by the
    # check itself, on its quotes and brackets, which it goes on with: counting here too cost as much again.
    if len(body) > _COUNTED_HERE or body.count(b"[") + body.count(b"{") > MAX_NESTING:
        check_nesting(body, f"the {type(record).__name__} record {place!r}" if place else f"a {type(record).__name__}")
    if compress or signing_key:
        body = writing_chain(signing_key or None, compress).encode(body, place)
    return body, replaced


_COUNTED_HERE = 2048
"""Records up to this many bytes have their brackets counted before ``check_nesting`` is called."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _with_text_replaced(record: BaseModel, exclude: Any) -> tuple[bytes, int]:
    """``record``'s JSON with every lone surrogate replaced by U+FFFD, and the count in ``replaced_text``.

    Python strings may hold them (``os.listdir`` and ``os.environ`` decode a name that is not UTF-8 into
    surrogates), UTF-8 cannot: such a record could not be stored at all, and a tool whose result held
    one would run again on every new answer. Refusing it before the action is impossible (the result
    comes after), so it is stored as the closest text there is, and says how many characters differ.
    """
    replaced = 0

    def clean(value: Any) -> Any:
        nonlocal replaced
        if isinstance(value, str):
            text, count = _LONE_SURROGATE.subn("\ufffd", value)
            replaced += count
            return text
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    data = clean(record.model_dump(mode="python", by_alias=False, exclude=exclude))
    if "replaced_text" in type(record).model_fields:
        data["replaced_text"] = replaced
    logger.warning("%s held %d characters UTF-8 cannot store (lone surrogates, as from a file name that is not "
                   "UTF-8); they are stored as U+FFFD", type(record).__name__, replaced)
    return to_json(data), replaced


def decode(where: str, data: bytes, signing_key: bytes | None, *, place: str = "") -> dict[str, Any]:
    """Parse a stored record into a dict, through the reading chain (signature checked with a key, inflated
    if compressed), checking its schema version; ``where`` names it, ``place`` is the key it was read from
    (which a signature must have been made for)."""
    body = reading_chain(signing_key).decode(data, place, where)
    try:
        raw = from_json(body)  # pydantic's parser: 15-30% faster than json.loads on our records
    except ValueError as exc:
        raise CheckpointCorruptError(f"{where} is not valid JSON (truncated or corrupt): {exc}") from None
    if not isinstance(raw, dict):
        raise CheckpointCorruptError(f"{where} is not a JSON object")
    version = raw.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise CheckpointCorruptError(
            f"{where} has schema version {version}, newer than this statehitl understands "
            f"({SCHEMA_VERSION}); upgrade statehitl to read it"
        )
    return raw


def decode_model(model: type[ModelT], where: str, data: bytes, signing_key: bytes | None, *, place: str = ""
                 ) -> ModelT:
    """``decode``, then validate as ``model``: a record that does not fit is ``CheckpointCorruptError``
    naming ``where`` and what does not fit."""
    raw = decode(where, data, signing_key, place=place)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise CheckpointCorruptError(f"{where} is malformed: {exc.errors(include_url=False)}") from None
