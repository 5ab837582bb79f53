"""``S3Storage``: the four ``Storage`` primitives on one S3 bucket, one object per key.

S3 has had conditional writes since 2024, which is all the checkpoint engine needs from it:

- ``read``   = GetObject; the version token is the object's ETag.
- ``write``  = PutObject with ``If-None-Match: *`` (create once) or ``If-Match: <etag>`` (replace the
  value that was read). S3 evaluates the condition atomically, so of two writers exactly one wins and
  the other gets 412 (or 409 when they race), which becomes ``CheckpointConflict``.
- ``list``   = ListObjectsV2, page by page (S3 returns keys in byte order, which is the contract's);
  ``list_versions`` is the same listing with each object's ETag.
- ``delete`` = that listing, then DeleteObjects in batches of 1000 (S3's maximum per request).

boto3 is synchronous, so each primitive runs in a worker thread (``asyncio.to_thread``): the event
loop keeps serving other threads while S3 answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from statehitl._echo import echo
from statehitl.checkpoint.clock import watch_boto_client
from statehitl.checkpoint.storage import ABSENT, validate_key, validate_prefix
from statehitl.errors import (
    CheckpointConflict,
    InvalidThreadIdError,
    StorageConfigError,
    StorageError,
    StorageUnavailableError,
)
from statehitl_checkpoint_s3._client import RetryMode, make_client, shared_client
from statehitl_checkpoint_s3._errors import (
    CONFLICT_CODES,
    UNAVAILABLE_CODES,
    access_error,
    error_code,
    storage_error,
)
from statehitl_checkpoint_s3._url import check_bucket_name, parse_s3_url

if TYPE_CHECKING:
    from boto3 import Session
    from mypy_boto3_s3 import S3Client


T = TypeVar("T")

PAGE_SIZE = 1000
"""Most keys one ListObjectsV2 page returns."""
DELETE_BATCH = 1000
"""Most keys one DeleteObjects request may name."""
SSE_ALGORITHMS = ("AES256", "aws:kms", "aws:kms:dsse")
"""Server-side encryption S3 applies at rest, passed through on every PutObject (reads need nothing)."""
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


def _retried(error: BaseException | None) -> bool:
    """Whether botocore sent the request more than once before this error (so an earlier try may have landed)."""
    response: Any = getattr(error, "response", None)
    if not isinstance(response, dict):
        return False
    return int(response.get("ResponseMetadata", {}).get("RetryAttempts", 0) or 0) > 0


def _plausible_token(token: str) -> bool:
    """A token S3 could have issued as an ETag. Anything else can only conflict, and must never be sent:
    ``If-Match: *`` matches every object, ``"a", "b"`` matches either, and an empty header may be
    dropped, each turning a compare-and-set into an unconditional overwrite."""
    return bool(token.strip()) and token.isascii() and token.isprintable() and not any(c in token for c in "*,")


class S3Storage:
    """Checkpoint storage in an S3 bucket: key ``K`` is the object ``<prefix>/K``.

    Pass ``client`` to reuse a configured boto3 S3 client (its own retry settings then apply), or
    ``session`` (and optionally ``region_name``/``endpoint_url``) to build one from it; by default a
    new ``boto3.Session()`` finds credentials the usual way (environment, profile, instance role).
    ``endpoint_url`` points at an S3-compatible server (MinIO, moto) and switches to path-style
    addressing. ``sse``/``sse_kms_key_id`` set server-side encryption on every object written.
    ``retries`` is the total attempts per request (throttling included) in botocore's ``retry_mode``.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        client: S3Client | None = None,
        session: Session | None = None,
        profile: str | None = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        sse: str | None = None,
        sse_kms_key_id: str | None = None,
        retries: int = 8,
        retry_mode: RetryMode = "standard",
        max_pool_connections: int = 32,
    ) -> None:
        check_bucket_name(bucket)
        prefix = prefix.strip("/")
        if prefix:
            try:
                validate_key(prefix)
            except InvalidThreadIdError:
                raise StorageConfigError(
                    f"S3 prefix {echo(prefix)} is not allowed: use '/'-separated segments of letters, digits "
                    "and _ . : @ = + - (no empty or dot-leading segments)", store=bucket, code="InvalidPrefix",
                ) from None
        self.bucket = bucket
        self.prefix = prefix
        self._base = f"{prefix}/" if prefix else ""
        self._put_options = self._sse_options(sse, sse_kms_key_id)
        if client is not None:
            if session is not None or profile or region_name or endpoint_url:
                raise StorageConfigError(
                    "pass client= alone: session, profile, region_name and endpoint_url build a new one",
                    store=bucket, code="InvalidOption",
                )
            self.client = client
            self._owns_client = False
        else:
            options: dict[str, Any] = {
                "profile": profile, "region_name": region_name, "endpoint_url": endpoint_url,
                "retries": retries, "retry_mode": retry_mode, "max_pool_connections": max_pool_connections,
            }
            # The common case, from a URL or plain arguments, shares one client per process.
            self.client = shared_client(**options) if session is None else make_client(session=session, **options)
            self._owns_client = session is not None
        self.server_clock = watch_boto_client(self.client)
        """S3's clock, from the ``Date`` of its responses: the engine judges leases by it (``checkpoint/clock.py``)."""

    @property
    def cache_scope(self) -> str:
        """Which bucket and prefix this is, at which endpoint, for the engine's process-wide cache of warm
        threads."""
        return f"s3:{self.client.meta.endpoint_url}/{self.bucket}/{self.prefix}"

    @staticmethod
    def _sse_options(sse: str | None, kms_key_id: str | None) -> dict[str, str]:
        """PutObject's encryption arguments; a KMS key implies ``aws:kms``."""
        if kms_key_id and sse is None:
            sse = "aws:kms"
        if sse is not None and sse not in SSE_ALGORITHMS:
            raise StorageConfigError(f"sse must be one of {', '.join(SSE_ALGORITHMS)} (or None), got {echo(sse)}",
                                     code="InvalidOption")
        if kms_key_id and sse == "AES256":
            raise StorageConfigError("sse_kms_key_id needs sse='aws:kms' or 'aws:kms:dsse', not 'AES256'",
                                     code="InvalidOption")
        options = {"ServerSideEncryption": sse} if sse else {}
        if kms_key_id:
            options["SSEKMSKeyId"] = kms_key_id
        return options

    @classmethod
    def from_url(cls, url: str) -> S3Storage:
        """``s3://BUCKET/PREFIX?region=R&endpoint_url=URL&sse=AES256&sse_kms_key_id=K&profile=P&retries=N``."""
        parsed = parse_s3_url(url)
        options: dict[str, Any] = {}
        if parsed.retries is not None:
            options["retries"] = parsed.retries
        if parsed.retry_mode is not None:
            options["retry_mode"] = parsed.retry_mode
        return cls(
            parsed.bucket,
            parsed.prefix,
            profile=parsed.profile,
            region_name=parsed.region,
            endpoint_url=parsed.endpoint_url,
            sse=parsed.sse,
            sse_kms_key_id=parsed.sse_kms_key_id,
            **options,
        )

    def close(self) -> None:
        """Close the HTTP connections of a client this store created for itself (from a ``session=``);
        a passed-in client and the process-wide shared one stay open."""
        if self._owns_client:
            self.client.close()

    # -- helpers ----------------------------------------------------------------------------------

    def _object(self, key: str) -> str:
        return self._base + key

    def _call(self, operation: str, target: str, call: Callable[..., T], *,
              expected: frozenset[str] = frozenset(), **params: Any) -> T:
        """One S3 request; every failure becomes a ``StorageError`` subclass naming the bucket and request.

        ``ClientError``s whose code is in ``expected`` (a missing key, a failed condition) are re-raised
        as they are, for the caller, which knows what they mean there.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return call(Bucket=self.bucket, **params)
        except ClientError as exc:
            if error_code(exc) in expected:
                raise
            raise storage_error(exc, bucket=self.bucket, operation=operation, target=target) from exc
        except BotoCoreError as exc:
            raise storage_error(exc, bucket=self.bucket, operation=operation, target=target) from exc

    # -- sync implementations, each run in a worker thread ----------------------------------------

    def _unless_missing(self, operation: str, name: str, method: Callable[..., Any]) -> Any:
        """``method(Key=name)``'s response, or None when the object does not exist."""
        from botocore.exceptions import ClientError

        try:
            return self._call(operation, name, method, expected=_MISSING_CODES, Key=name)
        except ClientError:  # only the codes of a missing object get past _call
            return None

    def _read(self, name: str) -> tuple[bytes, str] | None:
        from botocore.exceptions import BotoCoreError

        response = self._unless_missing("GetObject", name, self.client.get_object)
        if response is None:
            return None
        try:
            with response["Body"] as body:
                data = body.read()
        except BotoCoreError as exc:  # the connection failed while the body streamed in
            raise storage_error(exc, bucket=self.bucket, operation="GetObject", target=name) from exc
        return data, response["ETag"]

    def _version(self, name: str) -> str | None:
        response = self._unless_missing("HeadObject", name, self.client.head_object)
        return None if response is None else str(response["ETag"])

    def _write(self, key: str, name: str, data: bytes, expect: str) -> str:
        from botocore.exceptions import ClientError

        condition = {"IfNoneMatch": "*"} if expect == ABSENT else {"IfMatch": expect}
        # If-Match on a key that does not exist: S3 answers 404 NoSuchKey rather than 412.
        lost = CONFLICT_CODES | (_MISSING_CODES if expect != ABSENT else frozenset())
        try:
            response = self._call(
                "PutObject", name, self.client.put_object, expected=lost, Key=name, Body=data, **condition,
                **self._put_options,
            )
        except ClientError as exc:  # only a failed condition gets past _call
            landed = self._landed(name, data) if _retried(exc) else None
            if landed is not None:
                return landed
            raise self._conflict(key, expect) from None
        except StorageError as exc:
            if not (exc.transient or _retried(exc.__cause__)):
                raise  # refused as sent (a missing bucket, denied access): nothing landed
            # No answer past every retry (or an answer after a retry): an attempt may have landed.
            try:
                landed = self._landed(name, data)
            except StorageError:
                landed = None
            if landed is not None:
                return landed
            raise
        return response["ETag"]

    def _landed(self, name: str, data: bytes) -> str | None:
        """The ETag of our own write, if an attempt of a PutObject whose outcome is unknown landed after all.

        botocore retries a PutObject whose response was lost (a timeout, a reset, a 500 after the write);
        the retry then fails its condition against the object the first attempt created, and reporting a
        conflict would make the engine think another process holds the thread. Or every attempt's answer
        was lost, and the write is stored all the same. The bytes decide: the engine's checkpoints, claims
        and index entries carry their writer's identity or timestamps, so identical bytes mean it was
        this write (a machine shape is the same whoever writes it, so there it makes no difference).
        Consulted only when the outcome is unknown, never for a first-attempt conflict.
        """
        found = self._read(name)
        return found[1] if found is not None and found[0] == data else None

    @staticmethod
    def _conflict(key: str, expect: str) -> CheckpointConflict:
        if expect == ABSENT:
            return CheckpointConflict(f"key {key!r} already exists")
        return CheckpointConflict(
            f"key {key!r} changed since version {echo(expect)} was read (or no longer exists)"
        )

    def _list(self, prefix: str, limit: int | None) -> list[tuple[str, str]]:
        """Keys under ``prefix`` in byte order with their ETags, paging until done or ``limit`` keys are found.

        Objects under the store's prefix that are not valid keys (a console "folder" marker ending in
        ``/``, a file someone uploaded by hand) are skipped, so the engine only ever sees its own records.
        """
        full = self._base + prefix
        found: list[tuple[str, str]] = []
        params: dict[str, Any] = {"Prefix": full}
        while limit is None or len(found) < limit:
            wanted = PAGE_SIZE if limit is None else min(PAGE_SIZE, limit - len(found))
            page = self._call("ListObjectsV2", full, self.client.list_objects_v2, MaxKeys=wanted, **params)
            for item in page.get("Contents", []):
                key = item["Key"][len(self._base) :]
                try:
                    validate_key(key)
                except InvalidThreadIdError:
                    continue
                found.append((key, str(item["ETag"])))
            if not page.get("IsTruncated"):
                break
            params["ContinuationToken"] = page["NextContinuationToken"]
        return found[:limit]

    def _delete(self, prefix: str) -> int:
        keys = [key for key, _ in self._list(prefix, None)]
        for start in range(0, len(keys), DELETE_BATCH):
            batch = keys[start : start + DELETE_BATCH]
            response = self._call(
                "DeleteObjects",
                self._base + prefix,
                self.client.delete_objects,
                Delete={"Objects": [{"Key": self._object(key)} for key in batch], "Quiet": True},
            )
            errors = response.get("Errors", [])
            if errors:
                first = errors[0]
                code, message = first.get("Code", ""), first.get("Message", "")
                target = first.get("Key", self._base + prefix)
                detail = f"{code}: {message} ({len(errors)} of {len(batch)} objects not deleted)"
                translated = access_error(
                    code, detail, bucket=self.bucket, operation="DeleteObjects", target=target
                )
                failure = StorageUnavailableError if code in UNAVAILABLE_CODES else StorageError
                raise translated or failure(
                    f"S3 could not delete {len(errors)} of {len(batch)} objects under {prefix!r} in bucket "
                    f"{self.bucket!r}; first: {target!r}: {detail}",
                    store=self.bucket, operation="DeleteObjects", code=code,
                )
        return len(keys)

    # -- the Storage protocol ---------------------------------------------------------------------

    async def read(self, key: str) -> tuple[bytes, str] | None:
        return await asyncio.to_thread(self._read, self._object(validate_key(key)))

    async def version(self, key: str) -> str | None:
        """The object's ETag from a ``HeadObject``, without its body (``SupportsVersion``)."""
        return await asyncio.to_thread(self._version, self._object(validate_key(key)))

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        """``durable`` is ignored: S3 acknowledges a PutObject only once the object is stored redundantly."""
        name = self._object(validate_key(key))
        if expect != ABSENT and not _plausible_token(expect):
            raise self._conflict(key, expect)
        return await asyncio.to_thread(self._write, key, name, bytes(data), expect)

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """The listed keys with their ETags, which ``ListObjectsV2`` returns anyway (``SupportsListVersions``):
        a warm resume needs no ``HeadObject`` after its listing."""
        validate_prefix(prefix)
        if limit is not None and limit <= 0:
            return []
        return await asyncio.to_thread(self._list, prefix, limit)

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        return [key for key, _ in await self.list_versions(prefix, limit=limit)]

    async def delete(self, prefix: str) -> int:
        return await asyncio.to_thread(self._delete, validate_prefix(prefix))

    def __repr__(self) -> str:
        return f"S3Storage('s3://{self.bucket}/{self.prefix}')"
