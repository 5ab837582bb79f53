"""``create_bucket``: make the bucket an ``s3://`` store needs, as ``create_table`` does for DynamoDB.

The S3 backend needs nothing of a bucket but that it exists and the caller may read, write, list and
delete in it, so setting one up is a single ``CreateBucket``; this exists so that a deployment (and the
``statehitl s3 create-bucket`` command) does not need the AWS CLI, and gets the same errors, which say
what to fix, as the store itself.
"""

from __future__ import annotations

import re

from statehitl._echo import echo
from statehitl.errors import StorageAccessError, StorageConfigError
from statehitl_checkpoint_s3._client import check_client_options, make_client
from statehitl_checkpoint_s3._errors import error_code, storage_error
from statehitl_checkpoint_s3._url import check_bucket_name

__all__ = ["create_bucket"]

_NEW_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
"""S3's rule for a bucket created today (stores also open older buckets whose names broke it)."""

_US_EAST_1 = "us-east-1"
"""The one region whose buckets are created without a location constraint (S3 refuses one naming it)."""


def create_bucket(bucket: str, *, region_name: str | None = None, endpoint_url: str | None = None,
                  profile_name: str | None = None) -> bool:
    """Create ``bucket``; True if it was created, False if it already exists and is the caller's.

    A bucket that exists and belongs to another account is ``StorageAccessError``; a malformed name or
    option is ``StorageConfigError`` before any request; every other failure is the store's own
    ``StorageError``.
    """
    check_bucket_name(bucket)
    if not _NEW_BUCKET.fullmatch(bucket) or ".." in bucket:
        raise StorageConfigError(
            f"{echo(bucket)} is not an S3 bucket name a new bucket may have: use 3-63 lowercase letters, digits, "
            "'.' and '-', starting and ending with a letter or digit", store=bucket, code="InvalidBucketName")
    check_client_options(region_name=region_name, endpoint_url=endpoint_url, retries=3, retry_mode="standard")
    client = make_client(session=None, profile=profile_name, region_name=region_name, endpoint_url=endpoint_url,
                         retries=3, retry_mode="standard", max_pool_connections=1)
    region = region_name or client.meta.region_name
    try:
        if region and region != _US_EAST_1:
            client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})  # type: ignore[typeddict-item]
        else:
            client.create_bucket(Bucket=bucket)
    except Exception as exc:
        code = error_code(exc)
        if code == "BucketAlreadyOwnedByYou":
            return False
        if code == "BucketAlreadyExists":
            raise StorageAccessError(
                f"S3 bucket {bucket!r} already exists and belongs to someone else: bucket names are global, "
                "choose another", store=bucket, operation="CreateBucket", code=code) from exc
        raise storage_error(exc, bucket=bucket, operation="CreateBucket", target=bucket) from exc
    finally:
        client.close()
    return True
