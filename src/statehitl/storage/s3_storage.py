"""``S3Storage``: Strands' S3 store, on statehitl's S3 backend (``statehitl-checkpoint-s3``).

Values are objects of ``bucket`` under ``prefix``, written with S3's conditional writes: the same
objects, requests and retries as the S3 checkpoint store, so an agent's snapshot sessions can live in
the same bucket. boto3 is imported when a store is built, not when this module is.
"""

from __future__ import annotations

from typing import Any

from statehitl.storage._aws import backend_module, check_session_options
from statehitl.storage.blob_store import BlobStore
from statehitl.storage.keys import encode_path, normalize_prefix
from statehitl.storage.search.types import SearchStrategy

__all__ = ["S3Storage"]


class S3Storage(BlobStore):
    """Bytes under string keys as objects of ``bucket``, under ``prefix``.

    Strands' arguments: ``region_name`` or a ``boto_session`` (not both), a botocore ``boto_client_config``,
    ``search_strategy``. Any other keyword goes to the S3 backend's store: ``endpoint_url=`` (an
    S3-compatible server), ``client=`` (a ready boto3 client), ``sse=``, ``retries=``...
    """

    def __init__(self, bucket: str, *, prefix: str = "", region_name: str | None = None, boto_session: Any = None,
                 boto_client_config: Any = None, search_strategy: SearchStrategy | None = None,
                 **options: Any) -> None:
        check_session_options(region_name, boto_session, options)
        s3 = backend_module("S3Storage", "statehitl_checkpoint_s3", "s3")
        key_prefix = encode_path(normalize_prefix(prefix).rstrip("/"))
        if boto_client_config is not None:
            options["client"] = _client(boto_session, region_name, boto_client_config, options)
            region_name = boto_session = None
        backend = s3.S3Storage(bucket, key_prefix, session=boto_session, region_name=region_name, **options)
        super().__init__(backend, search_strategy=search_strategy)
        self.bucket = bucket
        self.prefix = key_prefix


def _client(session: Any, region_name: str | None, config: Any, options: dict[str, Any]) -> Any:
    """A boto3 S3 client with the caller's botocore ``Config`` (the backend builds its own otherwise)."""
    import boto3

    endpoint = options.pop("endpoint_url", None)
    return (session or boto3.Session(region_name=region_name)).client("s3", config=config, endpoint_url=endpoint)
