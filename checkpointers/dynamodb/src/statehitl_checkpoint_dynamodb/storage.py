"""``DynamoDBStorage``: the four ``Storage`` primitives on one DynamoDB table.

Compare-and-set is a conditional ``PutItem`` on the record (``attribute_not_exists(pk)`` to create,
``#v = :expected`` to replace), so of two writers exactly one wins, across processes and machines.
Every read is strongly consistent, so a thread committed on one machine resumes on another at once.
Item layout (partitions, markers, chunks) is in ``_layout``.

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
import contextlib
import math
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from statehitl.checkpoint.clock import StoreClock, watch_boto_client
from statehitl.checkpoint.storage import ABSENT, CLEANUP_MAX_AGE, validate_prefix
from statehitl.errors import CheckpointConflict, CheckpointCorruptError
from statehitl_checkpoint_dynamodb._client import batch_get, batch_write, make_client, retried, translate_errors
from statehitl_checkpoint_dynamodb._layout import (
    ROOT,
    Entry,
    chunk_keys,
    chunk_partition,
    is_marker,
    join,
    marker_chain,
    new_token,
    parent,
    split_key,
    split_value,
    token_chunks,
)
from statehitl_checkpoint_dynamodb._url import check_options, check_table_name, parse_url
from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError, DynamoDBError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from statehitl_checkpoint_dynamodb.streams import TableStream

__all__ = ["DynamoDBStorage"]

_REGISTERED_MAX = 100_000
"""Partitions remembered as registered; past this the memory is dropped (costing one marker write each)."""

_READ_ATTEMPTS = 8
"""Re-reads of a split value whose chunks vanished under us (it was replaced meanwhile) before giving up."""


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": _s(pk), "sk": _s(sk)}


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
        self._client = client
        self._client_options: dict[str, Any] = {
            "session": session,
            "region_name": region_name,
            "endpoint_url": endpoint_url,
            "profile_name": profile_name,
            "max_attempts": max_attempts,
        }
        self.server_clock = StoreClock() if client is None else watch_boto_client(client)
        """DynamoDB's clock, from the ``Date`` of its responses: the engine judges leases by it
        (``checkpoint/clock.py``). Fed once the client is built."""
        self._lock = threading.Lock()
        # Partitions whose marker chain is known to exist, and until when (math.inf without TTL), so a
        # write registers a nested partition once per process rather than on every write.
        self._registered: dict[str, float] = {}

    @classmethod
    def from_url(cls, url: str) -> DynamoDBStorage:
        """``dynamodb://TABLE?region=R&endpoint_url=U&profile=P&ttl_seconds=N&ttl_attribute=A&max_attempts=N``."""
        table, options = parse_url(url)
        return cls(table, **options)

    @property
    def cache_scope(self) -> str:
        """Which table this is, for the engine's process-wide cache of warm threads: the endpoint (or
        region and profile) and the table, without building a client."""
        if self._client is not None:
            where = str(self._client.meta.endpoint_url)
        else:
            options = self._client_options
            where = f"{options['endpoint_url'] or options['region_name'] or ''}|{options['profile_name'] or ''}"
        return f"dynamodb:{where}/{self.table_name}"

    @property
    def client(self) -> DynamoDBClient:
        """The boto3 client, built on first use (boto3 takes a few hundred milliseconds to import)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    client = make_client(**self._client_options, table=self.table_name)
                    watch_boto_client(client, self.server_clock)
                    self._client = client
        return self._client

    async def read_named(self, prefix: str, name: str) -> dict[str, tuple[bytes, str]]:
        """Every record under ``prefix`` whose last key segment is ``name`` (``index/``, ``entry``: every
        thread's index entry), with values, in one filtered ``Scan`` rather than a ``Query`` per partition
        (``named.py`` says when that pays)."""
        from statehitl_checkpoint_dynamodb.named import scan_named

        return await asyncio.to_thread(scan_named, self, prefix, name)

    def change_feed(self) -> TableStream:
        """The table's DynamoDB stream as a feed of the keys written (``streams.TableStream``): what
        ``statehitl worker`` reads to resume a thread as soon as its answer is stored. The table needs
        its stream on (``create_table(..., stream=True)``)."""
        from statehitl_checkpoint_dynamodb.streams import TableStream

        return TableStream(self)

    # -- helpers --------------------------------------------------------------------------------------

    def _errors(self, action: str) -> contextlib.AbstractContextManager[None]:
        return translate_errors(self.table_name, self.client, action)

    def _expired(self, item: dict[str, Any], now: int) -> bool:
        stamp = item.get(self.ttl_attribute)
        return stamp is not None and "N" in stamp and float(stamp["N"]) <= now

    def _expiry(self, now: float) -> int | None:
        return None if self.ttl_seconds is None else math.ceil(now + self.ttl_seconds)

    def _observed(self, pk: str) -> None:
        """A live record in ``pk`` was seen, so its marker chain exists (writers put markers first).

        Only without TTL: with it, how long the markers live is not known from a record.
        """
        if self.ttl_seconds is None and pk != ROOT:
            with self._lock:
                if len(self._registered) > _REGISTERED_MAX:
                    self._registered.clear()
                self._registered[pk] = math.inf

    def _register(self, pk: str, expires: int | None) -> None:
        """Make sure nested partition ``pk`` is announced in its ancestors before a record goes in.

        With TTL a marker lives two TTLs and is renewed when a record would outlive it, so markers go
        away with the records they announce.
        """
        needed = math.inf if expires is None else expires
        missing = []
        with self._lock:
            for up_pk, marker in marker_chain(pk):
                partition = join(up_pk, marker[:-1])
                if self._registered.get(partition, 0.0) < needed:
                    missing.append((partition, up_pk, marker))
        if not missing:
            return
        until = None if expires is None or self.ttl_seconds is None else math.ceil(expires + self.ttl_seconds)
        items: list[dict[str, Any]] = []
        for _, up_pk, marker in missing:
            item = _key(up_pk, marker)
            if until is not None:
                item[self.ttl_attribute] = {"N": str(until)}
            items.append(item)
        if len(items) == 1:
            with self._errors("PutItem"):
                self.client.put_item(TableName=self.table_name, Item=items[0])
        else:
            batch_write(self.client, self.table_name, [{"PutRequest": {"Item": item}} for item in items])
        with self._lock:
            if len(self._registered) > _REGISTERED_MAX:
                self._registered.clear()
            for partition, _, _ in missing:
                self._registered[partition] = math.inf if until is None else float(until)

    def _forget(self, partition: str) -> None:
        with self._lock:
            for known in [p for p in self._registered if p == partition or p.startswith(partition + "/")]:
                del self._registered[known]

    def _delete_items(self, keys: list[tuple[str, str]], *, best_effort: bool = False) -> None:
        requests = [{"DeleteRequest": {"Key": _key(pk, sk)}} for pk, sk in keys]
        if not best_effort:
            batch_write(self.client, self.table_name, requests)
            return
        with contextlib.suppress(DynamoDBError):  # leftovers are unreachable; sweep_orphan_chunks finds them
            batch_write(self.client, self.table_name, requests)

    @staticmethod
    def _chunks_of(pk: str, sk: str, token: str) -> list[tuple[str, str]]:
        return [(chunk_partition(pk), name) for name in chunk_keys(sk, token)]

    # -- read -----------------------------------------------------------------------------------------

    def _read(self, key: str) -> tuple[bytes, str] | None:
        pk, sk = split_key(key)
        for _ in range(_READ_ATTEMPTS):
            with self._errors("GetItem"):
                item = self.client.get_item(TableName=self.table_name, Key=_key(pk, sk), ConsistentRead=True).get(
                    "Item"
                )
            if item is None or self._expired(item, int(time.time())):
                return None
            self._observed(pk)
            token = item["v"]["S"]
            data = item.get("d", {}).get("B", b"")
            names = chunk_keys(sk, token)
            if not names:
                return data, token
            found = batch_get(self.client, self.table_name, [_key(chunk_partition(pk), name) for name in names])
            pieces = {chunk["sk"]["S"]: chunk["c"]["B"] for chunk in found}
            if all(name in pieces for name in names):
                return data + b"".join(pieces[name] for name in names), token
            # The record was replaced or deleted after we read it, and its chunks went with it: read again.
        raise CheckpointCorruptError(
            f"key {key!r} in DynamoDB table {self.table_name!r} names value chunks that do not exist "
            "(it kept changing while being read, or its chunks were deleted outside statehitl)"
        )

    def _version(self, key: str) -> str | None:
        pk, sk = split_key(key)
        with self._errors("GetItem"):
            item = self.client.get_item(TableName=self.table_name, Key=_key(pk, sk), ConsistentRead=True,
                                        ProjectionExpression="#v, #x",
                                        ExpressionAttributeNames={"#v": "v", "#x": self.ttl_attribute}).get("Item")
        if item is None or self._expired(item, int(time.time())):
            return None
        token: str = item["v"]["S"]
        return token

    # -- write ----------------------------------------------------------------------------------------

    def _write(self, key: str, data: bytes, expect: str) -> str:
        pk, sk = split_key(key)
        now = time.time()
        expires = self._expiry(now)
        if expect == ABSENT or expires is not None:
            # A write over a version lands only on a live record, whose markers its writer put first, and
            # without TTL markers never expire: only creates (and TTL's renewals) need them. A worker
            # resuming threads it never saw saves a marker write per thread.
            self._register(pk, expires)
        head, chunks = split_value(bytes(data))
        token = new_token(len(chunks))
        stamp = {} if expires is None else {self.ttl_attribute: {"N": str(expires)}}
        mine = self._chunks_of(pk, sk, token)
        if chunks:
            batch_write(self.client, self.table_name, [
                {"PutRequest": {"Item": {**_key(cpk, csk), "c": {"B": piece}, "at": {"N": str(int(now))}, **stamp}}}
                for (cpk, csk), piece in zip(mine, chunks, strict=True)
            ])
        item = {**_key(pk, sk), "v": _s(token), "d": {"B": head}, **stamp}
        names = {"#x": self.ttl_attribute}
        values: dict[str, Any] = {":now": {"N": str(int(now))}}
        if expect == ABSENT:
            condition = "attribute_not_exists(pk) OR #x <= :now"  # absent, or present but expired
        else:
            condition = "#v = :expect AND (attribute_not_exists(#x) OR #x > :now)"
            names["#v"] = "v"
            values[":expect"] = _s(expect)
        from botocore.exceptions import ClientError

        try:
            with self._errors("PutItem"):
                answer = self.client.put_item(
                    TableName=self.table_name,
                    Item=item,
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                    ReturnValues="ALL_OLD" if expect == ABSENT else "NONE",
                )
        except ClientError as exc:  # only ConditionalCheckFailedException gets past _errors
            if retried(exc) and self._holds(pk, sk, token):
                return self._written(pk, sk, expect, None, token)
            if mine:
                self._delete_items(mine, best_effort=True)
            if expect == ABSENT:
                raise CheckpointConflict(f"key {key!r} already exists") from None
            raise CheckpointConflict(f"key {key!r} changed since version {expect!r} was read") from None
        except DynamoDBError as exc:
            if not (exc.transient or retried(exc.__cause__)):
                raise  # refused as sent (a missing table, denied access): nothing landed
            # No answer past every retry (or an answer after a retry): an attempt may have landed.
            try:
                landed = self._holds(pk, sk, token)
            except DynamoDBError:
                landed = False
            if landed:
                return self._written(pk, sk, expect, None, token)
            # Not in the table now, but an attempt may still be in flight: the chunks stay for it (if
            # it never lands, sweep_orphan_chunks or TTL removes them), and the caller hears the outage.
            raise
        return self._written(pk, sk, expect, answer.get("Attributes", {}).get("v", {}).get("S"), token)

    def _written(self, pk: str, sk: str, expect: str, replaced: str | None, token: str) -> str:
        """After our record went in: drop the chunks of the value it replaced (known from ``expect``, or
        for a create over an expired item from ``ReturnValues``), and return our token.

        A create whose answer was lost does not know what it replaced: the expired value's chunks, if it
        had any, are left to ``sweep_orphan_chunks`` and TTL (an expired item exists only with TTL on).
        """
        self._observed(pk)
        old = expect if expect != ABSENT else replaced
        if old is not None and token_chunks(old)[1]:
            self._delete_items(self._chunks_of(pk, sk, old), best_effort=True)
        return token

    def _holds(self, pk: str, sk: str, token: str) -> bool:
        """Whether the record holds our write, ``token``: asked when a write's outcome is unknown.

        botocore retries a ``PutItem`` whose answer was lost (a timeout, a reset, a 500); if the lost
        attempt landed, the retry fails its condition against our own record, and a conflict would tell
        the engine that another process holds the thread (locking it for the lease). Every write has a
        fresh random token, which also names its chunks, so the record holding exactly our token means
        this write, chunks and all, is what is stored. A strongly consistent ``GetItem`` of the token
        alone: the one extra request, only after a retry or an outage.
        """
        with self._errors("GetItem"):
            item = self.client.get_item(TableName=self.table_name, Key=_key(pk, sk), ConsistentRead=True,
                                        ProjectionExpression="#v", ExpressionAttributeNames={"#v": "v"}).get("Item")
        return item is not None and item.get("v", {}).get("S") == token

    # -- list and delete ------------------------------------------------------------------------------

    def _query(self, pk: str, begins: str, page: int | None, *, values: bool = False) -> Iterator[dict[str, Any]]:
        """The items of partition ``pk`` whose sort key starts with ``begins``, in order, page by page;
        their keys and versions, and with ``values`` their inline values too."""
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk" + (" AND begins_with(sk, :b)" if begins else ""),
            "ExpressionAttributeValues": {":pk": _s(pk), **({":b": _s(begins)} if begins else {})},
            "ProjectionExpression": "sk, #v, #x, d" if values else "sk, #v, #x",
            "ExpressionAttributeNames": {"#v": "v", "#x": self.ttl_attribute},
            "ConsistentRead": True,
            "ScanIndexForward": True,
        }
        if page is not None:
            kwargs["Limit"] = page
        while True:
            with self._errors("Query"):
                answer = self.client.query(**kwargs)
            yield from answer.get("Items", [])
            if "LastEvaluatedKey" not in answer:
                return
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    def _walk(self, pk: str, begins: str, limit: int | None, found: list[Entry],
              markers: list[tuple[str, str]] | None, now: int, *, values: bool = False) -> None:
        """Records under ``pk``/``begins`` in key order into ``found``, following markers depth first;
        with ``values``, each with the value its item holds inline.

        Expired records are included (flagged) only when ``markers`` is collected, i.e. for deletion.
        """
        live = False
        for item in self._query(pk, begins, None if limit is None else max(1, limit - len(found)), values=values):
            sk = item["sk"]["S"]
            if is_marker(sk):
                self._walk(join(pk, sk[:-1]), "", limit, found, markers, now, values=values)
                if markers is not None:
                    markers.append((pk, sk))
            else:
                expired = self._expired(item, now)
                live = live or not expired
                if markers is not None or not expired:
                    inline = item.get("d", {}).get("B", b"") if values else None
                    found.append(Entry(join(pk, sk), pk, sk, item["v"]["S"], expired, inline))
            if limit is not None and len(found) >= limit:
                break
        if live:
            self._observed(pk)

    def _read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """One ``Query`` per megabyte of a partition (a thread's records), values included; a value
        split into chunks is read with them. A prefix without ``/`` is listed and read key by key."""
        validate_prefix(prefix)
        if "/" not in prefix:
            return {key: value for key, _ in self._list(prefix, None) if (value := self._read(key)) is not None}
        pk, _, begins = prefix.rpartition("/")
        found: list[Entry] = []
        self._walk(pk, begins, None, found, None, int(time.time()), values=True)
        records: dict[str, tuple[bytes, str]] = {}
        for entry in found:
            if token_chunks(entry.token)[1]:  # the rare value over an item's size: read with its chunks
                if (whole := self._read(entry.key)) is not None:
                    records[entry.key] = whole
            else:
                records[entry.key] = entry.inline or b"", entry.token
        return records

    def _scan(self, prefix: str, *, everything: bool) -> Iterator[dict[str, Any]]:
        """Items whose key starts with ``prefix`` (no ``/`` in it) by a full table ``Scan``.

        With ``everything``, markers and chunks too (for deletion); else records only.
        """
        names: dict[str, str] = {"#p": "pk", "#s": "sk", "#v": "v", "#x": self.ttl_attribute}
        values: dict[str, Any] = {}
        clauses = []
        if prefix:
            values.update({":p": _s(prefix), ":root": _s(ROOT)})
            clauses.append("begins_with(#p, :p) OR (#p = :root AND begins_with(#s, :p))")
            if everything:
                values.update({":cp": _s(chunk_partition(prefix)), ":croot": _s(chunk_partition(ROOT))})
                clauses.append("begins_with(#p, :cp) OR (#p = :croot AND begins_with(#s, :p))")
        condition = " OR ".join(clauses)
        if not everything:
            condition = f"attribute_exists(#v) AND ({condition})" if condition else "attribute_exists(#v)"
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "ProjectionExpression": "#p, #s, #v, #x",
            "ExpressionAttributeNames": names,
            "ConsistentRead": True,
        }
        if condition:
            kwargs["FilterExpression"] = condition
        if values:
            kwargs["ExpressionAttributeValues"] = values
        while True:
            with self._errors("Scan"):
                answer = self.client.scan(**kwargs)
            yield from answer.get("Items", [])
            if "LastEvaluatedKey" not in answer:
                return
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    def _list(self, prefix: str, limit: int | None) -> list[tuple[str, str]]:
        """Keys with their version tokens: a ``Query`` (a ``Scan`` for a prefix without ``/``) projects both."""
        validate_prefix(prefix)
        if limit is not None and limit <= 0:
            return []
        now = int(time.time())
        if "/" not in prefix:
            keys = sorted(
                (join(item["pk"]["S"], item["sk"]["S"]), item["v"]["S"])
                for item in self._scan(prefix, everything=False)
                if not self._expired(item, now)
            )
            return keys[:limit]
        pk, _, begins = prefix.rpartition("/")
        found: list[Entry] = []
        self._walk(pk, begins, limit, found, None, now)
        return [(entry.key, entry.token) for entry in found[:limit]]

    def _delete(self, prefix: str) -> int:
        validate_prefix(prefix)
        now = int(time.time())
        if "/" not in prefix:
            return self._delete_scanned(prefix, now)
        pk, _, begins = prefix.rpartition("/")
        found: list[Entry] = []
        markers: list[tuple[str, str]] = []
        self._walk(pk, begins, None, found, markers, now)
        if not begins and (up := parent(pk)) is not None:
            markers.append((up[0], up[1] + "/"))  # "p/c/" covers all of partition p/c: its marker goes too
        # Records first, then their chunks, then markers: at no point is a live record unlisted.
        self._delete_items([(e.pk, e.sk) for e in found])
        self._delete_items([chunk for e in found for chunk in self._chunks_of(e.pk, e.sk, e.token)])
        self._delete_items(markers)
        for up_pk, marker in markers:
            self._forget(join(up_pk, marker[:-1]))
        return sum(not e.expired for e in found)

    def _delete_scanned(self, prefix: str, now: int) -> int:
        records, others = [], []
        count = 0
        for item in self._scan(prefix, everything=True):
            pk, sk = item["pk"]["S"], item["sk"]["S"]
            if "v" in item:
                records.append((pk, sk))
                count += not self._expired(item, now)
            else:
                others.append((pk, sk))
        self._delete_items(records)
        self._delete_items(others)
        with self._lock:
            for known in [p for p in self._registered if p.startswith(prefix)]:
                del self._registered[known]
        return count

    # -- maintenance ----------------------------------------------------------------------------------

    def _sweep_orphan_chunks(self, older_than: float) -> int:
        cutoff = time.time() - older_than
        owners: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "ProjectionExpression": "pk, sk, #a",
            "ExpressionAttributeNames": {"#a": "at"},
            "FilterExpression": "begins_with(pk, :h) AND #a < :cutoff",
            "ExpressionAttributeValues": {":h": _s("#"), ":cutoff": {"N": str(int(cutoff))}},
            "ConsistentRead": True,
        }
        while True:
            with self._errors("Scan"):
                answer = self.client.scan(**kwargs)
            for item in answer.get("Items", []):
                cpk, csk = item["pk"]["S"], item["sk"]["S"]
                name, _, rest = csk.partition("#")
                owners.setdefault((cpk[1:], name), []).append((cpk, csk, rest.partition("#")[0]))
            if "LastEvaluatedKey" not in answer:
                break
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
        doomed: list[tuple[str, str]] = []
        for (pk, sk), chunks in owners.items():
            with self._errors("GetItem"):
                head = self.client.get_item(TableName=self.table_name, Key=_key(pk, sk), ConsistentRead=True,
                                            ProjectionExpression="#v", ExpressionAttributeNames={"#v": "v"})
            current = token_chunks(head["Item"]["v"]["S"])[0] if "Item" in head else None
            doomed.extend((cpk, csk) for cpk, csk, write_id in chunks if write_id != current)
        self._delete_items(doomed)
        return len(doomed)

    async def sweep_orphan_chunks(self, older_than: float = CLEANUP_MAX_AGE) -> int:
        """Delete chunks no record refers to, left by a writer that died between its chunks and its record.

        A full table ``Scan`` (every item is read), so run it rarely, from a maintenance job; chunks
        younger than ``older_than`` seconds are left alone, since their writer may still be working.
        With ``ttl_seconds`` DynamoDB removes such leftovers by itself. Returns how many were deleted.
        """
        return await asyncio.to_thread(self._sweep_orphan_chunks, older_than)

    async def cleanup(self, max_age: float = CLEANUP_MAX_AGE) -> int:
        """The storage contract's cleanup step (``SupportsCleanup``), which ``Checkpointer.prune`` and
        ``sweep_expired`` run: ``sweep_orphan_chunks(older_than=max_age)``, a full table ``Scan``."""
        return await self.sweep_orphan_chunks(older_than=max_age)

    # -- the Storage protocol -------------------------------------------------------------------------

    async def read(self, key: str) -> tuple[bytes, str] | None:
        split_key(key)  # refuse a bad key before a thread hop
        return await asyncio.to_thread(self._read, key)

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        """Conditional put; ``durable`` is ignored: DynamoDB acknowledges a write once it is durable."""
        split_key(key)
        return await asyncio.to_thread(self._write, key, data, expect)

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """The listed keys with their version tokens, from the same ``Query`` (``SupportsListVersions``):
        a warm resume needs no ``GetItem`` after its listing."""
        validate_prefix(prefix)
        return await asyncio.to_thread(self._list, prefix, limit)

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        return [key for key, _ in await self.list_versions(prefix, limit=limit)]

    async def version(self, key: str) -> str | None:
        """The record's version token, projected from a ``GetItem`` (``SupportsVersion``): the same read
        units as the item, but none of its bytes on the wire."""
        split_key(key)
        return await asyncio.to_thread(self._version, key)

    async def read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """Every key under ``prefix`` with its value (``SupportsReadAll``)."""
        validate_prefix(prefix)
        return await asyncio.to_thread(self._read_all, prefix)

    async def delete(self, prefix: str) -> int:
        validate_prefix(prefix)
        return await asyncio.to_thread(self._delete, prefix)

    def __repr__(self) -> str:
        return f"DynamoDBStorage({self.table_name!r})"
