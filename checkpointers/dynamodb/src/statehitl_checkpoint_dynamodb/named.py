"""Every record of one name across many partitions, in one filtered table ``Scan``: a worker's index pass.

The thread index is one partition per thread (``index/<thread>``, holding ``entry`` and the thread's
audit and notification records), so reading every entry by partition is a ``Query`` per thread: 2,500
requests for 2,500 threads, which a worker would pay at every start. A ``Scan`` filtered to
``pk`` starting ``index/`` and ``sk = entry`` reads them in one request per megabyte of the table
instead: far fewer requests and far less time, at the price of read capacity for the whole table (the
filter is applied after the read). A container worker reads the index this way only when it starts (and
with ``--once``), so that price is paid rarely; the Lambda handler's scheduled pass pays it at every
tick of its schedule, which docs/workers.md says how to size.
"""

from __future__ import annotations

import time
from typing import Any

from statehitl.checkpoint.storage import validate_prefix
from statehitl_checkpoint_dynamodb._layout import join, split_key, token_chunks
from statehitl_checkpoint_dynamodb._table import Table

_FIRST_SHARE = 8
"""The first ``Scan`` of a page guesses one item in this many matches: a thread is its index entry, a few
records and markers (about 1 in 5 match for a thread stopped at its first step, fewer for longer ones).
Too low a guess costs another request; too high, items read past the page's end (1.4 x the table over
a whole listing paged by 1,000 at 1 in 8, measured on DynamoDB Local, against 1.25 x at 1 in 4)."""
MAX_SCAN = 10_000
"""Most items one ``Scan`` of a page evaluates (it stops at 1 MB before that if the items are large)."""


def _named_scan(table: Table, prefix: str, name: str) -> dict[str, Any]:
    """The arguments of a strongly consistent ``Scan`` for the live records named ``name`` under ``prefix``."""
    validate_prefix(prefix)
    return {
        "TableName": table.name,
        "FilterExpression": "begins_with(#p, :p) AND #s = :n AND attribute_exists(#v)",
        "ProjectionExpression": "#p, #s, #v, #x, d",
        "ExpressionAttributeNames": {"#p": "pk", "#s": "sk", "#v": "v", "#x": table.ttl_attribute},
        "ExpressionAttributeValues": {":p": {"S": prefix}, ":n": {"S": name}},
        "ConsistentRead": True,
    }


def _record(table: Table, item: dict[str, Any]) -> tuple[str, tuple[bytes, str] | None]:
    """The key of a scanned record and its value and token (read with its chunks when it has any; None if
    it was deleted since)."""
    key, token = join(item["pk"]["S"], item["sk"]["S"]), item["v"]["S"]
    if token_chunks(token)[1]:
        return key, table.read(key)
    return key, (item.get("d", {}).get("B", b""), token)


def scan_named(table: Table, prefix: str, name: str) -> dict[str, tuple[bytes, str]]:
    """Every live record whose key starts with ``prefix`` and whose last segment is ``name``, with its
    value and version token, by a strongly consistent filtered ``Scan`` (values over an item's size are
    read with their chunks)."""
    kwargs = _named_scan(table, prefix, name)
    now = int(time.time())
    found: dict[str, tuple[bytes, str]] = {}
    while True:
        with table.errors("Scan"):
            answer = table.client.scan(**kwargs)
        for item in answer.get("Items", []):
            if not table.expired(item, now) and (record := _record(table, item))[1] is not None:
                found[record[0]] = record[1]
        if "LastEvaluatedKey" not in answer:
            return found
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def scan_named_page(table: Table, prefix: str, name: str, limit: int,
                    after: str | None) -> list[tuple[str, bytes, str]]:
    """The next ``limit`` live records named ``name`` under ``prefix`` after the key ``after``, in the table's
    scan order, by filtered ``Scan`` requests from ``after`` as ``ExclusiveStartKey``.

    A filtered ``Scan`` evaluates ``Limit`` items and returns those that match, so each request asks to
    evaluate about as many items as the page still needs divided by the share of matching items seen so
    far (a guess of one in eight at first): a page of an inbox costs a few requests and reads items in
    proportion to the page, not the table. A page that fills in the middle of a response stops there; the
    next one starts after its last record, so nothing returned and dropped is lost.
    """
    kwargs = _named_scan(table, prefix, name)
    if after is not None:
        pk, sk = split_key(after)
        kwargs["ExclusiveStartKey"] = {"pk": {"S": pk}, "sk": {"S": sk}}
    now = int(time.time())
    found: list[tuple[str, bytes, str]] = []
    scanned = matched = 0
    while len(found) < limit:
        kwargs["Limit"] = _evaluate(limit - len(found), scanned, matched)
        with table.errors("Scan"):
            answer = table.client.scan(**kwargs)
        scanned, matched = scanned + answer.get("ScannedCount", 0), matched + answer.get("Count", 0)
        for item in answer.get("Items", []):
            if len(found) == limit:
                return found
            if not table.expired(item, now) and (record := _record(table, item))[1] is not None:
                found.append((record[0], *record[1]))
        if "LastEvaluatedKey" not in answer:
            break
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    return found


def _evaluate(wanted: int, scanned: int, matched: int) -> int:
    """How many items the next ``Scan`` should evaluate to find ``wanted`` more matches, given how many of
    the ``scanned`` items so far ``matched`` (a quarter more than the estimate, and a few to spare)."""
    share = 1 / _FIRST_SHARE if scanned == 0 else max(matched, 1) / scanned
    return max(wanted, min(MAX_SCAN, int(wanted / share * 1.25) + 8))
