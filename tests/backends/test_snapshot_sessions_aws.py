"""``SnapshotSessionManager`` on S3 and DynamoDB (moto_server, DynamoDB Local): the time-travel program of
tests/session runs there as Strands' does on its own stores, with the agent's history kept as the
thread's checkpoints in the same bucket or table."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import strands.storage

from snapshot_sessions import time_travel
from statehitl.storage import DynamoDBStorage, S3Storage

REGION = "us-east-1"


@pytest.fixture(scope="module")
def strands_run(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    return time_travel("strands", strands.storage.LocalFileStorage(str(tmp_path_factory.mktemp("strands"))))


def test_on_s3_as_strands_on_its_own_s3_store(s3_server: str, s3_bucket: str, s3_admin: Any,
                                             monkeypatch: pytest.MonkeyPatch, strands_run: list[Any]) -> None:
    ours = S3Storage(s3_bucket, prefix="app", region_name=REGION, endpoint_url=s3_server)
    assert time_travel("statehitl", ours) == strands_run
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_server)
    assert time_travel("strands", strands.storage.S3Storage(s3_bucket, prefix="strands", region_name=REGION)) \
        == strands_run
    threads = [o["Key"] for o in s3_admin.list_objects_v2(Bucket=s3_bucket, Prefix="app/session/threads/")
               .get("Contents", [])]
    assert threads == []  # delete_session removed the thread's checkpoints too


def test_on_dynamodb_as_strands_on_its_stores(dynamodb_endpoint: str, dynamodb_table: str,
                                              monkeypatch: pytest.MonkeyPatch, strands_run: list[Any]) -> None:
    from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    ours = DynamoDBStorage(dynamodb_table, region_name=REGION, endpoint_url=dynamodb_endpoint)
    assert time_travel("statehitl", ours) == strands_run
    assert asyncio.run(ours.backend.list("")) == []  # nothing left: snapshots, checkpoints, index
