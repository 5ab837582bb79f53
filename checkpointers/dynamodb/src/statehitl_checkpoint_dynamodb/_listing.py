"""Listing, bulk reading and deleting keys: a ``Query`` per page of a partition, following the markers that
announce nested partitions depth first, or a full table ``Scan`` for a prefix without ``/``.

Requests, for the engine's keys (``threads/<t>/<slot>``, ``index/<t>``): ``list(prefix)`` is one ``Query``
per 1 MB page of the prefix's partition (``list(p, limit=1)`` is one request), plus one per nested
partition under it; a bulk read is the same ``Query`` with values; ``delete(prefix)`` is the listing,
then one ``BatchWriteItem`` per 25 items.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from statehitl.checkpoint.storage import validate_prefix
from statehitl_checkpoint_dynamodb._layout import ROOT, Entry, chunk_partition, is_marker, join, parent, token_chunks
from statehitl_checkpoint_dynamodb._table import Table, string


def query(table: Table, pk: str, begins: str, page: int | None, *, values: bool = False) -> Iterator[dict[str, Any]]:
    """The items of partition ``pk`` whose sort key starts with ``begins``, in order, page by page;
    their keys and versions, and with ``values`` their inline values too."""
    kwargs: dict[str, Any] = {
        "TableName": table.name,
        "KeyConditionExpression": "pk = :pk" + (" AND begins_with(sk, :b)" if begins else ""),
        "ExpressionAttributeValues": {":pk": string(pk), **({":b": string(begins)} if begins else {})},
        "ProjectionExpression": "sk, #v, #x, d" if values else "sk, #v, #x",
        "ExpressionAttributeNames": {"#v": "v", "#x": table.ttl_attribute},
        "ConsistentRead": True,
        "ScanIndexForward": True,
    }
    if page is not None:
        kwargs["Limit"] = page
    while True:
        with table.errors("Query"):
            answer = table.client.query(**kwargs)
        yield from answer.get("Items", [])
        if "LastEvaluatedKey" not in answer:
            return
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def walk(table: Table, pk: str, begins: str, *, limit: int | None, found: list[Entry],
         markers: list[tuple[str, str]] | None, now: int, values: bool = False) -> None:
    """Records under ``pk``/``begins`` in key order into ``found``, following markers depth first;
    with ``values``, each with the value its item holds inline.

    Expired records are included (flagged) only when ``markers`` is collected, i.e. for deletion.
    """
    live = False
    for item in query(table, pk, begins, None if limit is None else max(1, limit - len(found)), values=values):
        sk = item["sk"]["S"]
        if is_marker(sk):
            walk(table, join(pk, sk[:-1]), "", limit=limit, found=found, markers=markers, now=now, values=values)
            if markers is not None:
                markers.append((pk, sk))
        else:
            expired = table.expired(item, now)
            live = live or not expired
            if markers is not None or not expired:
                inline = item.get("d", {}).get("B", b"") if values else None
                found.append(Entry(join(pk, sk), pk, sk, item["v"]["S"], expired, inline))
        if limit is not None and len(found) >= limit:
            break
    if live:
        table.observed(pk)


def read_all(table: Table, prefix: str) -> dict[str, tuple[bytes, str]]:
    """One ``Query`` per megabyte of a partition (a thread's records), values included; a value
    split into chunks is read with them. A prefix without ``/`` is listed and read key by key."""
    validate_prefix(prefix)
    if "/" not in prefix:
        return {key: value for key, _ in list_keys(table, prefix, None) if (value := table.read(key)) is not None}
    pk, _, begins = prefix.rpartition("/")
    found: list[Entry] = []
    walk(table, pk, begins, limit=None, found=found, markers=None, now=int(time.time()), values=True)
    records: dict[str, tuple[bytes, str]] = {}
    for entry in found:
        if token_chunks(entry.token)[1]:  # the rare value over an item's size: read with its chunks
            if (whole := table.read(entry.key)) is not None:
                records[entry.key] = whole
        else:
            records[entry.key] = entry.inline or b"", entry.token
    return records


def scan(table: Table, prefix: str, *, everything: bool) -> Iterator[dict[str, Any]]:
    """Items whose key starts with ``prefix`` (no ``/`` in it) by a full table ``Scan``.

    With ``everything``, markers and chunks too (for deletion); else records only.
    """
    names: dict[str, str] = {"#p": "pk", "#s": "sk", "#v": "v", "#x": table.ttl_attribute}
    values: dict[str, Any] = {}
    clauses = []
    if prefix:
        values.update({":p": string(prefix), ":root": string(ROOT)})
        clauses.append("begins_with(#p, :p) OR (#p = :root AND begins_with(#s, :p))")
        if everything:
            values.update({":cp": string(chunk_partition(prefix)), ":croot": string(chunk_partition(ROOT))})
            clauses.append("begins_with(#p, :cp) OR (#p = :croot AND begins_with(#s, :p))")
    condition = " OR ".join(clauses)
    if not everything:
        condition = f"attribute_exists(#v) AND ({condition})" if condition else "attribute_exists(#v)"
    kwargs: dict[str, Any] = {
        "TableName": table.name,
        "ProjectionExpression": "#p, #s, #v, #x",
        "ExpressionAttributeNames": names,
        "ConsistentRead": True,
    }
    if condition:
        kwargs["FilterExpression"] = condition
    if values:
        kwargs["ExpressionAttributeValues"] = values
    while True:
        with table.errors("Scan"):
            answer = table.client.scan(**kwargs)
        yield from answer.get("Items", [])
        if "LastEvaluatedKey" not in answer:
            return
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def list_keys(table: Table, prefix: str, limit: int | None) -> list[tuple[str, str]]:
    """Keys with their version tokens: a ``Query`` (a ``Scan`` for a prefix without ``/``) projects both."""
    validate_prefix(prefix)
    if limit is not None and limit <= 0:
        return []
    now = int(time.time())
    if "/" not in prefix:
        keys = sorted(
            (join(item["pk"]["S"], item["sk"]["S"]), item["v"]["S"])
            for item in scan(table, prefix, everything=False)
            if not table.expired(item, now)
        )
        return keys[:limit]
    pk, _, begins = prefix.rpartition("/")
    found: list[Entry] = []
    walk(table, pk, begins, limit=limit, found=found, markers=None, now=now)
    return [(entry.key, entry.token) for entry in found[:limit]]


def delete(table: Table, prefix: str) -> int:
    """Delete every key under ``prefix`` (records, then their chunks, then the markers); how many records."""
    validate_prefix(prefix)
    now = int(time.time())
    if "/" not in prefix:
        return _delete_scanned(table, prefix, now)
    pk, _, begins = prefix.rpartition("/")
    found: list[Entry] = []
    markers: list[tuple[str, str]] = []
    walk(table, pk, begins, limit=None, found=found, markers=markers, now=now)
    if not begins and (up := parent(pk)) is not None:
        markers.append((up[0], up[1] + "/"))  # "p/c/" covers all of partition p/c: its marker goes too
    # Records first, then their chunks, then markers: at no point is a live record unlisted.
    table.delete_items([(e.pk, e.sk) for e in found])
    table.delete_items([chunk for e in found for chunk in table.chunks_of(e.pk, e.sk, e.token)])
    table.delete_items(markers)
    for up_pk, marker in markers:
        table.forget(join(up_pk, marker[:-1]))
    return sum(not e.expired for e in found)


def _delete_scanned(table: Table, prefix: str, now: int) -> int:
    """``delete`` of a prefix without ``/``: every item it scans, chunks and markers included."""
    records, others = [], []
    count = 0
    for item in scan(table, prefix, everything=True):
        pk, sk = item["pk"]["S"], item["sk"]["S"]
        if "v" in item:
            records.append((pk, sk))
            count += not table.expired(item, now)
        else:
            others.append((pk, sk))
    table.delete_items(records)
    table.delete_items(others)
    table.forget_prefix(prefix)
    return count
