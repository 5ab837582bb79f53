"""Build the boto3 S3 client: retries that absorb throttling, a pool sized for concurrent steps.

boto3 costs a few hundred milliseconds to import, so it is imported here, when a store is built,
never when ``statehitl`` or this package is imported.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from boto3 import Session
    from mypy_boto3_s3 import S3Client

__all__ = ["RetryMode", "make_client", "shared_client"]

RetryMode = Literal["standard", "adaptive"]


def make_client(
    *,
    session: Session | None,
    profile: str | None,
    region_name: str | None,
    endpoint_url: str | None,
    retries: int,
    retry_mode: RetryMode,
    max_pool_connections: int,
) -> S3Client:
    """A new S3 client from ``session`` (or a new one, optionally for ``profile``).

    ``retries`` is the total number of attempts per request, the first included (botocore's
    ``total_max_attempts``; its ``max_attempts`` key would count retries only): S3 answers a burst on
    one prefix with 503 SlowDown, and both retry modes back off on it; ``adaptive`` also rate-limits
    the client itself. A custom ``endpoint_url`` (MinIO, moto, other S3-compatible servers) gets
    path-style addressing, since ``bucket.localhost`` and bucket-as-subdomain of an IP do not resolve.
    """
    import boto3
    from botocore.config import Config

    if retries < 1:
        raise ValueError(f"retries is the total number of attempts and must be at least 1, got {retries!r}")
    if retry_mode not in ("standard", "adaptive"):
        raise ValueError(f"retry_mode must be 'standard' or 'adaptive', got {retry_mode!r}")
    if session is None:
        session = boto3.Session(profile_name=profile) if profile else boto3.Session()
    elif profile:
        raise ValueError("pass either session= or profile=, not both: a session already has its profile")
    options: dict[str, Any] = {
        "retries": {"mode": retry_mode, "total_max_attempts": retries},
        "max_pool_connections": max_pool_connections,
    }
    if endpoint_url:
        options["s3"] = {"addressing_style": "path"}
    client: S3Client = session.client(
        "s3", region_name=region_name, endpoint_url=endpoint_url, config=Config(**options)
    )
    return client


_shared: dict[tuple[Any, ...], S3Client] = {}
_shared_lock = threading.Lock()


def shared_client(**options: Any) -> S3Client:
    """The process's client for these ``make_client`` options, built once: a new boto3 session loads
    S3's service model again (tens of milliseconds), which a warm serverless instance would otherwise
    pay on every request that opens a store. Clients are thread-safe; the key includes the ``AWS_*``
    environment, so a process that changes its credentials or endpoint gets a new client.
    """
    environment = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_")))
    key = (tuple(sorted(options.items())), environment)
    with _shared_lock:
        client = _shared.get(key)
        if client is None:
            client = _shared[key] = make_client(session=None, **options)
        return client
