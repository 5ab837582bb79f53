"""Records to bytes and back: JSON, optionally compressed, an optional HMAC signature, clear errors
for anything else.

Layered like Temporal's converter/codec: pydantic makes JSON, this module adds compression and
integrity. With a signing key, a record is its body followed by ``\\n#hmac-sha256:<hex>``; a reader
with the key refuses a record whose signature is missing or wrong, so a modified checkpoint is never
resumed (nor a compressed one inflated: the signature covers the bytes as stored). The signature
also covers the record's *place*, the storage key it is written under (which names its thread, its
slot, its interrupt): a signed record copied under another key (another thread's interrupt, another
slot of the chain) fails its check there, so a valid signature cannot be moved to approve something
else or to make a chain loop.

Compression (the checkpointer's ``compress``, on by default off ``MemoryStorage``) stores a record's
JSON as raw DEFLATE against a preset dictionary of the words every record repeats (``_DICTIONARY``): a
700-byte step of a conversation becomes about 290. Reading does not depend on the setting: a
compressed body starts with ``_COMPRESSED``, which no JSON does, so a store can hold both kinds and
every reader takes either. A statehitl from before compression reads only JSON, so a fleet that still
runs one writes with ``compress=False`` until it is upgraded.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import zlib
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, from_json, to_json

from statehitl._json import MAX_NESTING, check_nesting
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.errors import CheckpointCorruptError

__all__ = ["decode", "decode_model", "encode", "encode_counted"]

ModelT = TypeVar("ModelT", bound=BaseModel)
logger = logging.getLogger(__name__)

_SIG = b"\n#hmac-sha256:"
_SIGNATURE = re.compile(rb"[0-9a-f]{64}\s*")
"""What follows ``_SIG`` in a signed record (HMAC-SHA256 in hex): only that makes it a signature."""


def _mac(key: bytes, place: str, body: bytes) -> bytes:
    if not place:
        raise ValueError("a signed record needs its place (the storage key it is written under) to bind it to")
    mac = hmac.new(key, place.encode(), hashlib.sha256)
    mac.update(b"\n")  # a key never holds a newline, so place and body cannot be shifted into each other
    mac.update(body)
    return mac.hexdigest().encode()


_COMPRESSED = b"\x00z1"
"""How a compressed body starts: a zero byte (no JSON starts with one), then the format, version 1:
raw DEFLATE (no zlib header) with ``_DICTIONARY``. Never reused for another format or dictionary."""

_DICTIONARY = (
    b'{"kind":"checkpoint","schema_version":4,"seq":,"parent_seq":,"depth":,"base_seq":,"created_at":1'
    b'"machine":"","fingerprint":"","status":"interrupted","status":"failed","source":"update","error":{"node":"",'
    b'"type":"","message":"},"interrupts":[{"id":"","name":"","reason":,"node":"","source":"node"}],"completed":{'
    b'"responses":{},"progress":{},"answered":[{"interrupt_id":"","outcome":"approved","response":'
    b'"values":{"task":"","results":{"":{"result":{"type":"agent_result","stop_reason":"end_turn","message":'
    b'{"role":"assistant","content":[{"text":"}]},"metrics":{"cycle_count":1,"accumulated_usage":'
    b'{"inputTokens":0,"outputTokens":0,"totalTokens":0},"accumulated_metrics":{"latencyMs":0}},'
    b'"execution_time":0,"status":"completed","execution_count":1,"order":[""],"nodes":{"":{"agent_state":{},'
    b'{"toolUse":{"toolUseId":"tooluse_","name":"","input":{}}},{"toolResult":{"toolUseId":"tooluse_",'
    b'"status":"success","content":[{"text":"'
    b'{"role":"tool","tool_call_id":"call_","content":"'
    b'{"role":"assistant","content":"","tool_calls":[{"id":"call_","name":"","arguments":{"'
    b'"turn":null,"stop_reason":"end_turn","status":"executing","step":,"pending":[""],"writes":{"":'
    b'{"messages":{"$items":[,]}}},"owner":"","lease_until":1,"appends":{"messages":{"start":0,"items":['
    b'{"role":"user","content":[{"text":"'
)
"""Preset words for the compressor, the most frequent last (DEFLATE reaches the end of it most cheaply):
record fields, statuses, agent and orchestration values, messages. Part of format 1: never changed."""

_LEVEL = 1
"""zlib's fastest level: on records of a few hundred bytes it compresses within 6% of level 6, and a
step pays for it on every write."""

_WINDOW_BITS, _MEM_LEVEL = 12, 6
"""A 4 KB window (the dictionary's 1.3 KB fits in it) and a smaller match index than zlib's defaults: on
the records of a step (a few hundred bytes) the output is the defaults' within a byte or two, and on a
7.8 KB record within 1%, while each record's compressor costs about a third of a 16 KB one's to copy and
touch. Every reader inflates it: a window smaller than the reader's is the writer's choice in DEFLATE."""

_PRIMED: Any = None
"""A compressor that has taken in the dictionary and nothing else: each record's compressor is a copy
of it (``Compress.copy``), which costs less than priming a new one with the dictionary every time."""


def _deflate(body: bytes) -> bytes:
    global _PRIMED
    if _PRIMED is None:
        _PRIMED = zlib.compressobj(_LEVEL, zlib.DEFLATED, -_WINDOW_BITS, _MEM_LEVEL, zdict=_DICTIONARY)
    deflate = _PRIMED.copy()
    compressed: bytes = deflate.compress(body) + deflate.flush()
    return _COMPRESSED + compressed


def encode(record: BaseModel, signing_key: bytes | None, *, place: str = "", compress: bool = False) -> bytes:
    """The bytes to store for ``record`` under the key ``place``: ``model_dump_json``'s JSON, made as bytes
    (no ``str`` to encode), without what a stored checkpoint or claim leaves out (``stored_exclude``);
    compressed when asked (the signature then covers the compressed bytes, and the place)."""
    return encode_counted(record, signing_key, place=place, compress=compress)[0]


def encode_counted(record: BaseModel, signing_key: bytes | None, *, place: str = "", compress: bool = False
                   ) -> tuple[bytes, int]:
    """``encode``, and how many characters of ``record`` its bytes hold as U+FFFD (``_with_text_replaced``):
    a writer that keeps the record in memory must then read it back, to hold what the store holds.
    ``NestingTooDeepError`` for a record nested deeper than the reader takes back (``_json.check_nesting``)."""
    leave_out = getattr(record, "stored_exclude", None)
    exclude = leave_out() if leave_out is not None else None
    replaced = 0
    try:
        body = to_json(record, by_alias=False, exclude=exclude)
    except PydanticSerializationError as exc:
        if "surrogates not allowed" not in str(exc):
            raise
        body, replaced = _with_text_replaced(record, exclude)
    if body.count(b"[") + body.count(b"{") > MAX_NESTING:  # else it cannot nest that deep: no call at all
        check_nesting(body, f"the {type(record).__name__} record {place!r}" if place else f"a {type(record).__name__}")
    if compress:
        body = _deflate(body)
    return (body + _SIG + _mac(signing_key, place, body) if signing_key else body), replaced


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
    """Parse a stored record into a dict, checking signature and schema version; ``where`` names it,
    ``place`` is the key it was read from (which a signature must have been made for)."""
    body, sep, signature = data.rpartition(_SIG)
    if not sep or not _SIGNATURE.fullmatch(signature):  # unsigned (its bytes may hold the separator by chance)
        body, sep = data, b""
    if signing_key is not None:
        if not sep:
            raise CheckpointCorruptError(f"{where} is not signed, but a signing key is configured")
        if not hmac.compare_digest(signature.strip(), _mac(signing_key, place, body)):
            raise CheckpointCorruptError(f"{where} fails its signature check: it was modified, signed with "
                                         "another key, or copied here from another thread, slot or interrupt")
    if body.startswith(_COMPRESSED):
        body = _inflate(where, body)
    elif body.startswith(b"\x00"):  # a later format, as a later statehitl may write
        raise CheckpointCorruptError(
            f"{where} is stored in a format this statehitl does not know ({body[:3]!r}...): it was written by a "
            "newer statehitl; upgrade statehitl to read it"
        )
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


def _inflate(where: str, body: bytes) -> bytes:
    inflate = zlib.decompressobj(-zlib.MAX_WBITS, zdict=_DICTIONARY)
    try:
        data = inflate.decompress(body[len(_COMPRESSED):])
    except zlib.error as exc:
        raise CheckpointCorruptError(f"{where} is not valid compressed data (truncated or corrupt): {exc}") from None
    if not inflate.eof or inflate.unused_data:
        raise CheckpointCorruptError(f"{where} is not valid compressed data: truncated, or bytes after its end")
    return data


def decode_model(model: type[ModelT], where: str, data: bytes, signing_key: bytes | None, *, place: str = ""
                 ) -> ModelT:
    """``decode``, then validate as ``model``: a record that does not fit is ``CheckpointCorruptError``
    naming ``where`` and what does not fit."""
    raw = decode(where, data, signing_key, place=place)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise CheckpointCorruptError(f"{where} is malformed: {exc.errors(include_url=False)}") from None
