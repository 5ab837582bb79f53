"""``statehitl.storage.S3Storage`` and ``DynamoDBStorage`` on the real local servers (moto_server, DynamoDB
Local): the storage program of ``tests/storage`` answers there as on Strands' in-memory store, and on S3
as on Strands' own ``S3Storage`` on the same server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import strands.storage as strands_storage
from strands.types.exceptions import StorageError as StrandsStorageError

from statehitl.errors import StorageConfigError, StorageError
from statehitl.storage import DynamoDBStorage, S3Storage
from storage_program import run

REGION = "us-east-1"


@pytest.fixture(scope="module")
def strands_outcomes() -> list[tuple[str, Any]]:
    return run(strands_storage.InMemoryStorage(), StrandsStorageError)


def test_s3_answers_as_strands_and_as_strands_own_s3_store(s3_server: str, s3_bucket: str, s3_admin: Any,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          strands_outcomes: list[tuple[str, Any]]) -> None:
    ours = run(S3Storage(s3_bucket, prefix="app/", region_name=REGION, endpoint_url=s3_server), StorageError)
    assert ours == strands_outcomes
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_server)  # Strands' store takes no endpoint: boto3 reads this
    theirs = run(strands_storage.S3Storage(s3_bucket, prefix="strands/", region_name=REGION), StrandsStorageError)
    assert theirs == ours
    objects = [o["Key"] for o in s3_admin.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    ours_objects = [key for key in objects if key.startswith("app/")]
    assert ours_objects
    assert all(key.startswith("app/_blobs/") and key.endswith("@") for key in ours_objects)


def test_dynamodb_answers_as_strands_in_memory_store(dynamodb_endpoint: str, dynamodb_table: str,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      strands_outcomes: list[tuple[str, Any]]) -> None:
    from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    store = DynamoDBStorage(dynamodb_table, prefix="tenant a", region_name=REGION, endpoint_url=dynamodb_endpoint)
    assert run(store, StorageError) == strands_outcomes
    other = DynamoDBStorage(dynamodb_table, prefix="tenant b", region_name=REGION, endpoint_url=dynamodb_endpoint)
    assert asyncio.run(other.list("")) == []  # a prefix keeps one user of the table from another
    assert store.prefix == "tenant=20a"


def test_a_botocore_config_builds_the_client_and_a_region_beside_a_session_is_refused(
        s3_server: str, s3_bucket: str, s3_session: Any) -> None:
    from botocore.config import Config

    store = S3Storage(s3_bucket, boto_session=s3_session, endpoint_url=s3_server,
                      boto_client_config=Config(connect_timeout=5, retries={"max_attempts": 2}))
    asyncio.run(store.write("k", b"v"))
    assert asyncio.run(store.read("k")) == b"v"
    assert store.backend.client.meta.config.connect_timeout == 5  # type: ignore[attr-defined]
    with pytest.raises(StorageConfigError, match="Cannot specify both region_name and boto_session"):
        S3Storage(s3_bucket, region_name=REGION, boto_session=s3_session)
