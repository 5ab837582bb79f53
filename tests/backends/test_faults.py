"""What the network and the service do to a store, against the real servers (moto_server, DynamoDB Local).

``statehitl.testing.boto_faults.BotoFaults`` injects each fault at botocore's ``before-send`` event, so
botocore retries as it does in production and the server sees what it would see: a write whose answer
is lost has really landed, and its retry meets a real failed condition. Checked on both backends:

- a conditional write whose answer was lost, and whose retry then failed its condition, is reported
  as the write it was (with its token), never as a conflict; a real conflict stays one;
- every failure past the retries is a ``StorageError`` that says whether it is transient, names the
  store and the request, and chains botocore's exception; nothing raw from botocore gets out;
- bad bucket and table names and options are ``StorageConfigError`` when the store is built.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError
from pydantic import BaseModel
from statehitl_checkpoint_dynamodb import DynamoDBConfigError, DynamoDBError, DynamoDBStorage
from statehitl_checkpoint_dynamodb._layout import INLINE_BYTES
from statehitl_checkpoint_s3 import S3Storage
from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

from statehitl.checkpoint import ABSENT, Checkpointer, Storage
from statehitl.errors import (
    CheckpointConflict,
    StorageConfigError,
    StorageError,
    StorageThrottledError,
    StorageUnavailableError,
)
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.testing.boto_faults import KINDS, BotoFaults
from statehitl.testing.local_server import free_port

REGION = "us-east-1"
ATTEMPTS = 3
"""Attempts per request the stores here make: enough to retry, few enough to give up quickly."""
LARGE = INLINE_BYTES * 2 + 1234
"""A value DynamoDB splits into a record and two chunk items (one object on S3)."""

OPERATIONS = {
    "s3": {"read": "GetObject", "write": "PutObject", "list": "ListObjectsV2", "delete": "DeleteObjects",
           "version": "HeadObject"},
    "dynamodb": {"read": "GetItem", "write": "PutItem", "list": "Query", "delete": "BatchWriteItem",
                 "version": "GetItem"},
}
"""The request each primitive's fault is injected into (delete's listing comes first and is left alone)."""


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


@pytest.fixture(autouse=True)
def dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clients find the local servers' dummy credentials the ordinary way, never a real profile."""
    for name in AWS_ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)


@dataclass
class Rig:
    """A store on a real test server, with faults attached to its client."""

    backend: str
    store: S3Storage | DynamoDBStorage
    faults: BotoFaults
    name: str
    """The bucket or table: every error names it as ``.store``."""
    admin: Any
    """A plain client on the same server, for looking at what is stored."""

    def op(self, primitive: str) -> str:
        return OPERATIONS[self.backend][primitive]

    def warm(self, partition: str) -> None:
        """Write a record beside the ones a test faults, so the faulted write is the record's own:
        DynamoDB's first write into a partition also puts (unconditionally) the marker that lists it."""
        run(self.store.write(f"{partition}/000000000000", b"sibling", expect=ABSENT))

    def chunk_items(self) -> list[dict[str, Any]]:
        """DynamoDB's chunk items (partition ``#...``) in the table; S3 has none."""
        if self.backend != "dynamodb":
            return []
        found = self.admin.scan(TableName=self.name, ConsistentRead=True)["Items"]
        return [item for item in found if item["pk"]["S"].startswith("#")]


@pytest.fixture(params=["s3", "dynamodb"])
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    import boto3

    if request.param == "s3":
        endpoint: str = request.getfixturevalue("s3_server")
        bucket: str = request.getfixturevalue("s3_bucket")
        store: S3Storage | DynamoDBStorage = S3Storage(
            bucket, "app", session=request.getfixturevalue("s3_session"), endpoint_url=endpoint, retries=ATTEMPTS)
        admin, name = request.getfixturevalue("s3_admin"), bucket
    else:
        endpoint = request.getfixturevalue("dynamodb_endpoint")
        name = request.getfixturevalue("dynamodb_table")
        store = DynamoDBStorage(name, endpoint_url=endpoint, region_name=REGION, max_attempts=ATTEMPTS)
        admin = boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION)
    faults = BotoFaults(store.client)
    yield Rig(request.param, store, faults, name, admin)
    faults.detach()
    if isinstance(store, S3Storage):
        store.close()
    else:
        admin.close()


# -- a write whose answer was lost ------------------------------------------------------------------------


@pytest.mark.parametrize("size", [5, LARGE], ids=["small", "split"])
@pytest.mark.parametrize("kind", ["landed-lost", "landed-500"])
@pytest.mark.parametrize("replace", [False, True], ids=["create", "replace"])
def test_a_write_whose_answer_was_lost_is_reported_as_the_write_it_was(rig: Rig, replace: bool, kind: str,
                                                                      size: int) -> None:
    key, data = "threads/t/000000000001", bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    rig.warm("threads/t")
    expect = run(rig.store.write(key, b"before", expect=ABSENT)) if replace else ABSENT
    rig.faults.fail(rig.op("write"), kind=kind)
    before = rig.faults.attempts[rig.op("write")]
    token = run(rig.store.write(key, data, expect=expect))
    assert rig.faults.delivered == [(rig.op("write"), 200)]  # the first attempt landed on the server
    assert rig.faults.attempts[rig.op("write")] - before == 2  # and botocore retried it, in vain
    assert run(rig.store.read(key)) == (data, token)  # the token is the stored value's, chunks and all
    assert run(rig.store.write(key, b"after", expect=token))  # and the thread goes on from it
    assert rig.chunk_items() == []  # the replaced values' chunks went, none of ours was lost early


@pytest.mark.parametrize("size", [5, LARGE], ids=["small", "split"])
def test_every_answer_lost_still_reports_the_write_that_landed(rig: Rig, size: int) -> None:
    key, data = "index/t/entry", b"m" * size
    rig.warm("index/t")
    rig.faults.fail(rig.op("write"), kind="landed-lost", times="always")
    token = run(rig.store.write(key, data, expect=ABSENT))
    statuses = [status for _, status in rig.faults.delivered]
    assert statuses[0] == 200
    assert len(statuses) == ATTEMPTS
    assert all(status != 200 for status in statuses[1:])
    rig.faults.clear()
    assert run(rig.store.read(key)) == (data, token)


@pytest.mark.parametrize("size", [5, LARGE], ids=["small", "split"])
@pytest.mark.parametrize("replace", [False, True], ids=["create", "replace"])
def test_a_real_conflict_behind_a_lost_answer_is_still_a_conflict(rig: Rig, replace: bool, size: int) -> None:
    key = "threads/t/000000000002"
    first = run(rig.store.write(key, b"first", expect=ABSENT))
    expect = first if replace else ABSENT
    theirs = run(rig.store.write(key, b"theirs", expect=first)) if replace else first
    rig.faults.fail(rig.op("write"), kind="landed-lost")
    with pytest.raises(CheckpointConflict) as err:
        run(rig.store.write(key, b"m" * size, expect=expect))
    assert key in str(err.value)
    assert [status for _, status in rig.faults.delivered] != [200]  # the lost attempt was refused too
    assert run(rig.store.read(key)) == ((b"theirs" if replace else b"first"), theirs)
    assert rig.chunk_items() == []  # the loser's chunks are gone


@pytest.mark.parametrize("kind", ["500", "reset", "timeout"])
def test_a_write_that_never_landed_is_unavailable_not_a_conflict(rig: Rig, kind: str) -> None:
    key = "threads/t/000000000003"
    rig.warm("threads/t")
    rig.faults.fail(rig.op("write"), kind=kind, times="always")
    before = rig.faults.attempts[rig.op("write")]
    with pytest.raises(StorageUnavailableError) as err:
        run(rig.store.write(key, b"m" * LARGE, expect=ABSENT))
    assert not isinstance(err.value, CheckpointConflict)
    assert err.value.transient is True
    assert err.value.operation == rig.op("write")
    assert err.value.store == rig.name
    assert isinstance(err.value.__cause__, ClientError | ConnectionClosedError | ReadTimeoutError)
    assert rig.faults.attempts[rig.op("write")] - before == ATTEMPTS
    rig.faults.clear()
    assert run(rig.store.read(key)) is None
    # DynamoDB keeps the chunks of a write whose outcome it could not learn (an attempt may still land):
    # the record that would name them is absent, so the orphan sweep takes them once they are old.
    assert len(rig.chunk_items()) == (2 if rig.backend == "dynamodb" else 0)


# -- every failure past the retries is a transient StorageError ---------------------------------------------


def _call(store: Storage | S3Storage | DynamoDBStorage, primitive: str) -> Coroutine[Any, Any, Any]:
    key = "threads/t/000000000004"
    return {
        "read": lambda: store.read(key),
        "write": lambda: store.write(key, b"v", expect=ABSENT),
        "list": lambda: store.list("threads/"),
        "delete": lambda: store.delete("threads/"),
        "version": lambda: store.version(key),
    }[primitive]()


@pytest.mark.parametrize("kind", ["500", "reset", "timeout"])
@pytest.mark.parametrize("primitive", ["read", "write", "list", "delete", "version"])
def test_a_request_failing_past_its_retries_is_storage_unavailable(rig: Rig, primitive: str, kind: str) -> None:
    run(rig.store.write("threads/t/000000000009", b"there", expect=ABSENT))  # something to list and delete
    rig.faults.fail(rig.op(primitive), kind=kind, times="always")
    with pytest.raises(StorageUnavailableError) as err:
        run(_call(rig.store, primitive))
    error = err.value
    assert error.transient is True
    assert isinstance(error, StorageError)
    assert (error.store, error.operation) == (rig.name, rig.op(primitive))
    assert error.code
    assert rig.name in str(error)
    assert rig.op(primitive) in str(error)
    expected_cause = {"500": ClientError, "reset": ConnectionClosedError, "timeout": ReadTimeoutError}[kind]
    assert isinstance(error.__cause__, expected_cause)
    assert "may succeed later" in str(error)
    if rig.backend == "dynamodb":
        assert isinstance(error, DynamoDBError)  # except clauses written for the backend still catch it
    assert rig.faults.injected[rig.op(primitive)] == ATTEMPTS


def test_throttling_past_the_retries_is_storage_throttled(rig: Rig) -> None:
    rig.faults.fail(rig.op("list"), kind="throttle", times="always")
    with pytest.raises(StorageThrottledError) as err:
        run(rig.store.list("threads/"))
    assert err.value.transient is True
    assert isinstance(err.value.__cause__, ClientError)
    assert err.value.operation == rig.op("list")


def test_faults_are_injected_at_the_nth_attempt_and_then_disarm(rig: Rig) -> None:
    key, read = "threads/t/000000000005", rig.op("read")
    token = run(rig.store.write(key, b"v", expect=ABSENT))
    rig.faults.fail(read, kind="500", times=ATTEMPTS, after=2)
    assert rig.faults.armed == 1
    assert run(rig.store.read(key)) == (b"v", token)
    assert run(rig.store.read(key)) == (b"v", token)
    with pytest.raises(StorageUnavailableError):
        run(rig.store.read(key))  # the third read's every attempt
    assert rig.faults.armed == 0
    assert run(rig.store.read(key)) == (b"v", token)
    assert rig.faults.calls[read] == 4
    assert rig.faults.attempts[read] == 3 + ATTEMPTS
    assert rig.faults.injected[read] == ATTEMPTS
    rig.faults.fail("*", kind="reset", times="always")
    with pytest.raises(StorageUnavailableError):
        run(rig.store.list("threads/"))
    rig.faults.detach()
    assert run(rig.store.read(key)) == (b"v", token)  # detached: untouched, and no longer counted
    assert rig.faults.calls[read] == 4


def test_faults_refuse_what_they_cannot_do(rig: Rig) -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        rig.faults.fail("PutItem", kind="meteor")
    with pytest.raises(ValueError, match="times must be"):
        rig.faults.fail("PutItem", times=0)
    with pytest.raises(ValueError, match="after must be"):
        rig.faults.fail("PutItem", after=-1)
    assert set(KINDS) == {"landed-lost", "landed-500", "500", "reset", "timeout", "throttle"}


def test_a_server_that_is_not_there_is_unavailable(rig: Rig) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    if rig.backend == "s3":
        store: S3Storage | DynamoDBStorage = S3Storage("bucket", endpoint_url=endpoint, retries=2)
    else:
        store = DynamoDBStorage("table", endpoint_url=endpoint, region_name=REGION, max_attempts=2)
    with pytest.raises(StorageUnavailableError) as err:
        run(store.read("threads/t/1"))
    assert isinstance(err.value.__cause__, EndpointConnectionError)
    assert err.value.code == "EndpointConnectionError"
    assert "server running" in str(err.value)


# -- the engine rides out lost answers ---------------------------------------------------------------------


class Job(BaseModel):
    approved: bool = False
    done: bool = False


def job_graph(checkpointer: Checkpointer, calls: list[str]) -> Any:
    def review(state: Job, ctx: NodeContext) -> dict[str, bool]:
        return {"approved": ctx.interrupt("approve") == "y"}

    def act(state: Job) -> dict[str, bool]:
        calls.append("act")
        return {"done": state.approved}

    g = StateGraph(Job)
    g.add_node("review", review)
    g.add_node("act", act)
    g.add_edge(START, "review")
    g.add_edge("review", "act")
    g.add_edge("act", END)
    return g.compile(checkpointer=checkpointer)


def test_a_resume_whose_every_write_answer_was_lost_runs_once_to_the_end(rig: Rig) -> None:
    """The claim of the interrupt, each step and the index entry all land with their answers lost: the
    resume is not refused as "claimed by another process", and the action runs once."""
    calls: list[str] = []
    parked = job_graph(Checkpointer(rig.store), calls).invoke({}, thread_id="t")
    [interrupt] = parked.interrupts
    rig.faults.fail(rig.op("write"), kind="landed-lost", times="always")
    done = job_graph(Checkpointer(rig.store), calls).invoke(
        [{"interruptResponse": {"interruptId": interrupt.id, "response": "y"}}], thread_id="t")
    assert done.state == Job(approved=True, done=True)
    assert calls == ["act"]
    writes = [status for operation, status in rig.faults.delivered if operation == rig.op("write")]
    assert writes.count(200) >= 2  # at least the claim and a step landed with their answers lost
    rig.faults.clear()
    assert job_graph(Checkpointer(rig.store), calls).get_state("t").values == Job(approved=True, done=True)


# -- configuration refused before any request ----------------------------------------------------------------


@pytest.mark.parametrize(("build", "message"), [
    (lambda: S3Storage("Bad Bucket!"), "is not an S3 bucket name"),
    (lambda: S3Storage("b" * 300), "(300 characters) is not an S3 bucket name"),
    (lambda: S3Storage("bucket/sub"), "bare S3 bucket name"),
    (lambda: S3Storage("bucket", region_name="eu west 1"), "is not an AWS region name"),
    (lambda: S3Storage("bucket", endpoint_url="localhost:9000"), "is not an http(s) URL"),
    (lambda: S3Storage("bucket", retries=0), "at least 1"),
    (lambda: S3Storage.from_url("s3://Bad_Bucket!/p"), "is not an S3 bucket name"),
    (lambda: S3Storage.from_url("s3://b/p?regoin=x"), "unknown option(s) ['regoin']"),
    (lambda: DynamoDBStorage("ab"), "is not a DynamoDB table name"),
    (lambda: DynamoDBStorage("table", region_name="eu_west_1"), "is not an AWS region name"),
    (lambda: DynamoDBStorage("table", endpoint_url="ftp://x"), "is not an http(s) URL"),
    (lambda: DynamoDBStorage("table", ttl_seconds=float("inf")), "ttl_seconds must be positive"),
    (lambda: DynamoDBStorage("table", max_attempts=0), "max_attempts must be"),
    (lambda: DynamoDBStorage("table", client=object(), region_name=REGION), "pass client= alone"),
    (lambda: DynamoDBStorage.from_url("dynamodb://table?region=not%20one"), "is not an AWS region name"),
    (lambda: Checkpointer.from_url("dynamodb://table?max_attempts=lots"), "must be a int"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_names_and_options_are_config_errors_when_the_store_is_built(build: Callable[[], Any],
                                                                          message: str) -> None:
    with pytest.raises(StorageConfigError) as err:
        build()
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)
    assert err.value.transient is False


def test_a_request_botocore_refuses_to_send_is_a_config_error() -> None:
    """botocore validates parameters before sending (``ParamValidationError``); the stores check what
    they can first, and whatever still gets to botocore is a ``StorageConfigError`` naming the store."""
    from botocore.exceptions import ParamValidationError
    from statehitl_checkpoint_dynamodb._client import translate_errors
    from statehitl_checkpoint_s3._errors import storage_error

    refused = ParamValidationError(report="Invalid bucket name")
    s3_error = storage_error(refused, bucket="b", operation="PutObject", target="k")
    assert isinstance(s3_error, StorageConfigError)
    assert (s3_error.store, s3_error.operation, s3_error.code) == ("b", "PutObject", "ParamValidationError")
    import boto3

    client = boto3.client("dynamodb", region_name=REGION)
    with pytest.raises(DynamoDBConfigError) as err, translate_errors("tbl", client, "Query"):
        raise refused
    assert isinstance(err.value, StorageConfigError)
    assert err.value.__cause__ is refused
    client.close()
