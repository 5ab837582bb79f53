"""``statehitl s3 create-bucket`` against moto_server: created, then found already there; bad names and a
bucket of someone else's refused with what to fix."""

from __future__ import annotations

import pytest
from statehitl_checkpoint_s3.bucket import create_bucket
from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

from statehitl._sync import run_sync
from statehitl.checkpoint import Checkpointer
from statehitl.checkpoint.storage import ABSENT
from statehitl.cli import main
from statehitl.errors import StorageConfigError


@pytest.fixture(autouse=True)
def dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in AWS_ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)


def test_create_bucket_makes_a_bucket_a_store_can_use_and_is_idempotent(
        s3_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["s3", "create-bucket", "made-by-cli", "--region", "eu-west-1", "--endpoint-url", s3_server]) == 0
    hint = f"s3://made-by-cli/PREFIX?region=eu-west-1&endpoint_url={s3_server}"  # the endpoint kept: it reaches it
    assert capsys.readouterr().out == f"bucket 'made-by-cli' created; use it as {hint}\n"
    assert main(["s3", "create-bucket", "made-by-cli", "--region", "eu-west-1", "--endpoint-url", s3_server]) == 0
    assert "already exists (and is yours)" in capsys.readouterr().out
    store = Checkpointer.from_url(hint.replace("PREFIX", "app"))  # the URL printed, as a user pastes it
    run_sync(store.storage.write("threads/t/1", b"x", expect=ABSENT))
    assert run_sync(store.storage.list("threads/")) == ["threads/t/1"]
    assert create_bucket("made-in-us", region_name="us-east-1", endpoint_url=s3_server) is True


def test_a_bad_bucket_name_is_refused_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(StorageConfigError, match="is not an S3 bucket name"):
        create_bucket("Bad_Bucket", endpoint_url="http://127.0.0.1:9")  # nothing listens there: no request made
    assert main(["s3", "create-bucket", "Bad_Bucket"]) == 2
    assert "is not an S3 bucket name" in capsys.readouterr().err
