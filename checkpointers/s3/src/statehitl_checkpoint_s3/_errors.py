"""Turn S3's error codes into statehitl errors that say what to fix.

botocore raises one ``ClientError`` for everything, carrying S3's error code. A deployment that got
the bucket name, the region, the credentials or the IAM policy wrong should not have to decode
``An error occurred (AccessDenied) when calling the PutObject operation``; it should read which
bucket, which permission and where the policy is documented. The errors are statehitl's shared storage
errors, so code that catches them works on DynamoDB too. The tree::

    CheckpointError (statehitl.errors)
     ├── CheckpointConflict          a conditional write lost (412 PreconditionFailed, 409 ConditionalRequestConflict)
     └── StorageError                the store cannot be used as configured (``.store`` is the bucket)
          ├── StorageNotFoundError (LookupError)
          │    └── BucketNotFoundError          the bucket does not exist (or is not visible to these credentials)
          ├── StorageAccessError (PermissionError)   credentials, permissions, KMS key or region refused
          └── StorageThrottledError               still throttled (503 SlowDown) after every retry

``StorageAccessError`` is exported here under the name it had before the shared errors existed, so
``except statehitl_checkpoint_s3.StorageAccessError`` keeps working. Errors that are not about
configuration (a transient 500 that outlived the retries, a timeout) stay botocore's own exceptions:
there is nothing more specific to say about them.
"""

from __future__ import annotations

from typing import Any

from statehitl.errors import StorageAccessError, StorageError, StorageNotFoundError, StorageThrottledError

__all__ = [
    "CONFLICT_CODES",
    "PERMISSIONS",
    "BucketNotFoundError",
    "StorageAccessError",
    "access_error",
    "error_code",
    "translate_client_error",
]

CONFLICT_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})
"""Codes a conditional PutObject fails with when its expectation does not hold.

412 is the ordinary "the object exists / changed"; S3 answers 409 to the loser of two conditional
writes racing on one key, which for us is the same outcome: someone else's write came first.
"""

PERMISSIONS: dict[str, str] = {
    "GetObject": "s3:GetObject",
    "PutObject": "s3:PutObject",
    "ListObjectsV2": "s3:ListBucket",
    "DeleteObjects": "s3:DeleteObject",
}
"""The IAM action each S3 call we make needs, named in access-denied messages."""

_CREDENTIAL_CODES = frozenset(
    {"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired"}
)
_DENIED_CODES = frozenset({"AccessDenied", "AllAccessDisabled", "AccountProblem", "403", "Forbidden"})
_REGION_CODES = frozenset(
    {"PermanentRedirect", "AuthorizationHeaderMalformed", "301", "IllegalLocationConstraintException"}
)
_THROTTLED_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestThrottled", "RequestLimitExceeded",
     "TooManyRequestsException"}
)
"""What S3 (and S3-compatible servers) answer when asked to slow down; botocore retries these first."""
_DOCS = "see docs/backends.md for the minimal IAM policy"


class BucketNotFoundError(StorageNotFoundError):
    """The bucket named in the URL or constructor does not exist; ``store`` is its name."""


def error_code(error: BaseException) -> str:
    """S3's error code of a botocore ``ClientError`` (``""`` for anything else)."""
    response: Any = getattr(error, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", ""))


def translate_client_error(
    error: BaseException, *, bucket: str, operation: str, target: str
) -> StorageError | None:
    """The statehitl error for a configuration problem, or None if ``error`` is not one.

    ``operation`` is the S3 API call (``PutObject``), ``target`` what it was acting on (an object key
    or a listing prefix), so the message names the resource the IAM policy must cover.
    """
    return access_error(
        error_code(error), str(error), bucket=bucket, operation=operation, target=target, region=_region(error)
    )


def _region(error: BaseException) -> str | None:
    """The bucket's real region, when S3 says it (in the error body or the x-amz-bucket-region header)."""
    response: Any = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    region = response.get("Error", {}).get("Region") or (
        response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("x-amz-bucket-region")
    )
    return str(region) if region else None


def access_error(
    code: str, detail: str, *, bucket: str, operation: str, target: str, region: str | None = None
) -> StorageError | None:
    """``translate_client_error`` for a bare S3 error code (DeleteObjects reports errors per key).

    A bucket in another region is reported as ``StorageAccessError``: S3 refuses the request as
    signed (for the wrong region), and it was one before the shared errors, so ``except`` clauses
    written for it still catch it.
    """
    permission = PERMISSIONS.get(operation, f"s3:{operation}")

    def made(cls: type[StorageError], message: str) -> StorageError:
        return cls(f"{message} [{detail}]", store=bucket, operation=operation, code=code)

    if code == "NoSuchBucket":
        return made(
            BucketNotFoundError,
            f"S3 bucket {bucket!r} does not exist: create it (aws s3 mb s3://{bucket}) or fix the bucket "
            "name in the store URL; check the region and endpoint_url too",
        )
    if code in _CREDENTIAL_CODES:
        return made(
            StorageAccessError,
            f"S3 rejected the AWS credentials used for bucket {bucket!r} ({code}): check AWS_ACCESS_KEY_ID / "
            "AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN or the profile, and that the session token has not expired",
        )
    if code.startswith("KMS."):
        return made(
            StorageAccessError,
            f"S3 could not use the KMS key for bucket {bucket!r} ({code}) during {operation}: check "
            "sse_kms_key_id, and grant kms:GenerateDataKey (writes) and kms:Decrypt (reads) on that key",
        )
    if code in _DENIED_CODES:
        extra = ""
        if operation == "GetObject":
            extra = " (without s3:ListBucket, S3 answers AccessDenied instead of NoSuchKey for a missing key)"
        elif operation == "PutObject":
            extra = " (and kms:GenerateDataKey on the key when sse='aws:kms')"
        resource = f"arn:aws:s3:::{bucket}" if operation == "ListObjectsV2" else f"arn:aws:s3:::{bucket}/*"
        return made(
            StorageAccessError,
            f"access denied to S3 bucket {bucket!r}: {operation} on {target!r} needs {permission}{extra}; "
            f"grant it to the caller's IAM identity on {resource} ({_DOCS})",
        )
    if code in _REGION_CODES:
        where = f"region={region}" if region else "the bucket's region"
        return made(
            StorageAccessError,
            f"S3 bucket {bucket!r} is in another region than the client's ({code}): set {where} "
            "in the store URL (?region=...) or pass region_name=",
        )
    if code in _THROTTLED_CODES:
        return made(
            StorageThrottledError,
            f"S3 kept throttling {operation} on bucket {bucket!r} ({code}) through every retry: spread the "
            "load over more prefixes, or allow more attempts (?retries=N, retry_mode=adaptive)",
        )
    return None
