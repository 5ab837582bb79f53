"""A record's JSON to the bytes a store holds and back, as a chain of layers: Temporal's payload codecs.

``codec.py`` is the converter (a pydantic record to JSON and back); the bytes it makes pass through the
layers of a ``CodecChain`` on the way to the store, each one turning bytes into bytes, and back through
them in reverse order on the way out:

- ``Compression``: raw DEFLATE against a preset dictionary of the words every record repeats
  (``_DICTIONARY``), behind a marker no JSON starts with (``_COMPRESSED``): a 700-byte step of a
  conversation becomes about 290. A body without the marker passes through, so a store can hold
  both kinds and every reader takes either.
- ``Signature``: an HMAC-SHA256 over the record's *place* (the storage key it is written under) and
  its bytes as stored, appended as ``\\n#hmac-sha256:<hex>``. A reader with the key refuses a record
  whose signature is missing or wrong (a modified record, or a signed one copied under another key);
  a reader without it takes the body and ignores the signature.

A writer's chain holds the layers its checkpointer uses (``writing_chain``: compression when
``compress``, the signature with a key), a reader's holds every layer it can undo (``reading_chain``),
since it reads what any writer wrote. After the layers, a body that still starts with a zero byte is a
format a newer statehitl wrote, refused with a message that says to upgrade.

Encryption is a layer of the same kind, between the two (compress, then encrypt, then sign: a
signature over what is stored, and nothing to compress once encrypted), behind a marker of its own
such as ``b"\\x00e1"``; none ships yet, and a reader that meets such a body says so.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import zlib
from functools import lru_cache
from typing import Any, Protocol

from statehitl.errors import CheckpointCorruptError

__all__ = ["CodecChain", "Compression", "PayloadCodec", "Signature", "reading_chain", "writing_chain"]


class PayloadCodec(Protocol):
    """One layer: bytes to bytes for the store, and back. ``place`` is the key the bytes are stored under,
    ``where`` names the record in errors."""

    def encode(self, body: bytes, place: str) -> bytes: ...

    def decode(self, body: bytes, place: str, where: str) -> bytes: ...


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


class Compression:
    """Format 1: raw DEFLATE with ``_DICTIONARY`` behind ``_COMPRESSED``; other bodies pass through on decode."""

    def __init__(self) -> None:
        self._primed: Any = None
        """A compressor that has taken in the dictionary and nothing else: each record's compressor is a copy
        of it (``Compress.copy``), which costs less than priming a new one with the dictionary every time."""

    def encode(self, body: bytes, place: str) -> bytes:
        if self._primed is None:
            self._primed = zlib.compressobj(_LEVEL, zlib.DEFLATED, -_WINDOW_BITS, _MEM_LEVEL, zdict=_DICTIONARY)
        deflate = self._primed.copy()
        deflated: bytes = deflate.compress(body) + deflate.flush()
        return _COMPRESSED + deflated

    def decode(self, body: bytes, place: str, where: str) -> bytes:
        if not body.startswith(_COMPRESSED):
            return body
        inflate = zlib.decompressobj(-zlib.MAX_WBITS, zdict=_DICTIONARY)
        try:
            data = inflate.decompress(body[len(_COMPRESSED):])
        except zlib.error as exc:
            raise CheckpointCorruptError(
                f"{where} is not valid compressed data (truncated or corrupt): {exc}") from None
        if not inflate.eof or inflate.unused_data:
            raise CheckpointCorruptError(f"{where} is not valid compressed data: truncated, or bytes after its end")
        return data


_SIG = b"\n#hmac-sha256:"
_SIGNATURE = re.compile(rb"[0-9a-f]{64}\s*")
"""What follows ``_SIG`` in a signed record (HMAC-SHA256 in hex): only that makes it a signature."""


class Signature:
    """HMAC-SHA256 over the place and the bytes as stored, appended; with no ``key``, decode only strips it."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key

    def _mac(self, place: str, body: bytes) -> bytes:
        assert self.key is not None
        if not place:
            raise ValueError("a signed record needs its place (the storage key it is written under) to bind it to")
        mac = hmac.new(self.key, place.encode(), hashlib.sha256)
        mac.update(b"\n")  # a key never holds a newline, so place and body cannot be shifted into each other
        mac.update(body)
        return mac.hexdigest().encode()

    def encode(self, body: bytes, place: str) -> bytes:
        return body + _SIG + self._mac(place, body)

    def decode(self, body: bytes, place: str, where: str) -> bytes:
        signed, sep, signature = body.rpartition(_SIG)
        if not sep or not _SIGNATURE.fullmatch(signature):  # unsigned (its bytes may hold the separator by chance)
            signed, sep = body, b""
        if self.key is None:
            return signed
        if not sep:
            raise CheckpointCorruptError(f"{where} is not signed, but a signing key is configured")
        if not hmac.compare_digest(signature.strip(), self._mac(place, signed)):
            raise CheckpointCorruptError(f"{where} fails its signature check: it was modified, signed with "
                                         "another key, or copied here from another thread, slot or interrupt")
        return signed


class CodecChain:
    """Layers applied in order to encode, in reverse to decode; then a decoded body must be JSON's."""

    def __init__(self, *layers: PayloadCodec) -> None:
        self.layers = layers
        self._reversed = tuple(reversed(layers))

    def encode(self, body: bytes, place: str) -> bytes:
        for layer in self.layers:
            body = layer.encode(body, place)
        return body

    def decode(self, data: bytes, place: str, where: str) -> bytes:
        for layer in self._reversed:
            data = layer.decode(data, place, where)
        if data.startswith(b"\x00"):  # a later format, as a later statehitl may write
            raise CheckpointCorruptError(
                f"{where} is stored in a format this statehitl does not know ({data[:3]!r}...): it was written by "
                "a newer statehitl; upgrade statehitl to read it"
            )
        return data


@lru_cache(maxsize=64)
def writing_chain(signing_key: bytes | None, compress: bool) -> CodecChain:
    """The layers a checkpointer writes with: compression when ``compress``, then the signature with a key."""
    layers: list[PayloadCodec] = [Compression()] if compress else []
    if signing_key is not None:
        layers.append(Signature(signing_key))
    return CodecChain(*layers)


@lru_cache(maxsize=64)
def reading_chain(signing_key: bytes | None) -> CodecChain:
    """The layers a checkpointer reads with: every one it knows, since it reads what any writer wrote."""
    return CodecChain(Compression(), Signature(signing_key))
