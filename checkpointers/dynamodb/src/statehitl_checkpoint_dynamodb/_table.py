"""One DynamoDB table as every part of the package uses it: its name and TTL settings, its boto3 client
(built on first use), the item-level requests the reads, writes, listings, scans and the stream share,
and which nested partitions this process knows to be announced by their markers.

``DynamoDBStorage`` (``storage.py``) is the ``Storage`` contract on a ``Table``; writing
(``_writes.py``), listing and deleting (``_listing.py``), the filtered scan (``named.py``) and the
stream reader (``streams.py``) each take the ``Table`` rather than the storage, so none of them
imports another's module, and none reaches into the storage's private state.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from statehitl.checkpoint.clock import StoreClock, watch_boto_client
from statehitl.errors import CheckpointCorruptError
from statehitl_checkpoint_dynamodb._client import batch_get, batch_write, make_client, translate_errors
from statehitl_checkpoint_dynamodb._layout import ROOT, chunk_keys, chunk_partition, join, marker_chain, split_key
from statehitl_checkpoint_dynamodb.errors import DynamoDBError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


_REGISTERED_MAX = 100_000
"""Partitions remembered as registered; past this the memory is dropped (costing one marker write each)."""

_READ_ATTEMPTS = 8
"""Re-reads of a split value whose chunks vanished under us (it was replaced meanwhile) before giving up."""


class ClientOptions(TypedDict):
    """How a client for the table is built when none is given (``make_client``'s arguments)."""

    session: Any
    region_name: str | None
    endpoint_url: str | None
    profile_name: str | None
    max_attempts: int


def string(value: str) -> dict[str, str]:
    """A DynamoDB string attribute."""
    return {"S": value}


def item_key(pk: str, sk: str) -> dict[str, Any]:
    """An item's primary key attributes."""
    return {"pk": string(pk), "sk": string(sk)}


class Table:
    """The table ``name``: a ready ``client``, or ``options`` to build one on first use (boto3 takes a
    few hundred milliseconds to import); ``ttl_seconds`` stamps items with ``ttl_attribute``."""

    def __init__(self, name: str, *, client: DynamoDBClient | None, options: ClientOptions,
                 ttl_seconds: float | None, ttl_attribute: str) -> None:
        self.name = name
        self.options = options
        self.given_client = client
        """The client the caller gave, if one (else None, also once one is built)."""
        self.ttl_seconds = ttl_seconds
        self.ttl_attribute = ttl_attribute
        self._client = client
        self.server_clock = StoreClock() if client is None else watch_boto_client(client)
        """DynamoDB's clock, from the ``Date`` of its responses: the engine judges leases by it
        (``checkpoint/clock.py``). Fed once the client is built."""
        self._lock = threading.Lock()
        self._registered: dict[str, float] = {}
        """Partitions whose marker chain is known to exist, and until when (math.inf without TTL), so a write
        registers a nested partition once per process rather than on every write."""

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    client = make_client(**self.options, table=self.name)
                    watch_boto_client(client, self.server_clock)
                    self._client = client
        return self._client

    @property
    def scope(self) -> str:
        """Which table this is, across processes: the endpoint (or region and profile) and the name,
        without building a client."""
        if self.given_client is not None:
            where = str(self.given_client.meta.endpoint_url)
        else:
            options = self.options
            where = f"{options['endpoint_url'] or options['region_name'] or ''}|{options['profile_name'] or ''}"
        return f"dynamodb:{where}/{self.name}"

    def errors(self, action: str) -> contextlib.AbstractContextManager[None]:
        """Around one request: its botocore errors as the package's ``DynamoDBError``s."""
        return translate_errors(self.name, self.client, action)

    def expired(self, item: dict[str, Any], now: int) -> bool:
        """Whether ``item`` is past its TTL stamp (DynamoDB deletes such items late: they read as absent)."""
        stamp = item.get(self.ttl_attribute)
        return stamp is not None and "N" in stamp and float(stamp["N"]) <= now

    def expiry(self, now: float) -> int | None:
        """The TTL stamp of an item written ``now`` (None without TTL)."""
        return None if self.ttl_seconds is None else math.ceil(now + self.ttl_seconds)

    def delete_items(self, keys: list[tuple[str, str]], *, best_effort: bool = False) -> None:
        requests = [{"DeleteRequest": {"Key": item_key(pk, sk)}} for pk, sk in keys]
        if not best_effort:
            batch_write(self.client, self.name, requests)
            return
        with contextlib.suppress(DynamoDBError):  # leftovers are unreachable; sweep_orphan_chunks finds them
            batch_write(self.client, self.name, requests)

    @staticmethod
    def chunks_of(pk: str, sk: str, token: str) -> list[tuple[str, str]]:
        """The keys of the chunks a value written with ``token`` was split into."""
        return [(chunk_partition(pk), name) for name in chunk_keys(sk, token)]

    # -- one item -------------------------------------------------------------------------------------

    def read(self, key: str) -> tuple[bytes, str] | None:
        """The value and version token of ``key`` (read with its chunks), or None: a ``GetItem`` (+ a
        ``BatchGetItem`` per 40 chunks of a value over an item's size)."""
        pk, sk = split_key(key)
        for _ in range(_READ_ATTEMPTS):
            with self.errors("GetItem"):
                item = self.client.get_item(TableName=self.name, Key=item_key(pk, sk), ConsistentRead=True).get("Item")
            if item is None or self.expired(item, int(time.time())):
                return None
            self.observed(pk)
            token = item["v"]["S"]
            data = item.get("d", {}).get("B", b"")
            names = chunk_keys(sk, token)
            if not names:
                return data, token
            found = batch_get(self.client, self.name, [item_key(chunk_partition(pk), name) for name in names])
            pieces = {chunk["sk"]["S"]: chunk["c"]["B"] for chunk in found}
            if all(name in pieces for name in names):
                return data + b"".join(pieces[name] for name in names), token
            # The record was replaced or deleted after we read it, and its chunks went with it: read again.
        raise CheckpointCorruptError(
            f"key {key!r} in DynamoDB table {self.name!r} names value chunks that do not exist "
            "(it kept changing while being read, or its chunks were deleted outside statehitl)"
        )

    def version(self, key: str) -> str | None:
        """The version token of ``key``, projected from a ``GetItem`` (none of the value's bytes)."""
        pk, sk = split_key(key)
        with self.errors("GetItem"):
            item = self.client.get_item(TableName=self.name, Key=item_key(pk, sk), ConsistentRead=True,
                                        ProjectionExpression="#v, #x",
                                        ExpressionAttributeNames={"#v": "v", "#x": self.ttl_attribute}).get("Item")
        if item is None or self.expired(item, int(time.time())):
            return None
        token: str = item["v"]["S"]
        return token

    def holds(self, pk: str, sk: str, token: str) -> bool:
        """Whether the record holds the write ``token`` (its version token alone, strongly consistent)."""
        with self.errors("GetItem"):
            item = self.client.get_item(TableName=self.name, Key=item_key(pk, sk), ConsistentRead=True,
                                        ProjectionExpression="#v", ExpressionAttributeNames={"#v": "v"}).get("Item")
        return item is not None and item.get("v", {}).get("S") == token

    # -- which nested partitions are announced ------------------------------------------------------------

    def observed(self, pk: str) -> None:
        """A live record in ``pk`` was seen, so its marker chain exists (writers put markers first).

        Only without TTL: with it, how long the markers live is not known from a record.
        """
        if self.ttl_seconds is None and pk != ROOT:
            with self._lock:
                if len(self._registered) > _REGISTERED_MAX:
                    self._registered.clear()
                self._registered[pk] = math.inf

    def register(self, pk: str, expires: int | None) -> None:
        """Make sure nested partition ``pk`` is announced in its ancestors before a record goes in.

        With TTL a marker lives two TTLs and is renewed when a record would outlive it, so markers go
        away with the records they announce.
        """
        needed = math.inf if expires is None else expires
        with self._lock:
            missing = [(join(up_pk, marker[:-1]), up_pk, marker) for up_pk, marker in marker_chain(pk)
                       if self._registered.get(join(up_pk, marker[:-1]), 0.0) < needed]
        if not missing:
            return
        until = None if expires is None or self.ttl_seconds is None else math.ceil(expires + self.ttl_seconds)
        items: list[dict[str, Any]] = []
        for _, up_pk, marker in missing:
            item = item_key(up_pk, marker)
            if until is not None:
                item[self.ttl_attribute] = {"N": str(until)}
            items.append(item)
        if len(items) == 1:
            with self.errors("PutItem"):
                self.client.put_item(TableName=self.name, Item=items[0])
        else:
            batch_write(self.client, self.name, [{"PutRequest": {"Item": item}} for item in items])
        with self._lock:
            if len(self._registered) > _REGISTERED_MAX:
                self._registered.clear()
            for partition, _, _ in missing:
                self._registered[partition] = math.inf if until is None else float(until)

    def forget(self, partition: str) -> None:
        """Partition ``partition`` and those under it are no longer known to be announced (markers deleted)."""
        self._forget(lambda known: known == partition or known.startswith(partition + "/"))

    def forget_prefix(self, prefix: str) -> None:
        """Every partition whose name starts with ``prefix`` is no longer known to be announced."""
        self._forget(lambda known: known.startswith(prefix))

    def _forget(self, gone: Callable[[str], bool]) -> None:
        with self._lock:
            for known in [p for p in self._registered if gone(p)]:
                del self._registered[known]


class OnTable(Protocol):
    """What stands on one table (a ``DynamoDBStorage``): the stream reader and the scan take it as it is."""

    @property
    def table(self) -> Table: ...
