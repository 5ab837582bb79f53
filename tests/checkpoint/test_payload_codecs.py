"""The codec is a chain of layers (``payload_codecs``): compression, then the signature, undone in reverse.
The bytes on disk are format 1's, as statehitl wrote them before the chain; a layer of another kind
(encryption) fits between the two, and a reader without it says what to do."""

from __future__ import annotations

import hashlib
import hmac
import zlib

import pytest

from statehitl.checkpoint.codec import decode, encode
from statehitl.checkpoint.payload_codecs import (
    _DICTIONARY,
    CodecChain,
    Compression,
    Signature,
    reading_chain,
    writing_chain,
)
from statehitl.checkpoint.records import StoredCheckpoint
from statehitl.errors import CheckpointCorruptError

KEY = b"k" * 32
PLACE = "threads/t/999999999996"
RECORD = StoredCheckpoint.model_validate({
    "thread_id": "t", "seq": 3, "parent_seq": 2, "depth": 3, "base_seq": 2, "created_at": 1700000000.123,
    "machine": "m", "fingerprint": "f", "status": "interrupted", "step": 2, "pending": ["review"],
    "values": {"n": 1, "text": "h\u00e9llo"},
    "appends": {"messages": {"start": 1, "items": [{"role": "user", "content": [{"text": "hi"}]}]}},
    "interrupts": [{"id": "i1", "name": "approve", "reason": {"amount": 12}}],
})


def test_plain_and_signed_records_are_the_bytes_statehitl_wrote_before_the_chain() -> None:
    """Digests of the bytes the codec wrote before it was layered, for this record (at schema version 6:
    a new version changes the record's JSON, and these with it)."""
    plain = encode(RECORD, None, place=PLACE)
    signed = encode(RECORD, KEY, place=PLACE)
    assert hashlib.sha256(plain).hexdigest() == "2e0275f91c52c8762220473c0b7003905734aaffbc1b5e0c35b520755441277d"
    assert hashlib.sha256(signed).hexdigest() == "5dfed2f9f22cf4af04c3f29df92014dbba6206feb67eddef016f4b6df788704b"


def test_a_compressed_signed_record_is_format_1_as_an_older_reader_reads_it() -> None:
    """Compressed first, then signed over the place and the bytes as stored: read here by hand, as a
    statehitl from before the chain reads it."""
    stored = encode(RECORD, KEY, place=PLACE, compress=True)
    body, sep, signature = stored.rpartition(b"\n#hmac-sha256:")
    assert sep
    mac = hmac.new(KEY, PLACE.encode() + b"\n" + body, hashlib.sha256).hexdigest().encode()
    assert signature == mac
    assert body.startswith(b"\x00z1")
    inflate = zlib.decompressobj(-zlib.MAX_WBITS, zdict=_DICTIONARY)
    assert inflate.decompress(body[3:]) == encode(RECORD, None, place=PLACE)
    assert decode("r", stored, KEY, place=PLACE) == decode("r", encode(RECORD, None), None)


def test_the_writing_chain_has_the_checkpointers_layers_and_the_reading_chain_every_one() -> None:
    assert [type(layer) for layer in writing_chain(None, False).layers] == []
    assert [type(layer) for layer in writing_chain(KEY, True).layers] == [Compression, Signature]
    assert [type(layer) for layer in reading_chain(None).layers] == [Compression, Signature]
    assert writing_chain(KEY, True) is writing_chain(KEY, True)  # built once per setting, not per record


class Reverse:
    """A layer of another kind, behind a marker of its own, as an encryption layer would be."""

    MARK = b"\x00r1"

    def encode(self, body: bytes, place: str) -> bytes:
        return self.MARK + body[::-1]

    def decode(self, body: bytes, place: str, where: str) -> bytes:
        return body[len(self.MARK):][::-1] if body.startswith(self.MARK) else body


def test_a_layer_of_another_kind_fits_between_compression_and_signature() -> None:
    chain = CodecChain(Compression(), Reverse(), Signature(KEY))
    stored = chain.encode(b'{"kind":"checkpoint"}', PLACE)
    assert chain.decode(stored, PLACE, "r") == b'{"kind":"checkpoint"}'
    with pytest.raises(CheckpointCorruptError, match=r"'r' fails its signature check"):
        chain.decode(stored, "threads/t/999999999995", "'r'")  # the signature still binds the place
    with pytest.raises(CheckpointCorruptError, match=r"format this statehitl does not know .*upgrade statehitl"):
        reading_chain(KEY).decode(stored, PLACE, "r")  # a reader without the layer says what to do
