"""The AWS side of the backend benchmarks: moto_server and DynamoDB Local on loopback, a bucket and a table.

``bench_backends.py`` and ``bench_fleet.py`` both run on these, started the way the tests start them
(``statehitl_checkpoint_s3.local``, ``statehitl_checkpoint_dynamodb.local``), with dummy credentials.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV, MotoServer

__all__ = ["DYNAMODB_LOCAL_DIR", "REGION", "aws_servers", "create_bucket_and_table"]

DYNAMODB_LOCAL_DIR = Path(__file__).resolve().parent.parent.parent / ".cache" / "dynamodb-local"
"""Where ``./dev.sh bench`` installs DynamoDB Local (as ``./dev.sh test`` does)."""
REGION = "us-east-1"


@contextlib.contextmanager
def aws_servers(workdir: Path) -> Iterator[tuple[str, str]]:
    """(S3 endpoint, DynamoDB endpoint): moto_server and DynamoDB Local, both stopped on the way out."""
    from statehitl_checkpoint_dynamodb.local import DynamoDBLocal

    for name in AWS_ENV_TO_CLEAR:
        os.environ.pop(name, None)
    os.environ.update(DUMMY_AWS_ENV)  # for both servers' clients, here and in any subprocess or worker
    with MotoServer(workdir / "moto_server.log") as s3_endpoint, DynamoDBLocal(DYNAMODB_LOCAL_DIR) as dynamodb_endpoint:
        yield s3_endpoint, dynamodb_endpoint


def create_bucket_and_table(s3_endpoint: str, dynamodb_endpoint: str, bucket: str, table: str) -> None:
    """An S3 bucket and a statehitl DynamoDB table (``create_table``) on the local servers."""
    import boto3
    from statehitl_checkpoint_dynamodb import create_table

    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name=REGION)
    s3.create_bucket(Bucket=bucket)
    s3.close()
    create_table({"region_name": REGION, "endpoint_url": dynamodb_endpoint}, table)
