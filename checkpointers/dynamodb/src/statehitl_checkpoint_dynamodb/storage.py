"""``DynamoDBStorage``: the four ``Storage`` primitives on one DynamoDB table.

Compare-and-set is a conditional ``PutItem`` on the record (``attribute_not_exists(pk)`` to create,
``#v = :expected`` to replace), so of two writers exactly one wins, across processes and machines.
Every read is strongly consistent, so a thread committed on one machine resumes on another at once.
Item layout (partitions, markers, chunks) is in ``_layout``; the table and its item-level requests in
``_table``, writing in ``_writes``, listing and deleting in ``_listing``.

boto3 is synchronous: each primitive runs as one function in a worker thread (``asyncio.to_thread``),
so the event loop keeps serving other threads while DynamoDB answers.

Requests per primitive, for the engine's keys (``threads/<t>/<slot>``, ``index/<t>``):

- ``read``: one ``GetItem`` (+ one ``BatchGetItem`` per 40 chunks of a value over ~390 KB).
- ``write``: one conditional ``PutItem`` (+ ``BatchWriteItem`` for chunks; + one ``PutItem`` the first
  time this process writes into a nested partition it has not seen, which registers the partition).
- ``list(prefix)``: one ``Query`` per 1 MB page of the prefix's partition (``list(p, limit=1)`` is one
  request), plus one per nested partition under the prefix; a prefix without ``/`` is a ``Scan``.
- ``delete(prefix)``: the listing, then one ``BatchWriteItem`` per 25 items.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from statehitl.checkpoint.storage import CLEANUP_MAX_AGE, validate_prefix
from statehitl_checkpoint_dynamodb._layout import split_key
from statehitl_checkpoint_dynamodb._listing import delete, list_keys, read_all
from statehitl_checkpoint_dynamodb._table import ClientOptions, Table
from statehitl_checkpoint_dynamodb._url import check_options, check_table_name, parse_url
from statehitl_checkpoint_dynamodb._writes import sweep_orphan_chunks, write_value
from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from statehitl.checkpoint.clock import StoreClock
    from statehitl_checkpoint_dynamodb.streams import TableStream


class DynamoDBStorage:
    """Checkpoint storage in the DynamoDB table ``table_name`` (key schema: ``pk`` S, ``sk`` S).

    Pass a ready ``client`` (any boto3 DynamoDB client), or a boto3 ``session``, or let it build one
    from ``region_name`` / ``endpoint_url`` / ``profile_name`` and the usual AWS credential chain. A
    client it builds makes up to ``max_attempts`` attempts per request (the first included), backing
    off exponentially, so throttling (ProvisionedThroughputExceeded) is retried.

    ``ttl_seconds`` stamps every item with ``ttl_attribute`` = now + ttl (epoch seconds); enable TTL
    on that attribute (``create_table(..., ttl_attribute=...)``) and DynamoDB deletes expired items by
    itself. Records are immutable and a thread's newest checkpoint is built on older ones, so a thread
    must finish (or be given up) within ``ttl_seconds`` of its first step: choose it longer than any
    thread lives, and use ``Checkpointer(ttl=...)`` with ``sweep_expired`` for idle-based expiry.
    Items past their expiry read as absent even before DynamoDB gets round to deleting them.
    """

    def __init__(
        self,
        table_name: str,
        *,
        client: DynamoDBClient | None = None,
        session: Any = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        profile_name: str | None = None,
        ttl_seconds: float | None = None,
        ttl_attribute: str = "expires_at",
        max_attempts: int = 10,
    ) -> None:
        self.table_name = check_table_name(table_name)
        check_options(table_name, region_name=region_name, endpoint_url=endpoint_url, ttl_seconds=ttl_seconds,
                      ttl_attribute=ttl_attribute, max_attempts=max_attempts)
        if client is not None and (session is not None or region_name or endpoint_url or profile_name):
            raise DynamoDBConfigError(
                "pass client= alone: session, region_name, endpoint_url and profile_name build a new client, "
                "and a client already has its own", store=table_name,
            )
        self.ttl_seconds = ttl_seconds
        self.ttl_attribute = ttl_attribute
        options = ClientOptions(session=session, region_name=region_name, endpoint_url=endpoint_url,
                                profile_name=profile_name, max_attempts=max_attempts)
        self.table = Table(self.table_name, client=client, options=options, ttl_seconds=ttl_seconds,
                           ttl_attribute=ttl_attribute)
        """The table and its item-level requests, which every part of this package works on."""

    @classmethod
    def from_url(cls, url: str) -> DynamoDBStorage:
        """``dynamodb://TABLE?region=R&endpoint_url=U&profile=P&ttl_seconds=N&ttl_attribute=A&max_attempts=N``."""
        table, options = parse_url(url)
        return cls(table, **options)

    @property
    def cache_scope(self) -> str:
        """Which table this is, for the engine's process-wide cache of warm threads (``HasCacheScope``): the
        endpoint (or region and profile) and the table, without building a client."""
        return self.table.scope

    @property
    def server_clock(self) -> StoreClock:
        """DynamoDB's clock, from the ``Date`` of the table's responses (``HasServerClock``): the engine
        writes and judges leases by it (``checkpoint/clock.py``)."""
        return self.table.server_clock

    @property
    def client(self) -> DynamoDBClient:
        """The boto3 client, built on first use (boto3 takes a few hundred milliseconds to import)."""
        return self.table.client

    async def read_named(self, prefix: str, name: str) -> dict[str, tuple[bytes, str]]:
        """Every record under ``prefix`` whose last key segment is ``name`` (``index/``, ``entry``: every
        thread's index entry), with values, in one filtered ``Scan`` rather than a ``Query`` per partition
        (``named.py`` says when that pays)."""
        from statehitl_checkpoint_dynamodb.named import scan_named

        return await asyncio.to_thread(scan_named, self.table, prefix, name)

    def change_feed(self) -> TableStream:
        """The table's DynamoDB stream as a feed of the keys written (``streams.TableStream``): what
        ``statehitl worker`` reads to resume a thread as soon as its answer is stored. The table needs
        its stream on (``create_table(..., stream=True)``)."""
        from statehitl_checkpoint_dynamodb.streams import TableStream

        return TableStream(self)

    # -- maintenance ----------------------------------------------------------------------------------

    async def sweep_orphan_chunks(self, older_than: float = CLEANUP_MAX_AGE) -> int:
        """Delete chunks no record refers to, left by a writer that died between its chunks and its record.

        A full table ``Scan`` (every item is read), so run it rarely, from a maintenance job; chunks
        younger than ``older_than`` seconds are left alone, since their writer may still be working.
        With ``ttl_seconds`` DynamoDB removes such leftovers by itself. Returns how many were deleted.
        """
        return await asyncio.to_thread(sweep_orphan_chunks, self.table, older_than)

    async def cleanup(self, max_age: float = CLEANUP_MAX_AGE) -> int:
        """The storage contract's cleanup step (``SupportsCleanup``), which ``Checkpointer.prune`` and
        ``sweep_expired`` run: ``sweep_orphan_chunks(older_than=max_age)``, a full table ``Scan``."""
        return await self.sweep_orphan_chunks(older_than=max_age)

    # -- the Storage protocol -------------------------------------------------------------------------

    async def read(self, key: str) -> tuple[bytes, str] | None:
        split_key(key)  # refuse a bad key before a thread hop
        return await asyncio.to_thread(self.table.read, key)

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        """Conditional put; ``durable`` is ignored: DynamoDB acknowledges a write once it is durable."""
        split_key(key)
        return await asyncio.to_thread(write_value, self.table, key, data, expect)

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """The listed keys with their version tokens, from the same ``Query`` (``SupportsListVersions``):
        a warm resume needs no ``GetItem`` after its listing."""
        validate_prefix(prefix)
        return await asyncio.to_thread(list_keys, self.table, prefix, limit)

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        return [key for key, _ in await self.list_versions(prefix, limit=limit)]

    async def version(self, key: str) -> str | None:
        """The record's version token, projected from a ``GetItem`` (``SupportsVersion``): the same read
        units as the item, but none of its bytes on the wire."""
        split_key(key)
        return await asyncio.to_thread(self.table.version, key)

    async def read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """Every key under ``prefix`` with its value (``SupportsReadAll``)."""
        validate_prefix(prefix)
        return await asyncio.to_thread(read_all, self.table, prefix)

    async def delete(self, prefix: str) -> int:
        validate_prefix(prefix)
        return await asyncio.to_thread(delete, self.table, prefix)

    def __repr__(self) -> str:
        return f"DynamoDBStorage({self.table_name!r})"
