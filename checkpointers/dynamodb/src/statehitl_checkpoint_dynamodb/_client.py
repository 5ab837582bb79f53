"""The boto3 side: building a client, retrying what DynamoDB asks to retry, and turning its errors
into statehitl errors that say what to fix.

boto3 is imported only when a client is built, so ``import statehitl_checkpoint_dynamodb`` and
``storage_from_url`` stay cheap; it is also why the type of a client comes from the stubs, and only
while type checking.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from statehitl_checkpoint_dynamodb.errors import (
    REQUIRED_ACTIONS,
    DynamoDBAccessDeniedError,
    DynamoDBConfigError,
    DynamoDBError,
    DynamoDBTableNotFoundError,
    DynamoDBThrottledError,
    DynamoDBUnavailableError,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


BATCH_WRITE = 25
"""Items per ``BatchWriteItem`` (DynamoDB's limit)."""

BATCH_GET = 40
"""Keys per ``BatchGetItem``: DynamoDB allows 100 keys but 16 MB per answer, and a chunk is ~390 KB."""

_THROTTLED = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
}
_DENIED = {"AccessDeniedException", "AccessDenied", "UnrecognizedClientException", "InvalidSignatureException"}
_NO_CREDENTIALS = {"NoCredentialsError", "PartialCredentialsError"}
_UNAVAILABLE = {
    "InternalServerError",
    "InternalFailure",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "RequestTimeout",
    "RequestTimeoutException",
    "PriorRequestNotComplete",
}
"""Codes of a DynamoDB that failed to serve the request (besides any 5xx status): botocore retries them."""
_CONFIG_FAILURES = {"NoRegionError", "InvalidRegionError", "ProfileNotFound", "UnknownEndpointError",
                    "InvalidEndpointConfigurationError", "InvalidConfigError"}
"""botocore exceptions that mean the client was set up wrongly (besides ParamValidationError)."""
_UNPROCESSED_ATTEMPTS = 12
_SCHEMA_MISMATCH = ("key element does not match the schema", "number of conditions on the keys is invalid")


def make_client(
    *,
    session: Any = None,
    region_name: str | None = None,
    endpoint_url: str | None = None,
    profile_name: str | None = None,
    max_attempts: int = 10,
    table: str = "",
) -> DynamoDBClient:
    """A DynamoDB client whose retries cover throttling (``standard`` mode backs off exponentially).

    A session of its own per storage: boto3's default session is not safe to create clients from in
    several threads at once. The connection pool is sized for the worker threads that run requests.
    ``table`` only names the store in the error a client that cannot be built raises (an unknown
    profile, a malformed endpoint or region from the environment).
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError

    config = Config(retries={"mode": "standard", "total_max_attempts": max_attempts}, max_pool_connections=32)
    try:
        if session is None:
            session = boto3.session.Session(profile_name=profile_name)
        client: DynamoDBClient = session.client(
            "dynamodb", region_name=region_name, endpoint_url=endpoint_url, config=config
        )
    except (BotoCoreError, ValueError) as exc:  # botocore checks an endpoint URL with a plain ValueError
        raise DynamoDBConfigError(
            f"cannot build a DynamoDB client{f' for table {table!r}' if table else ''}: {exc}{_hint(exc)}",
            store=table, operation="CreateClient", code=type(exc).__name__,
        ) from exc
    return client


def retried(exc: BaseException | None) -> bool:
    """Whether botocore sent the request more than once before this answer, so that an earlier attempt,
    whose answer was lost, may have been carried out."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return False
    return int(response.get("ResponseMetadata", {}).get("RetryAttempts", 0) or 0) > 0


def _hint(exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "NoRegionError":
        return " (add ?region=... to the dynamodb:// URL, pass region_name=, or set AWS_REGION)"
    if name in _NO_CREDENTIALS:
        return " (configure AWS credentials: environment variables, ~/.aws/credentials, or an IAM role)"
    if name == "ProfileNotFound":
        return " (check the profile name, or drop ?profile= to use the default credentials)"
    if name in ("EndpointConnectionError", "ConnectTimeoutError"):
        return " (is the endpoint_url right and the server running?)"
    if name == "InvalidRegionError":
        return " (a region looks like eu-west-1)"
    if name == "ValueError":
        return " (an endpoint_url looks like https://dynamodb.eu-west-1.amazonaws.com or http://127.0.0.1:8000)"
    return ""


@contextlib.contextmanager
def translate_errors(table: str, client: DynamoDBClient, action: str,
                     passthrough: frozenset[str] = frozenset({"ConditionalCheckFailedException"})) -> Iterator[None]:
    """Turn every botocore error into a ``DynamoDBError`` naming the table, the action and what to do.

    Error codes in ``passthrough`` stay botocore ``ClientError``s for the caller to handle (by default
    ``ConditionalCheckFailedException``, which the caller turns into a ``CheckpointConflict``, or into
    success when the write it lost to was its own).
    """
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in passthrough:
            raise
        raise _translate_client_error(table, client, action, code, exc) from exc
    except BotoCoreError as exc:
        raise _translate_botocore_error(table, client, action, exc) from exc


def _translate_botocore_error(table: str, client: DynamoDBClient, action: str, exc: Exception) -> DynamoDBError:
    """What a request that got no answer from DynamoDB (or was never sent) means, as a statehitl error."""
    from botocore.exceptions import ConnectionError, HTTPClientError, ParamValidationError

    name = type(exc).__name__
    fields: dict[str, Any] = {"store": table, "operation": action, "code": name}
    where = _where(client)
    if name in _NO_CREDENTIALS:  # the same refusal as bad keys, found before sending
        return DynamoDBAccessDeniedError(
            f"no usable AWS credentials for DynamoDB table {table!r}{where} ({action}: {exc}){_hint(exc)}",
            **fields,
        )
    if isinstance(exc, ConnectionError | HTTPClientError):
        return DynamoDBUnavailableError(
            f"DynamoDB {action} on table {table!r}{where} got no answer, past every retry ({name}: {exc}): the "
            f"service or the network failed, and the same call may succeed later{_hint(exc)}", **fields,
        )
    if isinstance(exc, ParamValidationError) or name in _CONFIG_FAILURES:
        return DynamoDBConfigError(
            f"DynamoDB {action} on table {table!r}{where} was refused before it was sent ({name}): {exc}{_hint(exc)}",
            **fields,
        )
    return DynamoDBError(f"DynamoDB {action} on table {table!r}{where} failed ({name}): {exc}{_hint(exc)}", **fields)


def error_code(exc: BaseException) -> str:
    """The DynamoDB error code of a botocore ``ClientError`` ("" for anything else)."""
    response = getattr(exc, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _where(client: DynamoDBClient) -> str:
    region = client.meta.region_name
    endpoint = client.meta.endpoint_url
    if endpoint and "amazonaws.com" not in endpoint:
        return f" at {endpoint}"
    return f" in region {region}" if region else ""


def _translate_client_error(table: str, client: DynamoDBClient, action: str, code: str,
                            exc: Exception) -> DynamoDBError:
    where = _where(client)
    fields: dict[str, Any] = {"store": table, "operation": action, "code": code}
    response = getattr(exc, "response", {})
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    if code == "ResourceNotFoundException":
        return DynamoDBTableNotFoundError(
            f"DynamoDB table {table!r} does not exist{where}; create it with "
            f"`statehitl dynamodb create-table {table}` (or statehitl_checkpoint_dynamodb.create_table), "
            "or fix the table name / region in the dynamodb:// URL", **fields,
        )
    if code in _DENIED:
        actions = ", ".join(REQUIRED_ACTIONS)
        return DynamoDBAccessDeniedError(
            f"access denied to DynamoDB table {table!r}{where} ({action}: {exc}); the credentials in use need "
            f"an IAM policy allowing {actions} on arn:aws:dynamodb:<region>:<account>:table/{table}", **fields,
        )
    if code in _THROTTLED:
        return DynamoDBThrottledError(
            f"DynamoDB {action} on table {table!r} was still throttled after every retry ({code}); raise the "
            "table's provisioned capacity, switch it to on-demand (PAY_PER_REQUEST), or allow more retries "
            "(DynamoDBStorage(max_attempts=...))", **fields,
        )
    if code in _UNAVAILABLE or status >= 500:
        return DynamoDBUnavailableError(
            f"DynamoDB {action} on table {table!r}{where} failed on the service's side past every retry "
            f"({code or status}: {exc}); nothing says the store is misconfigured, and the same call may succeed "
            "later (allow more attempts with DynamoDBStorage(max_attempts=...))", **fields,
        )
    if code == "ValidationException" and any(m in str(exc) for m in _SCHEMA_MISMATCH):
        return DynamoDBConfigError(
            f"DynamoDB table {table!r}{where} has the wrong key schema for statehitl: it needs a partition key "
            "'pk' (S) and a sort key 'sk' (S); create a table with `statehitl dynamodb create-table`", **fields,
        )
    return DynamoDBError(f"DynamoDB {action} on table {table!r}{where} failed: {exc}", **fields)


def _backoff(attempt: int) -> None:
    """Full-jitter exponential backoff for items DynamoDB left unprocessed (it throttled part of a batch)."""
    time.sleep(random.uniform(0, min(2.0, 0.02 * 2**attempt)))


def batch_write(client: DynamoDBClient, table: str, requests: Sequence[Mapping[str, Any]]) -> None:
    """Send put/delete requests 25 at a time, retrying whatever DynamoDB returns as unprocessed."""
    for start in range(0, len(requests), BATCH_WRITE):
        pending: list[Any] = list(requests[start : start + BATCH_WRITE])
        for attempt in range(_UNPROCESSED_ATTEMPTS):
            with translate_errors(table, client, "BatchWriteItem"):
                answer = client.batch_write_item(RequestItems={table: pending})
            pending = list(answer.get("UnprocessedItems", {}).get(table, []))
            if not pending:
                break
            _backoff(attempt)
        else:
            raise DynamoDBThrottledError(
                f"DynamoDB left {len(pending)} writes on table {table!r} unprocessed after "
                f"{_UNPROCESSED_ATTEMPTS} tries; raise the table's capacity or use on-demand billing",
                store=table, operation="BatchWriteItem", code="UnprocessedItems",
            )


def batch_get(client: DynamoDBClient, table: str, keys: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Strongly consistent reads of ``keys`` (in any order), retrying unprocessed keys."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), BATCH_GET):
        pending: list[Any] = list(keys[start : start + BATCH_GET])
        for attempt in range(_UNPROCESSED_ATTEMPTS):
            with translate_errors(table, client, "BatchGetItem"):
                answer = client.batch_get_item(RequestItems={table: {"Keys": pending, "ConsistentRead": True}})
            found.extend(answer.get("Responses", {}).get(table, []))
            unprocessed = answer.get("UnprocessedKeys", {}).get(table)
            pending = list(unprocessed["Keys"]) if unprocessed else []
            if not pending:
                break
            _backoff(attempt)
        else:
            raise DynamoDBThrottledError(
                f"DynamoDB left {len(pending)} reads on table {table!r} unprocessed after "
                f"{_UNPROCESSED_ATTEMPTS} tries; raise the table's capacity or use on-demand billing",
                store=table, operation="BatchGetItem", code="UnprocessedKeys",
            )
    return found
