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


def test_bm25_search_on_s3_and_dynamodb_ranks_as_on_the_file_store(s3_server: str, s3_bucket: str,
                                                                   dynamodb_endpoint: str, dynamodb_table: str,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Any) -> None:
    """A store without a directory keeps its BM25 index in the file ``db_path`` names."""
    from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

    from statehitl.storage import LocalFileStorage
    from statehitl.storage.search import Bm25SearchStrategy, Bm25SearchStrategyConfig

    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    docs = {"a.md": b"token refresh flow for the server", "b.md": b"server setup", "c.md": b"refresh the page"}

    async def ranked(build: Any, strategy: Any) -> list[tuple[str, float]]:
        store = build(strategy)
        for key, value in docs.items():
            await store.write(key, value)
        found = [(r.key, r.score) for r in await store.search("refresh server")]
        await strategy.close()
        return found

    def indexed(name: str) -> Bm25SearchStrategy:
        return Bm25SearchStrategy(Bm25SearchStrategyConfig(db_path=str(tmp_path / f"{name}.sqlite")))

    on_file = asyncio.run(ranked(lambda s: LocalFileStorage(tmp_path / "files", search_strategy=s),
                                 Bm25SearchStrategy()))
    assert [key for key, _ in on_file] == ["a.md"]
    on_s3 = asyncio.run(ranked(lambda s: S3Storage(s3_bucket, prefix="bm25/", region_name=REGION,
                                                   endpoint_url=s3_server, search_strategy=s), indexed("s3")))
    on_dynamodb = asyncio.run(ranked(lambda s: DynamoDBStorage(dynamodb_table, region_name=REGION,
                                                               endpoint_url=dynamodb_endpoint, search_strategy=s),
                                     indexed("dynamodb")))
    assert on_s3 == on_dynamodb == on_file
