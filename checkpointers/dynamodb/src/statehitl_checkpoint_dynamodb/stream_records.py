"""What one record of a table's DynamoDB stream says was written: its storage key and sequence number.

The stream carries each write as a record (``GetRecords``'s, or an AWS Lambda event's: the same shape);
this turns records into the storage keys written, leaving out deletes and the layout's own items
(partition markers, value chunks). The stream reader (``streams.TableStream``) and the worker's AWS
Lambda handler both read records through it. It imports nothing but the layout: a Lambda cold start
pays for no boto3 here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from statehitl_checkpoint_dynamodb._layout import is_marker, join


@dataclass(frozen=True, slots=True)
class Change:
    """A storage key written, and the stream sequence number of the write (Lambda retries by it)."""

    key: str
    sequence: str


def record_key(record: Mapping[str, Any]) -> str | None:
    """The storage key a stream record says was written (an ``INSERT`` or ``MODIFY``), from its ``Keys``.

    None for a delete (``REMOVE``: nothing to do), for the layout's partition markers and value chunks
    (no record of their own), and for anything that is not a record of this table's layout. Works on
    both shapes a record comes in: boto3's ``GetRecords`` and an AWS Lambda event.
    """
    if record.get("eventName") == "REMOVE":
        return None
    keys = record.get("dynamodb", {}).get("Keys", {})
    pk = keys.get("pk", {}).get("S")
    sk = keys.get("sk", {}).get("S")
    if not isinstance(pk, str) or not isinstance(sk, str) or not pk or not sk:
        return None
    if is_marker(sk) or pk.startswith("#"):
        return None
    return join(pk, sk)


def record_change(record: Mapping[str, Any]) -> Change | None:
    """The write a stream record stands for (``record_key``, with its sequence number), or None."""
    key = record_key(record)
    return None if key is None else Change(key, str(record.get("dynamodb", {}).get("SequenceNumber", "")))


def stream_changes(records: Iterable[Mapping[str, Any]]) -> list[Change]:
    """The writes a batch of stream records stands for, in order (an AWS Lambda event's ``Records``)."""
    return [change for record in records if (change := record_change(record)) is not None]
