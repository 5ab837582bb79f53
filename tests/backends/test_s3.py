"""The S3 backend against a real moto_server over HTTP (no in-process mocks).

The conformance kit, URLs and the entry point, errors that say what to fix (from a server enforcing
IAM), server-side encryption, pagination, requests per step, and interrupt -> resume across processes.
"""

from __future__ import annotations

import asyncio
import runpy
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from pydantic import BaseModel
from statehitl_checkpoint_s3 import (
    BucketNotFoundError,
    S3Storage,
    StorageAccessError,
    parse_s3_url,
    translate_client_error,
)

from resume_processes import REFUND_APP, assert_one_winner, park_for_race, race_resumes, run_app
from statehitl.checkpoint import ABSENT, Checkpointer
from statehitl.errors import CheckpointConflict, CheckpointError, InvalidThreadIdError, StorageThrottledError
from statehitl.graph import END, START, NodeContext, StateGraph, Status
from statehitl.testing import CountingStorage
from statehitl.testing._storage_support import gather_bounded
from statehitl.testing.boto_faults import BotoFaults
from statehitl.testing.conformance import StorageConformance

REGION = "us-east-1"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def make_store(s3_server: str, s3_session: Any) -> Iterator[Callable[..., S3Storage]]:
    """Build stores on the test server (closed at the end of the test)."""
    made: list[S3Storage] = []

    def make(bucket: str, prefix: str = "app", **options: Any) -> S3Storage:
        options.setdefault("session", s3_session)
        store = S3Storage(bucket, prefix, endpoint_url=options.pop("endpoint_url", s3_server), **options)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def count_requests(store: S3Storage) -> Counter[str]:
    """S3 API calls the store's client makes from now on, by operation (counted from boto3's events)."""
    calls: Counter[str] = Counter()
    store.client.meta.events.register("before-call.s3.*", lambda model, **_: calls.update([model.name]))
    return calls


# -- the storage contract -----------------------------------------------------------------------------


class TestS3Storage(StorageConformance):
    """The whole kit, under a store prefix so the ``<prefix>/<key>`` mapping is exercised throughout."""

    @pytest.fixture
    def storage(self, make_store: Callable[..., S3Storage], s3_bucket: str) -> S3Storage:
        return make_store(s3_bucket, "app/checkpoints")


def test_moto_server_honours_conditional_puts(s3_admin: Any, s3_bucket: str) -> None:
    """What the backend relies on, asked of the server directly: 412 for a failed If-None-Match or If-Match."""
    put = s3_admin.put_object
    etag = put(Bucket=s3_bucket, Key="k", Body=b"v1", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError) as exists:
        put(Bucket=s3_bucket, Key="k", Body=b"v2", IfNoneMatch="*")
    assert exists.value.response["Error"]["Code"] == "PreconditionFailed"
    new = put(Bucket=s3_bucket, Key="k", Body=b"v2", IfMatch=etag)["ETag"]
    with pytest.raises(ClientError) as stale:
        put(Bucket=s3_bucket, Key="k", Body=b"v3", IfMatch=etag)
    assert stale.value.response["Error"]["Code"] == "PreconditionFailed"
    with pytest.raises(ClientError) as missing:  # as on S3: If-Match on a missing key is 404, not 412
        put(Bucket=s3_bucket, Key="missing", Body=b"v", IfMatch=new)
    assert missing.value.response["Error"]["Code"] == "NoSuchKey"
    assert s3_admin.get_object(Bucket=s3_bucket, Key="k")["Body"].read() == b"v2"


def test_keys_map_to_objects_under_the_prefix(make_store: Callable[..., S3Storage], s3_admin: Any,
                                               s3_bucket: str) -> None:
    nested, bare = make_store(s3_bucket, "/team/app/"), make_store(s3_bucket, "")
    run(nested.write("threads/t/1", b"a", expect=ABSENT))
    run(bare.write("root-key", b"b", expect=ABSENT))
    listed = [o["Key"] for o in s3_admin.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert listed == ["root-key", "team/app/threads/t/1"]
    assert run(bare.list("")) == ["root-key", "team/app/threads/t/1"]
    assert run(nested.list("")) == ["threads/t/1"]
    assert repr(nested) == f"S3Storage('s3://{s3_bucket}/team/app')"


def test_objects_that_are_not_keys_are_not_listed(make_store: Callable[..., S3Storage], s3_admin: Any,
                                                  s3_bucket: str) -> None:
    """A console "folder" marker or a hand-uploaded file under the prefix never reaches the engine."""
    store = make_store(s3_bucket)
    run(store.write("threads/t/1", b"x", expect=ABSENT))
    for foreign in ("app/threads/", "app/threads/t/.DS_Store", "app/threads/t/notes.txt~ x"):
        s3_admin.put_object(Bucket=s3_bucket, Key=foreign, Body=b"")
    assert run(store.list("threads/")) == ["threads/t/1"]
    assert run(store.list("threads/", limit=1)) == ["threads/t/1"]
    assert run(store.delete("threads/")) == 1


def test_bad_keys_are_refused_before_any_request(make_store: Callable[..., S3Storage], s3_bucket: str) -> None:
    store = make_store(s3_bucket)
    calls = count_requests(store)
    for bad in ("../x", "/etc/passwd", "a//b", ".hidden", "a b"):
        with pytest.raises(InvalidThreadIdError):
            run(store.read(bad))
        with pytest.raises(InvalidThreadIdError):
            run(store.write(bad, b"x", expect=ABSENT))
    for bad_prefix in ("../", "/", "a//"):
        with pytest.raises(InvalidThreadIdError):
            run(store.list(bad_prefix))
        with pytest.raises(InvalidThreadIdError):
            run(store.delete(bad_prefix))
    assert calls == Counter()


@pytest.mark.parametrize("token", ["*", '"a", "b"', "", "  ", "tab\there", "caf\u00e9"])
def test_tokens_that_would_widen_if_match_are_refused_without_a_request(
    make_store: Callable[..., S3Storage], s3_bucket: str, token: str
) -> None:
    """``If-Match: *`` or a list of ETags would match the current object whatever it is: never sent."""
    store = make_store(s3_bucket)
    run(store.write("k", b"v", expect=ABSENT))
    calls = count_requests(store)
    with pytest.raises(CheckpointConflict, match="'k'"):
        run(store.write("k", b"overwritten", expect=token))
    assert calls == Counter()
    assert run(store.read("k"))[0] == b"v"


def test_requests_run_off_the_event_loop_thread(make_store: Callable[..., S3Storage], s3_bucket: str) -> None:
    """boto3 blocks; every call runs in a worker thread so the loop keeps serving other threads."""
    store = make_store(s3_bucket)
    threads: set[int] = set()
    store.client.meta.events.register("before-call.s3.*", lambda **_: threads.add(threading.get_ident()))

    async def scenario() -> None:
        token = await store.write("k", b"v", expect=ABSENT)
        await store.read("k")
        await store.write("k", b"w", expect=token)
        await store.list("")
        await store.delete("")

    run(scenario())
    assert threads
    assert threading.get_ident() not in threads


def test_a_retried_put_whose_first_attempt_landed_is_not_a_conflict(
    make_store: Callable[..., S3Storage], s3_bucket: str
) -> None:
    """The write reaches S3 but its response is lost (here: replaced by a 500); botocore retries, the
    retry fails its condition against the object the first attempt made. That is our own write."""
    store = make_store(s3_bucket)
    with BotoFaults(store.client) as faults:
        faults.fail("PutObject", kind="landed-500")
        token = run(store.write("claim", b"mine", expect=ABSENT))
        assert faults.delivered == [("PutObject", 200)]  # the write itself succeeded on the server
        assert run(store.read("claim")) == (b"mine", token)
        faults.fail("PutObject", kind="landed-500")
        replaced = run(store.write("claim", b"mine, updated", expect=token))
        assert run(store.read("claim")) == (b"mine, updated", replaced)
        with pytest.raises(CheckpointConflict):  # no retry involved: a plain conflict stays one
            run(store.write("claim", b"theirs", expect=ABSENT))


# -- URLs and the entry point ---------------------------------------------------------------------------


def test_parse_s3_url() -> None:
    parsed = parse_s3_url("s3://my-bucket/team/app/?region=eu-west-1&endpoint_url=http://127.0.0.1:5000"
                          "&sse=aws:kms&sse_kms_key_id=alias/cp&profile=prod&retries=12&retry_mode=adaptive")
    assert parsed.bucket == "my-bucket"
    assert parsed.prefix == "team/app"
    assert parsed.region == "eu-west-1"
    assert parsed.endpoint_url == "http://127.0.0.1:5000"
    assert (parsed.sse, parsed.sse_kms_key_id) == ("aws:kms", "alias/cp")
    assert (parsed.profile, parsed.retries, parsed.retry_mode) == ("prod", 12, "adaptive")
    assert parse_s3_url("s3://b") == parse_s3_url("s3://b/")


@pytest.mark.parametrize(("url", "message"), [
    ("s3:///prefix", "names no bucket"),
    ("s3://b/p?regoin=eu-west-1", "unknown option(s) ['regoin']"),
    ("s3://b/p?region=", "exactly one non-empty value"),
    ("s3://b/p?region=a&region=b", "exactly one non-empty value"),
    ("s3://b/p?retries=many", "whole number"),
    ("file://b/p", "not an s3:// URL"),
])
def test_bad_s3_urls_say_what_is_wrong(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"S3 URL|s3://") as err:
        parse_s3_url(url)
    assert message in str(err.value)


def test_the_entry_point_is_registered() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="statehitl.checkpointers")}
    assert found["s3"] == "statehitl_checkpoint_s3:S3Storage"


def test_from_url_builds_the_configured_store(s3_server: str, s3_bucket: str) -> None:
    store = S3Storage.from_url(f"s3://{s3_bucket}/team/app?region=eu-west-1&endpoint_url={s3_server}"
                               "&sse=AES256&retries=5&retry_mode=adaptive")
    try:
        assert (store.bucket, store.prefix) == (s3_bucket, "team/app")
        assert store.client.meta.region_name == "eu-west-1"
        assert store.client.meta.endpoint_url == s3_server
        assert store.client.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 5}
        assert run(store.write("k", b"v", expect=ABSENT))
    finally:
        store.close()


def test_stores_from_the_same_url_share_one_client_per_process(s3_server: str, s3_bucket: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"s3://{s3_bucket}/shared?region={REGION}&endpoint_url={s3_server}"
    first, second = S3Storage.from_url(url), S3Storage.from_url(url)
    assert first.client is second.client  # a warm process does not load S3's service model again
    first.close()  # shared: closing one store leaves the others working
    assert run(second.write("k", b"v", expect=ABSENT))
    assert S3Storage.from_url(url.replace("shared", "other") + "&retries=3").client is not first.client
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "rotated")
    assert S3Storage.from_url(url).client is not first.client  # new credentials, new client


def test_checkpointer_from_an_s3_url_runs_a_graph_and_a_second_one_reads_it(s3_server: str,
                                                                           s3_bucket: str) -> None:
    class Count(BaseModel):
        n: int = 0

    g = StateGraph(Count)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    url = f"s3://{s3_bucket}/app?region={REGION}&endpoint_url={s3_server}"
    first = Checkpointer.from_url(url)
    assert isinstance(first.storage, S3Storage)
    g.compile(checkpointer=first).invoke({}, thread_id="t")
    again = g.compile(checkpointer=Checkpointer.from_url(url))
    assert again.get_state("t").values == Count(n=1)


def test_importing_the_package_does_not_import_boto3() -> None:
    code = "import sys, statehitl, statehitl.checkpoint, statehitl_checkpoint_s3; print('boto3' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(("options", "message"), [
    ({"sse": "aes256"}, "sse must be one of AES256, aws:kms, aws:kms:dsse"),
    ({"sse": "AES256", "sse_kms_key_id": "k"}, "needs sse='aws:kms'"),
    ({"retries": 0}, "at least 1"),
    ({"retry_mode": "legacy"}, "retry_mode must be"),
])
def test_bad_options_are_refused(make_store: Callable[..., S3Storage], options: dict[str, Any],
                                 message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_store("bucket", **options)


def test_bad_bucket_and_prefix_are_refused(s3_server: str) -> None:
    with pytest.raises(ValueError, match="bare S3 bucket name"):
        S3Storage("bucket/sub", endpoint_url=s3_server)
    with pytest.raises(ValueError, match=r"S3 prefix 'a/\.\./b' is not allowed"):
        S3Storage("bucket", "a/../b", endpoint_url=s3_server)


# -- errors that say what to fix --------------------------------------------------------------------------


def test_a_missing_bucket_is_a_clear_error_for_every_primitive(make_store: Callable[..., S3Storage]) -> None:
    store = make_store("no-such-bucket-statehitl")
    for attempt in (store.read("k"), store.write("k", b"v", expect=ABSENT), store.write("k", b"v", expect='"e"'),
                    store.list(""), store.delete("")):
        with pytest.raises(BucketNotFoundError) as err:
            run(attempt)
        assert isinstance(err.value, CheckpointError)
        assert isinstance(err.value, LookupError)
        assert "S3 bucket 'no-such-bucket-statehitl' does not exist" in str(err.value)
        assert "create it" in str(err.value)
        assert err.value.code == "NoSuchBucket"


def test_a_missing_bucket_through_the_checkpointer(s3_server: str) -> None:
    g = StateGraph(BaseModel)
    g.add_node("noop", lambda s: None)
    g.add_edge(START, "noop")
    g.add_edge("noop", END)
    app = g.compile(checkpointer=Checkpointer.from_url(f"s3://nowhere-bucket/app?endpoint_url={s3_server}"))
    with pytest.raises(BucketNotFoundError, match="'nowhere-bucket' does not exist"):
        app.invoke({}, thread_id="t")


def test_access_denied_names_the_permission_to_grant(s3_locked_server: Any, s3_session: Any) -> None:
    locked = s3_locked_server
    import boto3

    def store_as(user: dict[str, str]) -> S3Storage:
        return S3Storage(locked.bucket, "app", session=boto3.Session(**user), endpoint_url=locked.endpoint)

    reader, nobody = store_as(locked.reader), store_as(locked.nobody)
    try:
        # the reader may read and list, and a missing key is absent (s3:ListBucket is granted)
        assert run(reader.read(locked.stored_key)) == (b"stored", run(reader.read(locked.stored_key))[1])
        assert run(reader.read("threads/t/missing")) is None
        assert run(reader.list("threads/")) == [locked.stored_key]
        for attempt, permission in [
            (reader.write("threads/t/2", b"x", expect=ABSENT), "s3:PutObject"),
            (reader.delete("threads/"), "s3:DeleteObject"),
            (nobody.list("threads/"), "s3:ListBucket"),
            (nobody.read(locked.stored_key), "s3:GetObject"),
        ]:
            with pytest.raises(StorageAccessError) as err:
                run(attempt)
            message = str(err.value)
            assert f"access denied to S3 bucket {locked.bucket!r}" in message
            assert f"needs {permission}" in message
            assert f"arn:aws:s3:::{locked.bucket}" in message
            assert "docs/backends.md" in message
            assert err.value.store == locked.bucket
            assert err.value.code == "AccessDenied"
        assert run(reader.list("threads/")) == [locked.stored_key]  # the denied delete removed nothing
    finally:
        reader.close()
        nobody.close()


def test_unknown_credentials_are_a_clear_error(s3_locked_server: Any) -> None:
    store = S3Storage(s3_locked_server.bucket, endpoint_url=s3_locked_server.endpoint)  # the dummy env keys
    try:
        with pytest.raises(StorageAccessError, match="rejected the AWS credentials") as err:
            run(store.list(""))
        assert err.value.code == "InvalidAccessKeyId"
        assert "AWS_ACCESS_KEY_ID" in str(err.value)
    finally:
        store.close()


def test_no_credentials_at_all_is_a_clear_error(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    store = S3Storage("any-bucket", endpoint_url=s3_server)
    try:
        with pytest.raises(StorageAccessError, match="no AWS credentials found for S3 bucket 'any-bucket'"):
            run(store.read("k"))
    finally:
        store.close()


def _client_error(code: str, operation: str, **extra: Any) -> ClientError:
    """An error as botocore builds it from S3's response, for codes moto_server cannot produce."""
    return ClientError({"Error": {"Code": code, "Message": "from S3", **extra}, "ResponseMetadata": {}}, operation)


@pytest.mark.parametrize(("code", "operation", "fragments"), [
    ("AccessDenied", "GetObject", ["needs s3:GetObject", "without s3:ListBucket", "arn:aws:s3:::b/*"]),
    ("AccessDenied", "ListObjectsV2", ["needs s3:ListBucket", "on arn:aws:s3:::b "]),
    ("AccessDenied", "PutObject", ["needs s3:PutObject", "kms:GenerateDataKey"]),
    ("AllAccessDisabled", "DeleteObjects", ["needs s3:DeleteObject"]),
    ("ExpiredToken", "GetObject", ["rejected the AWS credentials", "expired"]),
    ("SignatureDoesNotMatch", "PutObject", ["AWS_SECRET_ACCESS_KEY"]),
    ("KMS.NotFoundException", "PutObject", ["sse_kms_key_id", "kms:GenerateDataKey", "kms:Decrypt"]),
    ("PermanentRedirect", "ListObjectsV2", ["another region", "set region=eu-west-1"]),
    ("AuthorizationHeaderMalformed", "GetObject", ["another region", "region="]),
])
def test_translation_of_errors_moto_cannot_produce(code: str, operation: str, fragments: list[str]) -> None:
    error = _client_error(code, operation, Region="eu-west-1")
    translated = translate_client_error(error, bucket="b", operation=operation, target="app/k")
    assert isinstance(translated, StorageAccessError)
    assert "'b'" in str(translated)
    assert f"({code})" in str(translated) or code in str(translated)
    for fragment in fragments:
        assert fragment in str(translated)


@pytest.mark.parametrize("code", ["SlowDown", "Throttling", "RequestLimitExceeded"])
def test_throttling_that_outlasts_the_retries_is_a_shared_throttled_error(code: str) -> None:
    translated = translate_client_error(_client_error(code, "PutObject"), bucket="b", operation="PutObject",
                                        target="app/k")
    assert isinstance(translated, StorageThrottledError)
    assert (translated.store, translated.operation, translated.code) == ("b", "PutObject", code)
    assert "bucket 'b'" in str(translated)
    assert "retries=N" in str(translated)


@pytest.mark.parametrize("code", ["InternalError", "NoSuchKey", "PreconditionFailed"])
def test_errors_that_are_not_about_configuration_are_left_alone(code: str) -> None:
    assert translate_client_error(_client_error(code, "PutObject"), bucket="b", operation="PutObject",
                                  target="k") is None


# -- encryption, pagination, costs -----------------------------------------------------------------------


def test_sse_s3_is_passed_through(make_store: Callable[..., S3Storage], s3_admin: Any, s3_bucket: str) -> None:
    store = make_store(s3_bucket, sse="AES256")
    token = run(store.write("k", b"secret", expect=ABSENT))
    run(store.write("k", b"secret v2", expect=token))
    head = s3_admin.head_object(Bucket=s3_bucket, Key="app/k")
    assert head["ServerSideEncryption"] == "AES256"
    assert run(store.read("k"))[0] == b"secret v2"


def test_sse_kms_with_a_key_is_passed_through(make_store: Callable[..., S3Storage], s3_admin: Any,
                                              s3_bucket: str) -> None:
    store = make_store(s3_bucket, sse_kms_key_id="alias/statehitl-checkpoints")  # implies sse="aws:kms"
    run(store.write("k", b"secret", expect=ABSENT))
    head = s3_admin.head_object(Bucket=s3_bucket, Key="app/k")
    assert head["ServerSideEncryption"] == "aws:kms"
    assert head["SSEKMSKeyId"].endswith("alias/statehitl-checkpoints")


def test_listing_and_deleting_page_through_more_than_1000_keys(make_store: Callable[..., S3Storage],
                                                               s3_bucket: str) -> None:
    store = make_store(s3_bucket)
    keys = sorted(f"threads/t/{i:05d}" for i in range(1234))

    async def fill() -> None:
        await gather_bounded(store.write(k, b"x", expect=ABSENT, durable=False) for k in keys)

    run(fill())
    calls = count_requests(store)
    page_sizes: list[int] = []
    store.client.meta.events.register(
        "provide-client-params.s3.ListObjectsV2", lambda params, **_: page_sizes.append(params["MaxKeys"])
    )
    assert run(store.list("threads/")) == keys
    assert page_sizes == [1000, 1000]
    assert run(store.list("threads/", limit=1100)) == keys[:1100]
    assert page_sizes[2:] == [1000, 100], "a limited listing asks only for what it still needs"
    assert run(store.list("threads/", limit=1)) == keys[:1]
    assert page_sizes[-1] == 1
    assert calls == Counter({"ListObjectsV2": 5})
    calls.clear()
    assert run(store.delete("threads/")) == len(keys)
    assert calls == Counter({"ListObjectsV2": 2, "DeleteObjects": 2}), "DeleteObjects takes 1000 keys at most"
    assert run(store.list("")) == []


class Job(BaseModel):
    approved: bool = False
    n: int = 0


def _job_graph() -> StateGraph:
    def review(state: Job, ctx: NodeContext) -> dict[str, bool]:
        return {"approved": ctx.interrupt("approve") == "y"}

    def work(state: Job) -> dict[str, int]:
        return {"n": state.n + 1}

    g = StateGraph(Job)
    g.add_node("review", review)
    for i in range(5):
        g.add_node(f"work{i}", work)
    g.add_edge(START, "review")
    g.add_edge("review", "work0")
    for i in range(4):
        g.add_edge(f"work{i}", f"work{i + 1}")
    g.add_edge("work4", END)
    return g


def test_requests_per_step(make_store: Callable[..., S3Storage], s3_bucket: str) -> None:
    """The costs docs/backends.md quotes, counted on the wire: one PutObject per step (a run's first also says
    how the run began: no write of its own); a resume is one listing, the head's reads and one claim
    (its answers' audit entries ride in its first step's PUT); the index costs a PUT when a run stops, and a
    GET before it unless this checkpointer knows the entry's version (a thread it found new)."""
    store = make_store(s3_bucket)
    calls = count_requests(store)
    counting = CountingStorage(store)
    g = _job_graph()

    paused = g.compile(checkpointer=Checkpointer(counting)).invoke({}, thread_id="t")
    assert paused.stop_reason == "interrupt"
    # head lookup (1 List: no thread), the interrupted checkpoint (the run's one record: its first node asked)
    # + machine shape (2 PUT), index (1 PUT: the listing found no thread, so the entry is written as new without
    # reading it), the pointer from the interrupt's id to its thread (1 PUT, create-once)
    assert calls == Counter({"ListObjectsV2": 1, "PutObject": 4})
    assert counting.reset().calls == Counter({"list": 1, "write": 4})
    calls.clear()

    app = g.compile(checkpointer=Checkpointer(counting))  # a new process, as far as the store can tell
    done = app.invoke([{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in paused.interrupts],
                      thread_id="t")
    assert (done.stop_reason, done.state.n) == ("end", 5)
    steps = 6  # review (answered) and work0..work4
    # 1 List + 1 GET (the head; its base chain is itself at this depth) + 1 PUT of the answer (its one binding
    # record) + 1 PUT claim and 1 GET of the index entry (a thread rolled back behind it is refused before
    # anything runs), then 1 PUT per step, then the index: 1 PUT (its version is known from that GET).
    assert calls == Counter({"ListObjectsV2": 1, "GetObject": 1 + 1, "PutObject": 1 + 1 + steps + 1})
    assert counting.reset().calls == Counter({"list": 1, "read": 2, "write": steps + 3})


def test_a_thread_this_process_wrote_is_checked_by_its_etag(make_store: Callable[..., S3Storage],
                                                             s3_bucket: str) -> None:
    """A warm read on S3 (the process wrote the thread last): the listing alone, whose ETag for the head
    matches the one its PutObject returned; no object body is read, whatever the depth. (A waiting thread's
    state also lists the answers stored for it and not yet applied: a second listing, empty here.)"""
    store = make_store(s3_bucket)
    calls = count_requests(store)
    app = _job_graph().compile(checkpointer=Checkpointer(store))
    paused = app.invoke({}, thread_id="warm")
    assert paused.stop_reason == "interrupt"
    calls.clear()
    snapshot = app.get_state("warm")
    assert snapshot is not None
    assert snapshot.next == ("review",)
    assert snapshot.answers == {}
    assert calls == Counter({"ListObjectsV2": 2})


# -- interrupt -> resume across processes ------------------------------------------------------------------


@pytest.fixture
def s3_url(s3_server: str, s3_bucket: str) -> str:
    return f"s3://{s3_bucket}/app?region={REGION}&endpoint_url={s3_server}"


@pytest.mark.slow
def test_resume_in_a_new_process_on_s3(s3_url: str, s3_admin: Any, s3_bucket: str, tmp_path: Path) -> None:
    script = tmp_path / "refund_app.py"
    script.write_text(REFUND_APP)

    first = run_app(script, "start", s3_url, "ticket-1")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert (pending["name"], pending["reason"]) == ("refund-approval", {"text": "refund please"})
    parked = runpy.run_path(str(script))["build"](s3_url).get_state("ticket-1")
    assert parked.status == Status.INTERRUPTED
    assert (tmp_path / "audit-runs.txt").read_text() == "ran\n"
    stored = [o["Key"] for o in s3_admin.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert any(key.startswith("app/threads/ticket-1/") for key in stored)

    second = run_app(script, "resume", s3_url, "ticket-1", pending["id"], "y")
    assert second["stop_reason"] == "end"
    assert second["state"] == {
        "text": "refund please",
        "log": ["classified", "audited", "reviewed: y", "paid"],  # a step's writes apply in node-name order
        "approved": True,
    }
    assert (tmp_path / "audit-runs.txt").read_text() == "ran\n"  # audit was not run again
    history = runpy.run_path(str(script))["build"](s3_url).history("ticket-1")
    assert history[0].status == Status.COMPLETED


@pytest.mark.slow
def test_concurrent_resumes_in_separate_processes_run_the_action_once_on_s3(s3_url: str, tmp_path: Path) -> None:
    park_for_race(s3_url)
    assert_one_winner(*race_resumes(s3_url, tmp_path))


def test_a_store_shared_by_two_clients_sees_one_create_once_winner(make_store: Callable[..., S3Storage],
                                                                   s3_bucket: str) -> None:
    """Two stores (two clients, as in two processes) racing on one key through the server."""
    a, b = make_store(s3_bucket), make_store(s3_bucket)
    key = f"claims/{uuid.uuid4().hex}"

    async def race() -> list[Any]:
        return await asyncio.gather(a.write(key, b"a", expect=ABSENT), b.write(key, b"b", expect=ABSENT),
                                    return_exceptions=True)

    outcomes = run(race())
    assert sum(isinstance(o, str) for o in outcomes) == 1
    assert sum(isinstance(o, CheckpointConflict) for o in outcomes) == 1
