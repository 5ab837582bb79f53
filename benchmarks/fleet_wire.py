"""What bench_fleet.py's workers send to and receive from AWS, counted on the wire, and what it would cost.

`WireCounter` hangs on a boto3 client's own events, so it sees exactly what botocore sends: every HTTP
request (retries included, `before-send`), its body, and the response's body (`response-received`).
For DynamoDB it also adds up the capacity units each call consumes (`before-parameter-build` gives the
API parameters, `after-call` the parsed answer) with DynamoDB's published sizing rules, since DynamoDB
Local does not report consumed capacity unless asked, and asking would change the requests counted.
`cost_per_million_turns` turns those counts into dollars with the public prices in `PRICES`.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

PRICES = {
    "date": "2026-12-03",
    "dynamodb_on_demand_us_east_1": {
        "write_request_unit_per_million": 0.625,
        "read_request_unit_per_million": 0.125,
    },
    "s3_standard_us_east_1": {
        "put_copy_post_list_per_1000": 0.005,
        "get_select_and_other_per_1000": 0.0004,
        "delete": 0.0,
    },
}
"""Public AWS list prices (us-east-1), as looked up on the date above; benchmarks/README.md cites the sources.

DynamoDB on-demand (Standard table class, since the price cut of 2024-11-01): a write request unit
covers one write of up to 1 KB, a read request unit one strongly consistent read of up to 4 KB (or two
eventually consistent ones). S3 Standard: PUT, COPY, POST and LIST requests, and GET and all other
requests, per 1,000; DELETE is free. Storage and data transfer (free inside a region) are left out:
they depend on retention, not on the turns."""

S3_WRITE_CLASS = {"PutObject", "CopyObject", "PostObject", "ListObjects", "ListObjectsV2", "ListObjectVersions",
                  "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"}
S3_FREE = {"DeleteObject", "DeleteObjects"}


# --------------------------------------------------------------------------- DynamoDB item sizes and units


def attribute_size(value: dict[str, Any]) -> int:
    """The size DynamoDB bills for one typed attribute value (its documented item-size rules)."""
    (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "B":
        return len(inner)
    if kind == "N":
        digits = inner.lstrip("-").replace(".", "").lstrip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode()) for s in inner)
    if kind == "BS":
        return sum(len(b) for b in inner)
    if kind == "NS":
        return sum(attribute_size({"N": n}) for n in inner)
    if kind == "L":
        return 3 + sum(1 + attribute_size(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + attribute_size(v) for k, v in inner.items())
    raise ValueError(f"unknown DynamoDB attribute type {kind!r}")


def item_size(item: dict[str, Any]) -> int:
    """Attribute names plus values: what DynamoDB rounds up to 1 KB per write unit and 4 KB per read unit."""
    return sum(len(name.encode()) + attribute_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def read_units(size: int, consistent: bool) -> float:
    units = max(1, math.ceil(size / 4096))
    return units if consistent else units / 2


def dynamodb_units(operation: str, params: dict[str, Any], parsed: dict[str, Any]) -> tuple[float, float]:
    """(write units, read units) one DynamoDB call consumes, from its parameters and its parsed answer.

    A conditional write that fails still consumes the write units of the item it tried to write, and a
    read of a missing item still costs one read unit. A deleted item's size is not known to the caller,
    so a delete counts one unit (the minimum).
    """
    consistent = bool(params.get("ConsistentRead"))
    if operation == "PutItem":
        return write_units(item_size(params["Item"])), 0.0
    if operation in ("DeleteItem", "UpdateItem"):
        return 1.0, 0.0
    if operation == "BatchWriteItem":
        units = 0
        for requests in params["RequestItems"].values():
            for request in requests:
                put = request.get("PutRequest")
                units += write_units(item_size(put["Item"])) if put else 1
        return float(units), 0.0
    if operation == "GetItem":
        found = parsed.get("Item")
        return 0.0, read_units(item_size(found) if found else 0, consistent)
    if operation in ("Query", "Scan"):
        return 0.0, read_units(sum(item_size(i) for i in parsed.get("Items", [])), consistent)
    if operation == "BatchGetItem":
        total = 0.0
        for table, items in parsed.get("Responses", {}).items():
            strong = bool(params["RequestItems"].get(table, {}).get("ConsistentRead"))
            total += sum(read_units(item_size(i), strong) for i in items)
        return 0.0, total
    if operation == "TransactWriteItems":
        units = 0
        for entry in params["TransactItems"]:
            put = entry.get("Put")
            units += 2 * (write_units(item_size(put["Item"])) if put else 1)
        return float(units), 0.0
    return 0.0, 0.0  # DescribeTable, CreateTable, ...: control-plane calls, not billed per request


# --------------------------------------------------------------------------- the counter


@dataclass
class Wire:
    """Traffic of one client (or several) over some stretch of work; `+` adds two stretches."""

    requests: Counter[str] = field(default_factory=Counter)
    """HTTP sends by `service.Operation`, retries included."""
    bytes_sent: int = 0
    bytes_received: int = 0
    write_units: float = 0.0
    read_units: float = 0.0

    def __add__(self, other: Wire) -> Wire:
        return Wire(self.requests + other.requests, self.bytes_sent + other.bytes_sent,
                    self.bytes_received + other.bytes_received, self.write_units + other.write_units,
                    self.read_units + other.read_units)

    def to_json(self) -> dict[str, Any]:
        return {"requests": dict(self.requests), "bytes_sent": self.bytes_sent, "bytes_received": self.bytes_received,
                "write_units": self.write_units, "read_units": self.read_units}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Wire:
        return cls(Counter(data["requests"]), data["bytes_sent"], data["bytes_received"], data["write_units"],
                   data["read_units"])

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())


def _body_size(body: Any, headers: Any) -> int:
    """Bytes of a request or response body: its length, or for a stream the length its headers declare."""
    if body is None:
        return 0
    if isinstance(body, bytes | bytearray):
        return len(body)
    if isinstance(body, str):
        return len(body.encode())
    for name in ("X-Amz-Decoded-Content-Length", "Content-Length", "content-length"):
        value = headers.get(name) if headers is not None else None
        if value is not None:
            return int(value)
    return 0


class WireCounter:
    """Counts one or more boto3 clients' HTTP traffic and DynamoDB capacity units, from botocore's events."""

    def __init__(self) -> None:
        self.wire = Wire()
        self._lock = threading.Lock()  # the backends run boto3 calls in worker threads

    def attach(self, client: Any) -> None:
        events = client.meta.events
        service = client.meta.service_model.service_id.hyphenize()
        events.register(f"before-send.{service}.*", self._on_send)
        events.register(f"response-received.{service}.*", self._on_response)
        if service == "dynamodb":
            events.register("before-parameter-build.dynamodb.*", self._on_params)
            events.register("after-call.dynamodb.*", self._on_dynamodb_answer)

    def take(self) -> Wire:
        """What was counted since the last take, and start afresh."""
        with self._lock:
            wire, self.wire = self.wire, Wire()
        return wire

    def _on_send(self, event_name: str, request: Any, **_: Any) -> None:
        _, service, operation = event_name.split(".")
        size = _body_size(request.body, request.headers)
        with self._lock:
            self.wire.requests[f"{service}.{operation}"] += 1
            self.wire.bytes_sent += size

    def _on_response(self, response_dict: dict[str, Any] | None = None, **_: Any) -> None:
        if response_dict is None:  # no answer (a connection error): nothing received
            return
        size = _body_size(response_dict.get("body"), response_dict.get("headers"))
        with self._lock:
            self.wire.bytes_received += size

    @staticmethod
    def _on_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["fleet_params"] = params

    def _on_dynamodb_answer(self, event_name: str, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        writes, reads = dynamodb_units(event_name.rsplit(".", 1)[-1], context.get("fleet_params", {}), parsed)
        with self._lock:
            self.wire.write_units += writes
            self.wire.read_units += reads


# --------------------------------------------------------------------------- dollars


def cost_per_million_turns(backend: str, wire: Wire, turns: int) -> float | None:
    """Request charges of `turns` turns' traffic, scaled to a million turns; None for the file store.

    DynamoDB's capacity units and S3's requests are both priced, so a DynamoDB saver that offloads big
    payloads to S3 pays for both.
    """
    if backend == "file" or turns <= 0:
        return None
    ddb = PRICES["dynamodb_on_demand_us_east_1"]
    s3 = PRICES["s3_standard_us_east_1"]
    dollars = (wire.write_units * ddb["write_request_unit_per_million"]
               + wire.read_units * ddb["read_request_unit_per_million"]) / 1e6
    for name, n in wire.requests.items():
        service, operation = name.split(".", 1)
        if service != "s3" or operation in S3_FREE:
            continue
        write_class = operation in S3_WRITE_CLASS
        per_1000 = s3["put_copy_post_list_per_1000"] if write_class else s3["get_select_and_other_per_1000"]
        dollars += n * per_1000 / 1000
    return dollars / turns * 1e6
