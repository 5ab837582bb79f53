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
