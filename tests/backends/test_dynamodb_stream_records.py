"""A DynamoDB stream record read as the write it stands for (``stream_records``): what the stream reader and
the worker's AWS Lambda handler both act on. Plain data: no server needed."""

from __future__ import annotations

from typing import Any

from statehitl_checkpoint_dynamodb.stream_records import Change, record_change, stream_changes


def record(event: str, pk: str, sk: str, sequence: str = "1") -> dict[str, Any]:
    """A stream record as ``GetRecords`` and an AWS Lambda event both give it (``KEYS_ONLY``)."""
    return {"eventName": event, "dynamodb": {"Keys": {"pk": {"S": pk}, "sk": {"S": sk}}, "SequenceNumber": sequence}}


def test_writes_of_records_are_changes_and_the_layouts_own_items_are_not() -> None:
    records = [
        record("INSERT", "threads/t", "a.000000000001.i1", "100"),  # an answer
        record("MODIFY", "index/t", "entry", "101"),  # an index entry
        record("REMOVE", "threads/t", "999999999998", "102"),  # a delete: nothing to do
        record("INSERT", "threads", "t/", "103"),  # a partition marker
        record("INSERT", "#threads/t", "999999999998#w1#0", "104"),  # a value chunk
        {"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"N": "1"}}}},  # not this table's layout
    ]
    assert stream_changes(records) == [Change("threads/t/a.000000000001.i1", "100"), Change("index/t/entry", "101")]
    assert record_change(record("INSERT", "threads/t", "x")) == Change("threads/t/x", "1")
    assert record_change({"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "p"}, "sk": {"S": "s"}}}}) == \
        Change("p/s", "")  # a record without a sequence number (a test's own) still names its key


class _Worker:
    """What the Lambda handler's batch step uses of a worker: a thread of the batch failed transiently."""

    def __init__(self, retry: set[str]) -> None:
        self.keys: list[str] = []
        self.retry = retry
        self.notifier = self

    async def aapply_changes(self, keys: Any) -> Any:
        self.keys = list(keys)
        return type("Report", (), {"retry": self.retry, "counts": {}})()

    async def drain(self) -> None:
        return None


def test_the_lambda_handler_acts_on_the_changes_and_hands_back_the_first_record_of_a_thread_to_retry() -> None:
    import asyncio

    from statehitl.worker.lambda_function import _apply

    records = [record("INSERT", "threads/a", "a.000000000001.i1", "7"), record("INSERT", "threads", "a/", "8"),
               record("INSERT", "threads/b", "a.000000000002.i1", "9"), record("MODIFY", "index/b", "entry", "10")]
    worker = _Worker({"b"})
    assert asyncio.run(_apply(worker, records)) == {"batchItemFailures": [{"itemIdentifier": "9"}]}
    assert worker.keys == ["threads/a/a.000000000001.i1", "threads/b/a.000000000002.i1", "index/b/entry"]
    assert asyncio.run(_apply(_Worker(set()), records)) == {"batchItemFailures": []}
