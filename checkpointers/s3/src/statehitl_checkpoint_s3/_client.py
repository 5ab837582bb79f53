"""Build the boto3 S3 client: retries that absorb throttling, a pool sized for concurrent steps.

boto3 costs a few hundred milliseconds to import, so it is imported here, when a store is built,
never when ``statehitl`` or this package is imported.
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from statehitl._echo import echo
from statehitl.errors import StorageConfigError

if TYPE_CHECKING:
    from boto3 import Session
    from mypy_boto3_s3 import S3Client


RetryMode = Literal["standard", "adaptive"]

_REGION = re.compile(r"^(?![0-9]+$)(?!-)[a-zA-Z0-9-]{1,63}(?<!-)$")
"""botocore's own rule for a region name, checked here so a typo fails with a message that says so."""


def check_client_options(*, region_name: str | None, endpoint_url: str | None, retries: int,
                         retry_mode: str) -> None:
    """Refuse options no client could use, with what a good one looks like, before botocore does
    (with a ``ValueError`` or an ``InvalidRegionError`` that name neither the option nor the store)."""
    if region_name is not None and (not isinstance(region_name, str) or not _REGION.fullmatch(region_name)):
        raise StorageConfigError(f"region {echo(region_name)} is not an AWS region name: use one like eu-west-1",
                                 code="InvalidOption")
    if endpoint_url is not None:
        parts = urlsplit(endpoint_url) if isinstance(endpoint_url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise StorageConfigError(
                f"endpoint_url {echo(endpoint_url, 200)} is not an http(s) URL: use one like http://127.0.0.1:5000 "
                "(an S3-compatible server) or https://s3.eu-west-1.amazonaws.com", code="InvalidOption",
            )
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 1:
        raise StorageConfigError(
            f"retries is the total number of attempts and must be at least 1, got {echo(retries)}", code="InvalidOption"
        )
    if retry_mode not in ("standard", "adaptive"):
        raise StorageConfigError(f"retry_mode must be 'standard' or 'adaptive', got {echo(retry_mode)}",
                                 code="InvalidOption")


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
    from botocore.exceptions import BotoCoreError

    check_client_options(region_name=region_name, endpoint_url=endpoint_url, retries=retries, retry_mode=retry_mode)
    if session is not None and profile:
        raise StorageConfigError("pass either session= or profile=, not both: a session already has its profile",
                                 code="InvalidOption")
    options: dict[str, Any] = {
        "retries": {"mode": retry_mode, "total_max_attempts": retries},
        "max_pool_connections": max_pool_connections,
    }
    if endpoint_url:
        options["s3"] = {"addressing_style": "path"}
    try:
        if session is None:
            session = boto3.Session(profile_name=profile) if profile else boto3.Session()
        client: S3Client = session.client(
            "s3", region_name=region_name, endpoint_url=endpoint_url, config=Config(**options)
        )
    except (BotoCoreError, ValueError) as exc:  # an unknown profile; an endpoint or region from AWS_* variables
        raise StorageConfigError(
            f"cannot build an S3 client: {exc} (check the profile, region and endpoint_url, and the AWS_* "
            "environment variables that set them)", operation="CreateClient", code=type(exc).__name__,
        ) from exc
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
