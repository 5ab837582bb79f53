"""Parse ``s3://bucket/prefix?region=...`` into constructor arguments.

Kept apart from the storage class so the URL grammar is one small pure function, testable without
boto3, and so a typo in a query parameter fails loudly instead of being silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

__all__ = ["URL_OPTIONS", "S3Url", "parse_s3_url"]

URL_OPTIONS = ("region", "endpoint_url", "sse", "sse_kms_key_id", "profile", "retries", "retry_mode")
"""Query parameters ``from_url`` understands."""


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


def parse_s3_url(url: str) -> S3Url:
    """``s3://BUCKET[/PREFIX][?region=R&endpoint_url=URL&sse=AES256&sse_kms_key_id=K&profile=P&retries=N]``."""
    parts = urlsplit(url)
    if parts.scheme != "s3":
        raise ValueError(f"not an s3:// URL: {url!r}")
    if not parts.netloc:
        raise ValueError(f"the S3 URL {url!r} names no bucket: use s3://BUCKET/PREFIX")
    query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(query) - set(URL_OPTIONS))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} in S3 URL {url!r}; known: {', '.join(URL_OPTIONS)}")
    options: dict[str, str] = {}
    for name, values in query.items():
        if len(values) != 1 or not values[0]:
            raise ValueError(f"option {name!r} in S3 URL {url!r} needs exactly one non-empty value")
        options[name] = values[0]
    retries = options.pop("retries", None)
    if retries is not None and not retries.isdigit():
        raise ValueError(f"retries in S3 URL {url!r} must be a whole number of attempts, got {retries!r}")
    return S3Url(
        bucket=parts.netloc,
        prefix=parts.path.strip("/"),
        retries=int(retries) if retries is not None else None,
        **options,
    )
