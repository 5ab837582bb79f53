"""Turn S3's error codes, and botocore's own failures, into statehitl errors that say what to fix.

botocore raises one ``ClientError`` for everything S3 answers, carrying S3's error code, and its own
exceptions for what never got an answer (a reset, a timeout, a refused connection) or was never sent
(a bucket name it refuses). A deployment that got the bucket name, the region, the credentials or the
IAM policy wrong should not have to decode ``An error occurred (AccessDenied) when calling the
PutObject operation``; it should read which bucket, which permission and where the policy is
documented, and a caller riding out an outage should be told it is one (``transient``). Every error is
one of statehitl's shared storage errors, so code that catches them works on DynamoDB and files too.
The tree::

    CheckpointError (statehitl.errors)
     ├── CheckpointConflict          a conditional write lost (412 PreconditionFailed, 409 ConditionalRequestConflict)
     └── StorageError                anything else S3 or botocore refused (``.store`` is the bucket)
          ├── StorageNotFoundError (LookupError)
          │    └── BucketNotFoundError          the bucket does not exist (or is not visible to these credentials)
          ├── StorageAccessError (PermissionError)   credentials, permissions, KMS key or region refused
          ├── StorageThrottledError               still throttled (503 SlowDown) after every retry (transient)
          ├── StorageUnavailableError             5xx, resets, timeouts past every retry (transient)
          └── StorageConfigError (ValueError)     a bucket name, URL or option no request could use

``StorageAccessError`` is exported here under the name it had before the shared errors existed, so
``except statehitl_checkpoint_s3.StorageAccessError`` keeps working. ``translate_client_error`` keeps
its contract (a configuration problem, or None); ``storage_error`` is the total one the store uses.
"""

from __future__ import annotations

from typing import Any

from statehitl._echo import echo
from statehitl.errors import (
    StorageAccessError,
    StorageConfigError,
    StorageError,
    StorageNotFoundError,
    StorageThrottledError,
    StorageUnavailableError,
)

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
UNAVAILABLE_CODES = frozenset(
    {"InternalError", "ServiceUnavailable", "RequestTimeout", "RequestTimeoutException", "500", "502", "503", "504"}
)
"""What S3 answers when it failed to serve the request (besides any 5xx status); botocore retries these."""
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


def _status(error: BaseException) -> int:
    """The HTTP status of a botocore ``ClientError`` (0 for anything else)."""
    response: Any = getattr(error, "response", None)
    if not isinstance(response, dict):
        return 0
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def storage_error(error: BaseException, *, bucket: str, operation: str, target: str) -> StorageError:
    """The statehitl error for any failure of an S3 request: what ``translate_client_error`` says for a
    configuration problem; else a 5xx, a reset, a timeout or a refused connection, past every retry, is
    ``StorageUnavailableError`` (transient); a request botocore refused to send (a bucket name it does not
    accept) is ``StorageConfigError``; anything else a plain ``StorageError`` naming S3's code.

    ``error`` is chained by the caller (``raise storage_error(exc, ...) from exc``).
    """
    from botocore.exceptions import (
        ConnectionError,
        HTTPClientError,
        NoCredentialsError,
        ParamValidationError,
        PartialCredentialsError,
    )

    translated = translate_client_error(error, bucket=bucket, operation=operation, target=target)
    if translated is not None:
        return translated
    code = error_code(error) or type(error).__name__
    fields: dict[str, Any] = {"store": bucket, "operation": operation, "code": code}
    if isinstance(error, NoCredentialsError | PartialCredentialsError):
        return StorageAccessError(
            f"no AWS credentials found for S3 bucket {bucket!r}: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with an IAM role; or pass session=/client=", **fields,
        )
    if isinstance(error, ConnectionError | HTTPClientError):
        hint = " (is endpoint_url right and the server running?)" if code == "EndpointConnectionError" else ""
        return StorageUnavailableError(
            f"S3 {operation} on {target!r} in bucket {bucket!r} got no answer, past every retry ({code}: {error})"
            f"{hint}: the service or the network failed, and the same call may succeed later", **fields,
        )
    if code in UNAVAILABLE_CODES or _status(error) >= 500:
        return StorageUnavailableError(
            f"S3 {operation} on {target!r} in bucket {bucket!r} failed on the service's side past every retry "
            f"({code}: {error}); nothing says the store is misconfigured, and the same call may succeed later "
            "(allow more attempts with ?retries=N)", **fields,
        )
    if isinstance(error, ParamValidationError):
        return StorageConfigError(
            f"S3 {operation} on bucket {echo(bucket)} was refused before it was sent: {error}", **fields,
        )
    return StorageError(f"S3 {operation} on {target!r} in bucket {bucket!r} failed ({code}): {error}", **fields)
