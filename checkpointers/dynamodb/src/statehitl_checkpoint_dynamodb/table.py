"""``create_table``: the one table ``DynamoDBStorage`` needs, with the right key schema.

Kept next to the storage so the schema is defined once; ``statehitl dynamodb create-table`` calls it.
Creating an existing table is not an error (deploy scripts run it every time), but one with another
key schema is, since every request would then fail.

``stream=True`` turns on the table's DynamoDB stream, which ``statehitl worker`` and its Lambda handler
read to resume a thread the moment an answer is written (``streams.py``). Its view type is
``KEYS_ONLY`` (``STREAM_VIEW``): the worker needs only which key was written (an answer, an index
entry) and reads what it acts on with a strongly consistent read anyway, since a stream record may be
seconds old and redelivered. ``NEW_IMAGE`` would put every checkpoint's whole value (up to ~390 KB, the
conversation and state of every step) into the stream, which keeps it 24 hours and hands it to every
reader, and would make a Lambda batch of large records run into the 6 MB invocation limit; for the one
read it saves (an index entry's value, a few hundred bytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from statehitl_checkpoint_dynamodb._client import error_code, make_client, translate_errors
from statehitl_checkpoint_dynamodb._url import check_table_name
from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


KEY_SCHEMA: tuple[dict[str, str], ...] = (
    {"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "sk", "KeyType": "RANGE"},
)
"""Partition key ``pk`` (a key up to its last ``/``: a thread), sort key ``sk`` (the last segment)."""

STREAM_VIEW: Final = "KEYS_ONLY"
"""The stream view type ``create_table(stream=True)`` sets (see the module docstring for why)."""


def _client(client_or_kwargs: DynamoDBClient | Mapping[str, Any] | None, table: str) -> DynamoDBClient:
    if client_or_kwargs is None:
        return make_client(table=table)
    if isinstance(client_or_kwargs, Mapping):
        return make_client(**dict(client_or_kwargs), table=table)
    return client_or_kwargs


def create_table(
    client_or_kwargs: DynamoDBClient | Mapping[str, Any] | None,
    table_name: str,
    billing_mode: Literal["PAY_PER_REQUEST", "PROVISIONED"] = "PAY_PER_REQUEST",
    ttl_attribute: str | None = None,
    *,
    read_capacity: int = 5,
    write_capacity: int = 5,
    wait: bool = True,
    stream: bool = False,
) -> bool:
    """Create the checkpoint table ``table_name``; True if it was created, False if it already existed.

    ``client_or_kwargs`` is a boto3 DynamoDB client, or keyword arguments for building one
    (``{"region_name": "eu-west-1", "endpoint_url": ...}``), or None for the default AWS setup.
    ``billing_mode="PROVISIONED"`` uses ``read_capacity`` / ``write_capacity`` units. ``ttl_attribute``
    turns on DynamoDB TTL for that attribute (pair it with ``DynamoDBStorage(ttl_seconds=...)``). With
    ``wait`` it returns once the table is ACTIVE. ``stream`` turns on its DynamoDB stream (``KEYS_ONLY``)
    for ``statehitl worker``; on an existing table without one it is turned on (``UpdateTable``), and a
    stream the table already has is kept whatever its view type, since every view type carries the keys.
    Needs dynamodb:CreateTable, DescribeTable, (for TTL) UpdateTimeToLive and (to add a stream to an
    existing table) UpdateTable.
    """
    check_table_name(table_name)
    if billing_mode not in ("PAY_PER_REQUEST", "PROVISIONED"):
        raise DynamoDBConfigError(f"billing_mode must be PAY_PER_REQUEST or PROVISIONED, got {billing_mode!r}",
                                  store=table_name, code="InvalidOption")
    client = _client(client_or_kwargs, table_name)
    extra: dict[str, Any] = {}
    if billing_mode == "PROVISIONED":
        extra["ProvisionedThroughput"] = {"ReadCapacityUnits": read_capacity, "WriteCapacityUnits": write_capacity}
    if stream:
        extra["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": STREAM_VIEW}
    from botocore.exceptions import ClientError

    try:
        with translate_errors(table_name, client, "CreateTable", frozenset({"ResourceInUseException"})):
            client.create_table(
                TableName=table_name,
                KeySchema=[dict(k) for k in KEY_SCHEMA],  # type: ignore[misc]
                AttributeDefinitions=[
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                ],
                BillingMode=billing_mode,
                **extra,
            )
        created = True
    except ClientError as exc:  # ResourceInUseException: it exists (or is being created) already
        if error_code(exc) != "ResourceInUseException":
            raise
        created = False
    if wait or not created:
        with translate_errors(table_name, client, "DescribeTable"):
            client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
    if not created:
        _check_schema(client, table_name)
        if stream:
            enable_stream(client, table_name)
    if ttl_attribute is not None:
        _enable_ttl(client, table_name, ttl_attribute)
    return created


def _check_schema(client: DynamoDBClient, table_name: str) -> None:
    with translate_errors(table_name, client, "DescribeTable"):
        table = client.describe_table(TableName=table_name)["Table"]
    types = {d["AttributeName"]: d["AttributeType"] for d in table.get("AttributeDefinitions", [])}
    schema = [(k["AttributeName"], k["KeyType"], types.get(k["AttributeName"])) for k in table.get("KeySchema", [])]
    if schema != [("pk", "HASH", "S"), ("sk", "RANGE", "S")]:
        raise DynamoDBConfigError(
            f"DynamoDB table {table_name!r} exists with key schema {schema}; statehitl needs partition key "
            "'pk' (S) and sort key 'sk' (S): use another table name or delete that table",
            store=table_name, operation="DescribeTable", code="KeySchemaMismatch",
        )


def enable_stream(client: DynamoDBClient, table_name: str) -> bool:
    """Turn on the table's stream (``KEYS_ONLY``) unless it has one; True if this call turned it on.

    Waits until the table is ACTIVE again, so a worker started right after finds the stream.
    """
    with translate_errors(table_name, client, "DescribeTable"):
        spec = client.describe_table(TableName=table_name)["Table"].get("StreamSpecification", {})
    if spec.get("StreamEnabled"):
        return False
    with translate_errors(table_name, client, "UpdateTable"):
        client.update_table(TableName=table_name,
                            StreamSpecification={"StreamEnabled": True, "StreamViewType": STREAM_VIEW})
    with translate_errors(table_name, client, "DescribeTable"):
        client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
    return True


def _enable_ttl(client: DynamoDBClient, table_name: str, attribute: str) -> None:
    with translate_errors(table_name, client, "DescribeTimeToLive"):
        current = client.describe_time_to_live(TableName=table_name).get("TimeToLiveDescription", {})
    if current.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        if current.get("AttributeName") != attribute:
            raise DynamoDBConfigError(
                f"DynamoDB table {table_name!r} already has TTL on attribute {current.get('AttributeName')!r}; "
                f"use ttl_attribute={current.get('AttributeName')!r} in DynamoDBStorage, or change the table",
                store=table_name, operation="DescribeTimeToLive", code="TimeToLiveMismatch",
            )
        return
    with translate_errors(table_name, client, "UpdateTimeToLive"):
        client.update_time_to_live(
            TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute}
        )
