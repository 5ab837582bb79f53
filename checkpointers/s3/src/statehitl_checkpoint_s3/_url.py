"""Parse ``s3://bucket/prefix?region=...`` into constructor arguments.

Kept apart from the storage class so the URL grammar is one small pure function, testable without
boto3, and so a typo in a query parameter fails loudly instead of being silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from statehitl._echo import echo
from statehitl.errors import StorageConfigError

URL_OPTIONS = ("region", "endpoint_url", "sse", "sse_kms_key_id", "profile", "retries", "retry_mode")
"""Query parameters ``from_url`` understands."""

_BUCKET = re.compile(r"^[a-zA-Z0-9.\-_]{1,255}$")
"""The widest bucket name botocore sends (legacy us-east-1 names had capitals and underscores): anything
else it refuses with a ``ParamValidationError`` at the first request, so it is refused here first."""
_URL_ECHO = 200
"""A URL is quoted whole up to this length: the mistake may be anywhere in its query."""


@dataclass(frozen=True)
class S3Url:
    """What an ``s3://`` URL says: where the objects live and how to reach them."""

    bucket: str
    prefix: str = ""
    region: str | None = None
    endpoint_url: str | None = None
    sse: str | None = None
    sse_kms_key_id: str | None = None
    profile: str | None = None
    retries: int | None = None
    retry_mode: str | None = None


def check_bucket_name(bucket: str) -> str:
    """A bare bucket name S3 could have, refused with what one looks like before any request is made."""
    if not isinstance(bucket, str) or not bucket or "/" in bucket:
        raise StorageConfigError(
            f"bucket must be a bare S3 bucket name, got {echo(bucket)}: the prefix goes in prefix= "
            "(or after the bucket in s3://BUCKET/PREFIX)", store=str(bucket), code="InvalidBucketName",
        )
    if not _BUCKET.fullmatch(bucket):
        raise StorageConfigError(
            f"{echo(bucket)} is not an S3 bucket name: use 3-63 lowercase letters, digits, '.' and '-', starting "
            "and ending with a letter or digit (e.g. my-checkpoints)", store=bucket, code="InvalidBucketName",
        )
    return bucket


def parse_s3_url(url: str) -> S3Url:
    """``s3://BUCKET[/PREFIX][?region=R&endpoint_url=URL&sse=AES256&sse_kms_key_id=K&profile=P&retries=N]``."""
    shown = echo(url, _URL_ECHO)
    parts = urlsplit(url)
    if parts.scheme != "s3" or not url.startswith("s3://"):
        raise StorageConfigError(f"not an s3:// URL: {shown}; use s3://BUCKET/PREFIX?region=eu-west-1")
    if not parts.netloc:
        raise StorageConfigError(f"the S3 URL {shown} names no bucket: use s3://BUCKET/PREFIX")
    bucket = check_bucket_name(parts.netloc)
    query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(query) - set(URL_OPTIONS))
    if unknown:
        raise StorageConfigError(
            f"unknown option(s) {echo(unknown)} in S3 URL {shown}; known: {', '.join(URL_OPTIONS)}", store=bucket
        )
    options: dict[str, str] = {}
    for name, values in query.items():
        if len(values) != 1 or not values[0]:
            raise StorageConfigError(
                f"option {name!r} in S3 URL {shown} needs exactly one non-empty value", store=bucket
            )
        options[name] = values[0]
    retries = options.pop("retries", None)
    if retries is not None and not retries.isdigit():
        raise StorageConfigError(
            f"retries in S3 URL {shown} must be a whole number of attempts, got {echo(retries)}", store=bucket
        )
    return S3Url(
        bucket=bucket,
        prefix=parts.path.strip("/"),
        retries=int(retries) if retries is not None else None,
        **options,
    )
