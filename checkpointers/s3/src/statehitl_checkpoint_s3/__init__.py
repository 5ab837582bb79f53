"""S3 checkpoint storage for statehitl: one object per record, conditional writes for compare-and-set.

``Checkpointer.from_url("s3://bucket/prefix?region=eu-west-1")`` finds ``S3Storage`` through the
``statehitl.checkpointers`` entry point; ``S3Storage(bucket, prefix, client=...)`` builds it directly.
boto3 is imported only when a store is built, so importing this package stays cheap.
"""

from __future__ import annotations

from statehitl.errors import StorageAccessError
from statehitl_checkpoint_s3._errors import BucketNotFoundError, translate_client_error
from statehitl_checkpoint_s3._storage import S3Storage
from statehitl_checkpoint_s3._url import parse_s3_url

__all__ = ["BucketNotFoundError", "S3Storage", "StorageAccessError", "parse_s3_url", "translate_client_error"]
