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
from statehitl_checkpoint_dynamodb._layout import join, token_chunks
from statehitl_checkpoint_dynamodb._table import Table


def scan_named(table: Table, prefix: str, name: str) -> dict[str, tuple[bytes, str]]:
    """Every live record whose key starts with ``prefix`` and whose last segment is ``name``, with its
    value and version token, by a strongly consistent filtered ``Scan`` (values over an item's size are
    read with their chunks)."""
    validate_prefix(prefix)
    kwargs: dict[str, Any] = {
        "TableName": table.name,
        "FilterExpression": "begins_with(#p, :p) AND #s = :n AND attribute_exists(#v)",
        "ProjectionExpression": "#p, #s, #v, #x, d",
        "ExpressionAttributeNames": {"#p": "pk", "#s": "sk", "#v": "v", "#x": table.ttl_attribute},
        "ExpressionAttributeValues": {":p": {"S": prefix}, ":n": {"S": name}},
        "ConsistentRead": True,
    }
    now = int(time.time())
    found: dict[str, tuple[bytes, str]] = {}
    while True:
        with table.errors("Scan"):
            answer = table.client.scan(**kwargs)
        for item in answer.get("Items", []):
            if table.expired(item, now):
                continue
            key, token = join(item["pk"]["S"], item["sk"]["S"]), item["v"]["S"]
            if token_chunks(token)[1]:
                if (whole := table.read(key)) is not None:
                    found[key] = whole
            else:
                found[key] = item.get("d", {}).get("B", b""), token
        if "LastEvaluatedKey" not in answer:
            return found
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
