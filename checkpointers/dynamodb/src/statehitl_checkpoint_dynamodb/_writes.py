"""Writing one value: a conditional ``PutItem`` (the compare-and-set), its chunks first when it is over an
item's size, what a write whose answer was lost did, and sweeping the chunks a writer that died left.

Compare-and-set is ``attribute_not_exists(pk)`` to create, ``#v = :expected`` to replace, so of two
writers exactly one wins, across processes and machines. Every write has a fresh random version token,
which also names its chunks.
"""

from __future__ import annotations

import time
from typing import Any

from statehitl.checkpoint.storage import ABSENT
from statehitl.errors import CheckpointConflict
from statehitl_checkpoint_dynamodb._client import batch_write, retried
from statehitl_checkpoint_dynamodb._layout import new_token, split_key, split_value, token_chunks
from statehitl_checkpoint_dynamodb._table import Table, item_key, string
from statehitl_checkpoint_dynamodb.errors import DynamoDBError


def write_value(table: Table, key: str, data: bytes, expect: str) -> str:
    """Store ``data`` under ``key`` if its version is ``expect`` (or it is absent, for ``ABSENT``); the new
    version token. ``CheckpointConflict`` if the expectation fails."""
    pk, sk = split_key(key)
    now = time.time()
    expires = table.expiry(now)
    if expect == ABSENT or expires is not None:
        # A write over a version lands only on a live record, whose markers its writer put first, and
        # without TTL markers never expire: only creates (and TTL's renewals) need them. A worker
        # resuming threads it never saw saves a marker write per thread.
        table.register(pk, expires)
    head, chunks = split_value(bytes(data))
    token = new_token(len(chunks))
    stamp = {} if expires is None else {table.ttl_attribute: {"N": str(expires)}}
    mine = table.chunks_of(pk, sk, token)
    if chunks:
        batch_write(table.client, table.name, [
            {"PutRequest": {"Item": {**item_key(cpk, csk), "c": {"B": piece}, "at": {"N": str(int(now))}, **stamp}}}
            for (cpk, csk), piece in zip(mine, chunks, strict=True)
        ])
    item = {**item_key(pk, sk), "v": string(token), "d": {"B": head}, **stamp}
    names = {"#x": table.ttl_attribute}
    values: dict[str, Any] = {":now": {"N": str(int(now))}}
    if expect == ABSENT:
        condition = "attribute_not_exists(pk) OR #x <= :now"  # absent, or present but expired
    else:
        condition = "#v = :expect AND (attribute_not_exists(#x) OR #x > :now)"
        names["#v"] = "v"
        values[":expect"] = string(expect)
    from botocore.exceptions import ClientError

    try:
        with table.errors("PutItem"):
            answer = table.client.put_item(
                TableName=table.name, Item=item, ConditionExpression=condition, ExpressionAttributeNames=names,
                ExpressionAttributeValues=values, ReturnValues="ALL_OLD" if expect == ABSENT else "NONE",
            )
    except ClientError as exc:  # only ConditionalCheckFailedException gets past table.errors
        if retried(exc) and table.holds(pk, sk, token):
            return _written(table, pk, sk, expect, replaced=None, token=token)
        if mine:
            table.delete_items(mine, best_effort=True)
        if expect == ABSENT:
            raise CheckpointConflict(f"key {key!r} already exists") from None
        raise CheckpointConflict(f"key {key!r} changed since version {expect!r} was read") from None
    except DynamoDBError as exc:
        if not (exc.transient or retried(exc.__cause__)):
            raise  # refused as sent (a missing table, denied access): nothing landed
        if _landed(table, pk, sk, token):
            return _written(table, pk, sk, expect, replaced=None, token=token)
        # Not in the table now, but an attempt may still be in flight: the chunks stay for it (if it never
        # lands, sweep_orphan_chunks or TTL removes them), and the caller hears the outage.
        raise
    return _written(table, pk, sk, expect, replaced=answer.get("Attributes", {}).get("v", {}).get("S"), token=token)


def _landed(table: Table, pk: str, sk: str, token: str) -> bool:
    """After no answer past every retry (or an answer after a retry): whether an attempt landed.

    botocore retries a ``PutItem`` whose answer was lost (a timeout, a reset, a 500); if the lost attempt
    landed, the retry fails its condition against our own record, and a conflict would tell the engine
    that another process holds the thread (locking it for the lease). The record holding exactly our
    token means this write, chunks and all, is what is stored: the one extra request, only after a retry
    or an outage. A check that fails too counts as not landed.
    """
    try:
        return table.holds(pk, sk, token)
    except DynamoDBError:
        return False


def _written(table: Table, pk: str, sk: str, expect: str, *, replaced: str | None, token: str) -> str:
    """After our record went in: drop the chunks of the value it replaced (known from ``expect``, or for a
    create over an expired item from ``ReturnValues``), and return our token.

    A create whose answer was lost does not know what it replaced: the expired value's chunks, if it had
    any, are left to ``sweep_orphan_chunks`` and TTL (an expired item exists only with TTL on).
    """
    table.observed(pk)
    old = expect if expect != ABSENT else replaced
    if old is not None and token_chunks(old)[1]:
        table.delete_items(table.chunks_of(pk, sk, old), best_effort=True)
    return token


def sweep_orphan_chunks(table: Table, older_than: float) -> int:
    """Delete the chunks older than ``older_than`` seconds that no record refers to (a full table ``Scan``,
    then a ``GetItem`` per record they name); how many were deleted."""
    cutoff = time.time() - older_than
    owners: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    kwargs: dict[str, Any] = {
        "TableName": table.name,
        "ProjectionExpression": "pk, sk, #a",
        "ExpressionAttributeNames": {"#a": "at"},
        "FilterExpression": "begins_with(pk, :h) AND #a < :cutoff",
        "ExpressionAttributeValues": {":h": string("#"), ":cutoff": {"N": str(int(cutoff))}},
        "ConsistentRead": True,
    }
    while True:
        with table.errors("Scan"):
            answer = table.client.scan(**kwargs)
        for item in answer.get("Items", []):
            cpk, csk = item["pk"]["S"], item["sk"]["S"]
            name, _, rest = csk.partition("#")
            owners.setdefault((cpk[1:], name), []).append((cpk, csk, rest.partition("#")[0]))
        if "LastEvaluatedKey" not in answer:
            break
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    doomed: list[tuple[str, str]] = []
    for (pk, sk), chunks in owners.items():
        with table.errors("GetItem"):
            head = table.client.get_item(TableName=table.name, Key=item_key(pk, sk), ConsistentRead=True,
                                         ProjectionExpression="#v", ExpressionAttributeNames={"#v": "v"})
        current = token_chunks(head["Item"]["v"]["S"])[0] if "Item" in head else None
        doomed.extend((cpk, csk) for cpk, csk, write_id in chunks if write_id != current)
    table.delete_items(doomed)
    return len(doomed)
