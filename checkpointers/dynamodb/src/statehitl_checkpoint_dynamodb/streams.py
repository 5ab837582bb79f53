"""The table's DynamoDB stream as a feed of written keys, for ``statehitl worker`` in a container.

An answer is one conditional ``PutItem`` of ``threads/<thread>/a.<checkpoint>.<interrupt>``; with the
table's stream on (``create_table(stream=True)``, view type ``KEYS_ONLY``), that write is itself the
event a worker wakes on, so there is no second write (a queue message, a notification) that could be
lost between the answer and the resume. ``TableStream`` reads every shard of the stream with boto3's
``dynamodbstreams`` client and gives the storage keys written, in order within a shard
(``stream_records`` turns one stream record, from ``GetRecords`` or an AWS Lambda event, into its key).

Where it starts reading, and why: the shards open when ``start()`` is called are read from ``LATEST``,
and the worker then passes once over the thread index. Every write before that position is in the
index (an answered interrupt is marked in its thread's entry, an expiry is stored with it), and every
write after it is in the stream, so nothing falls between. ``TRIM_HORIZON`` would instead replay up
to 24 hours of every write to the table (each step of each run) on every start, far more than the
work that is due. Shards found later (a shard closes and its children open, or shards roll over) are
read from ``TRIM_HORIZON``, so none of their records are missed, and a child only after its parent
is read to its end, so the records of one key arrive in the order they were written.

The position is not checkpointed anywhere: a worker that restarts starts again at ``LATEST`` plus the
index pass, and a record read twice (by two workers, or again after an expired iterator) is harmless,
since what it wakes (a resume) claims the thread with a conditional write and runs at most once.
DynamoDB Local serves the same Streams API at its own endpoint, which is what the tests read.

AWS lets about two processes read one shard at a time before it throttles them: more workers than
that on one table are better run as the Lambda handler (one reader per shard) or with ``--once``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from statehitl_checkpoint_dynamodb._client import error_code, translate_errors
from statehitl_checkpoint_dynamodb._table import OnTable, Table
from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError, DynamoDBError
from statehitl_checkpoint_dynamodb.stream_records import Change, record_change

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_ITERATOR_LOST = frozenset({"ExpiredIteratorException", "TrimmedDataAccessException", "ResourceNotFoundException"})
"""GetRecords/GetShardIterator errors the reader recovers from itself (a new iterator, or the shards
described again) instead of reporting them."""


class StreamsClient(Protocol):
    """The four calls of boto3's ``dynamodbstreams`` client this module makes (its stubs are not a
    dependency: this is all the type checker needs to know of it)."""

    def list_streams(self, **kwargs: Any) -> dict[str, Any]: ...

    def describe_stream(self, **kwargs: Any) -> dict[str, Any]: ...

    def get_shard_iterator(self, **kwargs: Any) -> dict[str, Any]: ...

    def get_records(self, **kwargs: Any) -> dict[str, Any]: ...


@dataclass
class _Shard:
    id: str
    parent: str | None
    iterator: str | None = None
    last: str | None = None
    """The sequence number of the last record read, to ask for a new iterator after it."""
    done: bool = False
    """Read to its end (or closed before this reader started: older than its start)."""


class TableStream:
    """Reads every shard of a table's stream (``storage``'s table); ``start()`` then ``poll()`` or ``changes()``.

    ``client`` is a ``dynamodbstreams`` client; by default one is built with the storage's settings
    (region, endpoint, profile, session), and for a storage given a ready client, from that client's
    region and endpoint. ``rediscover`` is how often (seconds) the shards are described again besides
    when one ends. The calls are blocking (boto3): ``changes()`` runs them in a worker thread.
    """

    def __init__(self, storage: OnTable, *, client: StreamsClient | None = None,
                 rediscover: float = 60.0) -> None:
        self.storage = storage
        self.table = storage.table.name
        self._client = client
        self.rediscover = rediscover
        self.stream_arn: str | None = None
        self._shards: dict[str, _Shard] = {}
        self._described = 0.0

    @property
    def client(self) -> StreamsClient:
        if self._client is None:
            self._client = _make_client(self.storage.table)
        return self._client

    def _errors(self, action: str, passthrough: frozenset[str] = frozenset()
                ) -> contextlib.AbstractContextManager[None]:
        # The streams client has the same ``meta`` (region, endpoint) the error messages name.
        return translate_errors(self.table, cast("DynamoDBClient", self.client), action, passthrough)

    # -- finding the stream and its shards ------------------------------------------------------------

    def find_stream(self) -> str:
        """The ARN of the table's current stream; ``DynamoDBConfigError`` saying how to turn one on if none is."""
        with self._errors("ListStreams"):
            streams = self.client.list_streams(TableName=self.table).get("Streams", [])
        for stream in sorted(streams, key=lambda s: str(s.get("StreamLabel", "")), reverse=True):
            arn = str(stream["StreamArn"])
            with self._errors("DescribeStream"):
                status = self.client.describe_stream(StreamArn=arn, Limit=1)["StreamDescription"]["StreamStatus"]
            if status in ("ENABLED", "ENABLING"):
                return arn
        raise DynamoDBConfigError(
            f"DynamoDB table {self.table!r} has no stream, which `statehitl worker` reads to resume threads as "
            f"answers arrive: turn it on with `statehitl dynamodb create-table {self.table} --stream` (it keeps "
            "the table and adds a KEYS_ONLY stream), or run the worker with --once from a schedule",
            store=self.table, operation="ListStreams", code="NoStream",
        )

    def _describe(self) -> Iterator[dict[str, Any]]:
        assert self.stream_arn is not None
        kwargs: dict[str, Any] = {"StreamArn": self.stream_arn}
        while True:
            with self._errors("DescribeStream"):
                description = self.client.describe_stream(**kwargs)["StreamDescription"]
            yield from description.get("Shards", [])
            last = description.get("LastEvaluatedShardId")
            if not last:
                return
            kwargs["ExclusiveStartShardId"] = last

    def start(self) -> None:
        """Find the stream and position every shard open now at ``LATEST`` (iterators taken now, so every
        write from here on is read); shards already closed are older than this reader and are skipped."""
        self.stream_arn = self.find_stream()
        self._shards.clear()
        for shard in self._describe():
            found = _Shard(str(shard["ShardId"]), shard.get("ParentShardId"))
            self._shards[found.id] = found
            if "EndingSequenceNumber" in shard.get("SequenceNumberRange", {}):
                found.done = True
            else:
                found.iterator = self._iterator(found, "LATEST")
        self._described = time.monotonic()

    def _discover(self) -> None:
        """Describe the shards again: a shard not seen before is read from ``TRIM_HORIZON`` (all of it),
        once its parent, if this reader reads that too, is read to its end."""
        for shard in self._describe():
            shard_id = str(shard["ShardId"])
            if shard_id not in self._shards:
                self._shards[shard_id] = _Shard(shard_id, shard.get("ParentShardId"))
        self._described = time.monotonic()

    def _iterator(self, shard: _Shard, kind: str) -> str | None:
        kwargs: dict[str, Any] = {"StreamArn": self.stream_arn, "ShardId": shard.id, "ShardIteratorType": kind}
        if kind == "AFTER_SEQUENCE_NUMBER":
            kwargs["SequenceNumber"] = shard.last
        try:
            with self._errors("GetShardIterator", _ITERATOR_LOST):
                return cast(str | None, self.client.get_shard_iterator(**kwargs).get("ShardIterator"))
        except DynamoDBError:
            raise
        except Exception as exc:
            if error_code(exc) == "TrimmedDataAccessException" and kind == "AFTER_SEQUENCE_NUMBER":
                return self._iterator(shard, "TRIM_HORIZON")  # what followed it is gone: read what is left
            if error_code(exc) in _ITERATOR_LOST:  # the shard itself is gone (past the stream's 24 hours)
                shard.done = True
                return None
            raise

    def _ready(self, shard: _Shard) -> bool:
        """Whether ``shard`` may be read now: not done, and its parent (if this reader knows it) done."""
        if shard.done:
            return False
        parent = self._shards.get(shard.parent) if shard.parent else None
        return parent is None or parent.done

    # -- reading -------------------------------------------------------------------------------------

    def poll(self) -> list[Change]:
        """One ``GetRecords`` on every shard that can be read now; the keys written, in shard order."""
        if self.stream_arn is None:
            self.start()
        if time.monotonic() - self._described > self.rediscover:
            self._discover()
        changes: list[Change] = []
        ended = False
        for shard in list(self._shards.values()):
            if not self._ready(shard):
                continue
            if shard.iterator is None:
                shard.iterator = self._iterator(shard, "AFTER_SEQUENCE_NUMBER" if shard.last else "TRIM_HORIZON")
                if shard.iterator is None:
                    ended = True
                    continue
            records, shard.iterator = self._records(shard)
            for record in records:
                shard.last = str(record.get("dynamodb", {}).get("SequenceNumber", "")) or shard.last
                change = record_change(record)
                if change is not None:
                    changes.append(change)
            if shard.iterator is None and not shard.done:  # closed and read to its end: its children come next
                shard.done = ended = True
        if ended:
            self._discover()
        return changes

    def _records(self, shard: _Shard) -> tuple[list[dict[str, Any]], str | None]:
        """The next records of ``shard`` and the iterator after them (None: the shard ended)."""
        try:
            with self._errors("GetRecords", _ITERATOR_LOST):
                answer = self.client.get_records(ShardIterator=shard.iterator, Limit=1000)
        except DynamoDBError:
            raise
        except Exception as exc:
            code = error_code(exc)
            if code == "ExpiredIteratorException":  # unused for 15 minutes: a new one where it stood
                return [], self._iterator(shard, "AFTER_SEQUENCE_NUMBER" if shard.last else "TRIM_HORIZON")
            if code == "TrimmedDataAccessException":
                return [], self._iterator(shard, "TRIM_HORIZON")
            if code == "ResourceNotFoundException":  # the stream was replaced: find the table's current one
                self.start()
                return [], self._shards[shard.id].iterator if shard.id in self._shards else None
            raise
        return list(answer.get("Records", [])), answer.get("NextShardIterator")

    async def changes(self, *, idle: float = 0.05, stop: asyncio.Event | None = None
                      ) -> AsyncIterator[list[Change]]:
        """Batches of written keys as they arrive, until ``stop`` is set; waits ``idle`` seconds after a
        round that found nothing (each shard answers an empty ``GetRecords`` at once)."""
        if self.stream_arn is None:
            await asyncio.to_thread(self.start)
        while stop is None or not stop.is_set():
            found = await asyncio.to_thread(self.poll)
            if found:
                yield found
                continue
            if stop is None:
                await asyncio.sleep(idle)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), idle)


def _make_client(table: Table) -> StreamsClient:
    """A ``dynamodbstreams`` client with the table's settings, retrying as the table's client does."""
    import boto3
    from botocore.config import Config

    options, given = table.options, table.given_client  # one place knows how a client is set up
    config = Config(retries={"mode": "standard", "total_max_attempts": int(options.get("max_attempts") or 10)})
    region: str | None
    endpoint: str | None
    if given is not None:
        session = boto3.session.Session()
        region, endpoint = given.meta.region_name, given.meta.endpoint_url
        endpoint = endpoint if endpoint and "amazonaws.com" not in endpoint else None
    else:
        session = options.get("session") or boto3.session.Session(profile_name=options.get("profile_name"))
        region, endpoint = options.get("region_name"), options.get("endpoint_url")
    client: StreamsClient = session.client("dynamodbstreams", region_name=region, endpoint_url=endpoint,
                                           config=config)
    return client
