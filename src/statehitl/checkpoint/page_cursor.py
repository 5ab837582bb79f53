"""The opaque cursor of a paged listing (the inbox's pending interrupts, ``threads list``): where the next
page starts, as text a user can pass back (``--cursor``, ``?cursor=``, ``cursor=``).

A cursor names a position in the store's paging order, not an offset: the key of the last thread index
entry a page showed (and, when the page ended inside that thread's interrupts, the last interrupt id it
showed there). A thread answered or resumed between two pages keeps its entry's key, so the next page
neither skips another thread nor shows one twice, whatever changed meanwhile.

It is JSON, checked by a pydantic model, with a digest of it (keyed with the checkpointer's
``signing_key`` when it has one), in URL-safe base64: a cursor altered or cut short, made by another
listing or for another store, or by another version of this format, is refused with
``InvalidCursorError`` saying which, never read as some other place to start.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from statehitl._echo import echo
from statehitl.checkpoint.index import thread_of_key
from statehitl.checkpoint.storage import cache_scope_of
from statehitl.errors import InvalidCursorError

Listing = Literal["pending", "threads"]
"""Which listing a cursor pages: the inbox's pending interrupts, or the threads (with a status filter)."""

_DIGEST = 12
"""Bytes of the digest a cursor carries: enough to catch any edit, short enough to paste."""
_UNSIGNED = b"statehitl page cursor"
"""The digest's key where the checkpointer has no ``signing_key``: it catches a cursor changed by accident
(cut short, mistyped), not one forged on purpose, which can only name a place in a store its maker can list."""


class PageCursor(BaseModel):
    """Where the next page of ``listing`` starts: after the index entry ``after``, and, when ``within`` is
    set, inside that entry's thread after the interrupt ``within``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal[1] = 1
    listing: Listing
    store: str
    """A digest of where the store's data lives (``cache_scope``), so a cursor cannot page another store."""
    status: str | None = None
    """The status filter of a threads listing the cursor continues."""
    after: str
    within: str | None = None


def check_limit(limit: object) -> int:
    """A page size: a whole number of at least 1 (not a bool), else ``ValueError`` naming what was given."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number of at least 1 (items per page), not {limit!r}")
    return limit


def store_mark(scope: str | None) -> str:
    """What a cursor records of its store: a short digest of the store's ``cache_scope`` ("" for a store
    that does not say where its data lives, such as a memory store)."""
    return "" if scope is None else hashlib.sha256(scope.encode()).hexdigest()[:16]


def encode_cursor(cursor: PageCursor, signing_key: bytes | None) -> str:
    """The cursor as URL-safe text: its JSON and a digest of it."""
    payload = cursor.model_dump_json().encode()
    return base64.urlsafe_b64encode(payload + _digest(payload, signing_key)).decode().rstrip("=")


def cursor_after(listing: Listing, after: str, *, storage: object, signing_key: bytes | None,
                 within: str | None = None, status: str | None = None) -> str:
    """The cursor of a page of ``listing`` on ``storage`` that goes on after the index entry ``after``."""
    cursor = PageCursor(listing=listing, store=store_mark(cache_scope_of(storage)), status=status, after=after,
                        within=within)
    return encode_cursor(cursor, signing_key)


def decode_cursor(text: object, *, listing: Listing, storage: object, signing_key: bytes | None,
                  status: str | None = None) -> PageCursor:
    """The cursor ``text`` is, checked to be one this ``listing`` (with this ``status`` filter) gave for
    ``storage``'s data; ``InvalidCursorError`` saying what is wrong otherwise."""
    scope = cache_scope_of(storage)
    payload = _payload(text, signing_key)
    try:
        cursor = PageCursor.model_validate_json(payload)
    except ValidationError:
        raise InvalidCursorError(_refusal("it is not one statehitl made, or another version of statehitl made "
                                          "it")) from None
    if cursor.listing != listing:
        raise InvalidCursorError(_refusal(f"it pages the {_LISTINGS[cursor.listing]}, not the {_LISTINGS[listing]}"))
    if cursor.store != store_mark(scope):
        raise InvalidCursorError(_refusal("it pages another store"))
    if cursor.status != status:
        raise InvalidCursorError(_refusal(f"it continues a listing of status {cursor.status or 'any'}, "
                                          f"not {status or 'any'}"))
    if thread_of_key(cursor.after) is None:
        raise InvalidCursorError(_refusal("it names no thread's place in the listing"))
    return cursor


_LISTINGS = {"pending": "inbox's pending interrupts", "threads": "threads listing"}


def _digest(payload: bytes, signing_key: bytes | None) -> bytes:
    return hmac.new(signing_key or _UNSIGNED, payload, hashlib.sha256).digest()[:_DIGEST]


def _payload(text: object, signing_key: bytes | None) -> bytes:
    """The JSON inside a cursor whose digest holds under ``signing_key`` (one made under another key, as by
    another deployment, is refused as altered)."""
    if not isinstance(text, str) or not text:
        raise InvalidCursorError(_refusal(f"a cursor is the text a page gave, not {echo(text)}"))
    try:
        raw = base64.urlsafe_b64decode(text.encode("ascii") + b"=" * (-len(text) % 4))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raw = b""
    payload, digest = raw[:-_DIGEST], raw[-_DIGEST:]
    if not payload or not hmac.compare_digest(digest, _digest(payload, signing_key)):
        raise InvalidCursorError(_refusal(f"{echo(text)} is not the text a page gave (altered, cut short, or made "
                                          "under another signing key)"))
    return payload


def _refusal(why: str) -> str:
    return f"page cursor refused: {why}; start again from the first page (without a cursor)"
