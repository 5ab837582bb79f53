"""One ``except`` for both cloud backends: a missing bucket or table, and refused credentials or
permissions, raise statehitl's shared storage errors, from real servers on loopback (moto_server, an
IAM-enforcing moto_server, DynamoDB Local)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import statehitl_checkpoint_dynamodb
import statehitl_checkpoint_s3
from pydantic import BaseModel
from statehitl_checkpoint_dynamodb import DynamoDBStorage
from statehitl_checkpoint_s3 import S3Storage

from statehitl.checkpoint import Checkpointer, Storage
from statehitl.errors import (
    CheckpointError,
    StorageAccessError,
    StorageConfigError,
    StorageError,
    StorageNotFoundError,
    StorageThrottledError,
    StorageUnavailableError,
)
from statehitl.graph import END, START, StateGraph

REGION = "us-east-1"


@pytest.fixture(autouse=True)
def dummy_credentials(s3_server: str) -> None:
    """``s3_server`` puts dummy AWS credentials (and no real profile) in the environment for the session:
    every store here, DynamoDB's included, finds those the ordinary way."""


class S(BaseModel):
    n: int = 0


def invoke_on(checkpointer: Checkpointer) -> None:
    """What a user does: run a graph whose checkpointer is on the store."""
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    g.compile(checkpointer=checkpointer).invoke({}, thread_id="t")


@pytest.mark.parametrize(("backend", "code"), [("s3", "NoSuchBucket"), ("dynamodb", "ResourceNotFoundException")])
def test_a_missing_bucket_or_table_is_a_storage_not_found_error(backend: str, code: str,
                                                                 request: pytest.FixtureRequest) -> None:
    if backend == "s3":
        url = f"s3://no-such-bucket-anywhere/app?endpoint_url={request.getfixturevalue('s3_server')}"
    else:
        url = f"dynamodb://no-such-table?region={REGION}&endpoint_url={request.getfixturevalue('dynamodb_endpoint')}"
    with pytest.raises(StorageNotFoundError) as err:
        invoke_on(Checkpointer.from_url(url))
    assert isinstance(err.value, LookupError)
    assert isinstance(err.value, CheckpointError)
    assert err.value.store == url.split("://")[1].split("/")[0].split("?")[0]
    assert err.value.code == code
    assert err.value.operation  # the request that failed, named in the service's terms
    assert "does not exist" in str(err.value)


@pytest.fixture(params=["s3-unknown-key", "s3-no-permission", "dynamodb-unknown-key"])
def refused(request: pytest.FixtureRequest) -> Iterator[tuple[Storage, str]]:
    """A store whose requests the server refuses, and the error code it refuses them with."""
    import boto3

    if request.param.startswith("s3"):
        locked = request.getfixturevalue("s3_locked_server")
        if request.param == "s3-unknown-key":  # the session's dummy keys: no such IAM user on this server
            store = S3Storage(locked.bucket, "app", endpoint_url=locked.endpoint)
            code = "InvalidAccessKeyId"
        else:
            store = S3Storage(locked.bucket, "app", session=boto3.Session(**locked.nobody),
                              endpoint_url=locked.endpoint)
            code = "AccessDenied"
        yield store, code
        store.close()
        return
    client: Any = boto3.session.Session().client(
        "dynamodb", endpoint_url=request.getfixturevalue("dynamodb_endpoint"), region_name=REGION,
        aws_access_key_id="not-valid!", aws_secret_access_key="x")  # DynamoDB Local refuses such key ids
    yield DynamoDBStorage("any-table", client=client), "UnrecognizedClientException"
    client.close()


def test_refused_credentials_or_permissions_are_a_storage_access_error(refused: tuple[Storage, str]) -> None:
    storage, code = refused
    with pytest.raises(StorageAccessError) as err:
        invoke_on(Checkpointer(storage))
    assert isinstance(err.value, PermissionError)
    assert err.value.code == code
    assert err.value.store in ("locked-bucket", "any-table")
    with pytest.raises(StorageAccessError):
        asyncio.run(storage.list("threads/"))


def test_no_credentials_at_all_is_a_storage_access_error_on_both(monkeypatch: pytest.MonkeyPatch,
                                                                 s3_server: str, dynamodb_endpoint: str) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    for url in (f"s3://any-bucket?endpoint_url={s3_server}",
                f"dynamodb://any-table?region={REGION}&endpoint_url={dynamodb_endpoint}"):
        with pytest.raises(StorageAccessError, match="credentials") as err:
            invoke_on(Checkpointer.from_url(url))
        assert err.value.code in ("NoCredentials", "NoCredentialsError")


def test_the_backends_errors_are_the_shared_ones() -> None:
    # the S3 package's StorageAccessError is now the shared one, under its old name
    assert statehitl_checkpoint_s3.StorageAccessError is StorageAccessError
    assert issubclass(statehitl_checkpoint_s3.BucketNotFoundError, StorageNotFoundError)
    dynamodb = statehitl_checkpoint_dynamodb
    for specific, shared in [(dynamodb.DynamoDBTableNotFoundError, StorageNotFoundError),
                             (dynamodb.DynamoDBAccessDeniedError, StorageAccessError),
                             (dynamodb.DynamoDBThrottledError, StorageThrottledError),
                             (dynamodb.DynamoDBUnavailableError, StorageUnavailableError),
                             (dynamodb.DynamoDBConfigError, StorageConfigError)]:
        assert issubclass(specific, shared)
        assert issubclass(specific, dynamodb.DynamoDBError)  # except clauses written for the backend still match
        assert specific.transient is shared.transient
    assert issubclass(dynamodb.DynamoDBError, StorageError)  # one tree for every store
    assert dynamodb.DynamoDBError.transient is False
    assert issubclass(dynamodb.DynamoDBConfigError, ValueError)
    assert issubclass(StorageThrottledError, StorageError)
