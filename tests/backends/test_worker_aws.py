"""The worker on S3 (moto_server, polling the index) and DynamoDB (DynamoDB Local, reading the table's stream),
and the AWS Lambda handler fed real stream records read from DynamoDB Local.

DynamoDB Local serves the Streams API at its own endpoint (``ListStreams``, ``DescribeStream``,
``GetShardIterator``, ``GetRecords``), so the stream these tests read is the one the table really has.
"""

from __future__ import annotations

import datetime
import json
import os
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from statehitl_checkpoint_dynamodb import DynamoDBStorage
from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError
from statehitl_checkpoint_dynamodb.stream_records import record_key
from statehitl_checkpoint_dynamodb.streams import TableStream, _Shard
from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

from conftest import REGION
from statehitl import inbox
from statehitl.cli import main
from statehitl.worker import lambda_handler
from worker_app import HOLD_ENV, LEDGER_ENV, STORE_ENV, Ledger, build
from worker_support import Receiver, WorkerProcess, wait_for, worker_env, workers

SECRET = b"lambda-webhook-secret"


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "ledger"))
    return Ledger(tmp_path / "ledger")


def _answer(store: str, thread: str, response: object, responder: str = "ann") -> None:
    [item] = [p for p in inbox.pending(store) if p.thread_id == thread]
    inbox.answer(store, item.id, response, responder=responder)


def _client(endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=DUMMY_AWS_ENV["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=DUMMY_AWS_ENV["AWS_SECRET_ACCESS_KEY"])


@pytest.fixture
def streamed_store(dynamodb_endpoint: str, dynamodb_table: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A dynamodb:// store on a fresh table whose stream ``statehitl dynamodb create-table --stream`` turned on
    (the table exists already: the command adds the stream to it)."""
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    assert main(["dynamodb", "create-table", dynamodb_table, "--stream", "--region", REGION,
                 "--endpoint-url", dynamodb_endpoint]) == 0
    url = f"dynamodb://{dynamodb_table}?region={REGION}&endpoint_url={dynamodb_endpoint}"
    monkeypatch.setenv(STORE_ENV, url)
    return url


def test_create_table_turns_the_stream_on_keys_only(dynamodb_endpoint: str, streamed_store: str,
                                                    dynamodb_table: str, capsys: pytest.CaptureFixture[str]) -> None:
    described = _client(dynamodb_endpoint).describe_table(TableName=dynamodb_table)["Table"]
    assert described["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    capsys.readouterr()
    assert main(["dynamodb", "create-table", dynamodb_table, "--stream", "--region", REGION,  # again: no change
                 "--endpoint-url", dynamodb_endpoint]) == 0
    assert "already exists (pk: S, sk: S, stream on" in capsys.readouterr().out


def test_a_worker_on_a_table_without_a_stream_says_how_to_turn_it_on(dynamodb_endpoint: str, dynamodb_table: str,
                                                                     ledger: Ledger,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    storage = DynamoDBStorage(dynamodb_table, region_name=REGION, endpoint_url=dynamodb_endpoint)
    with pytest.raises(DynamoDBConfigError, match=rf"statehitl dynamodb create-table {dynamodb_table} --stream"):
        TableStream(storage).start()
    url = f"dynamodb://{dynamodb_table}?region={REGION}&endpoint_url={dynamodb_endpoint}"
    monkeypatch.setenv(STORE_ENV, url)
    assert main(["worker", "--app", "worker_app:build", "--store", url, "--once"]) == 0  # --once needs no stream
    assert main(["worker", "--app", "worker_app:build", "--store", url]) == 2  # following it does: one line says so


def test_a_child_shard_is_read_only_after_its_parent() -> None:
    """Shard lineage (DynamoDB Local keeps one shard, so the rule is checked on the reader's own records)."""
    stream = TableStream.__new__(TableStream)
    stream._shards = {"parent": _Shard("parent", None), "child": _Shard("child", "parent"),
                      "orphan": _Shard("orphan", "gone-long-ago")}
    assert [s.id for s in stream._shards.values() if stream._ready(s)] == ["parent", "orphan"]
    stream._shards["parent"].done = True
    assert [s.id for s in stream._shards.values() if stream._ready(s)] == ["child", "orphan"]


def test_workers_on_the_dynamodb_stream_resume_answers_and_apply_expiries(streamed_store: str, ledger: Ledger,
                                                                          tmp_path: Path) -> None:
    app = build("t")
    app.invoke({"item": "before"}, thread_id="before")
    _answer(streamed_store, "before", "y")  # answered while no worker ran: the first pass over the index finds it
    secret = tmp_path / "secret"
    secret.write_text(SECRET.decode())
    secret.chmod(0o600)
    with Receiver(SECRET) as receiver:
        args = ["--app", "worker_app:build", "--store", streamed_store, "--interval", "0.1",
                "--on-interrupt", receiver.url, "--on-answer", receiver.url, "--webhook-secret-file", str(secret)]
        with workers(2, args, worker_env(streamed_store, ledger.root), tmp_path / "logs") as running:
            wait_for(lambda: "before ship y" in ledger.applied().values(), what="the first pass")
            wait_for(lambda: all("reading its stream" in w.log for w in running), what="the workers' start")
            for thread in ("s1", "s2"):
                app.invoke({"item": thread}, thread_id=thread)
            app.invoke({"item": "soon", "expires_in": 1.0, "on_expire": "timed out"}, thread_id="soon")
            wait_for(lambda: len(receiver.ids("interrupt")) >= 3, what="the interrupt events from the stream")
            _answer(streamed_store, "s1", "y")
            _answer(streamed_store, "s2", "n", responder="bob")
            wait_for(lambda: len(ledger.applied()) == 4, what="the stream-fed workers")
            for worker in running:
                assert worker.stop()[0] == 0, worker.log
        events = list(receiver.events)
        assert receiver.bad_signatures == 0

    assert len(ledger.attempts()) == 4  # each action once, though both workers read every answer
    assert sorted(ledger.applied().values()) == ["before ship y", "s1 ship y", "s2 ship n", "soon ship timed out"]
    [expired] = app.audit("soon")
    assert (expired.responder, expired.via) == ("expiry", "expiry")
    ids = [e["id"] for e in events]
    assert len(ids) == len(set(ids)), ids  # each event once across the two workers
    answered = sorted((e["thread_id"], e["via"]) for e in events if e["event"] == "answer")
    assert answered == [("before", "inbox"), ("s1", "inbox"), ("s2", "inbox"), ("soon", "expiry")]


def test_a_stream_worker_killed_mid_resume_is_finished_by_another(streamed_store: str, ledger: Ledger,
                                                                  tmp_path: Path) -> None:
    """The survivor read the same answer, lost the race for it, and looks again when the claim's lease ends."""
    build("t").invoke({"item": "book"}, thread_id="k1")
    hold = tmp_path / "hold"
    hold.mkdir()
    env = worker_env(streamed_store, ledger.root, **{HOLD_ENV: str(hold)})
    args = ["--app", "worker_app:build", "--store", streamed_store, "--interval", "0.1", "--lease", "2",
            "--retry-unknown"]
    first = WorkerProcess(args, env, tmp_path / "first.log")
    try:
        with workers(1, args, env, tmp_path / "second") as [second]:
            wait_for(lambda: "reading its stream" in first.log and "reading its stream" in second.log)
            _answer(streamed_store, "k1", "y")
            wait_for(lambda: (hold / "k1.started").exists() and (hold / "k1.started").read_text(), what="an action")
            acting = int((hold / "k1.started").read_text())
            killed, survivor = (first, second) if first.process.pid == acting else (second, first)
            assert killed.process.pid == acting
            killed.kill()
            (hold / "k1.go").touch()
            wait_for(lambda: build("t").get_state("k1").status.value == "completed", what="the survivor")
            assert survivor.stop()[0] == 0, survivor.log
    finally:
        if first.process.poll() is None:
            first.stop()
    attempts = ledger.attempts()
    assert len(set(attempts)) == 1  # one key ...
    assert len(attempts) in (1, 2)  # ... run again at most once (if the kill came after the action) ...
    assert list(ledger.applied().values()) == ["k1 ship y"]  # ... and applied once
    assert [e.outcome for e in build("t").audit("k1") if e.outcome == "applied"] == ["applied"]


def _stream_records(endpoint: str, table: str) -> tuple[str, list[dict[str, Any]]]:
    """Every record of the table's stream so far, as AWS Lambda delivers them (JSON, with eventSourceARN)."""
    streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=REGION)
    arn = streams.list_streams(TableName=table)["Streams"][0]["StreamArn"]
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            answer = streams.get_records(ShardIterator=iterator)
            records.extend(answer["Records"])
            if not answer["Records"]:
                break
            iterator = answer.get("NextShardIterator")
    streams.close()

    def as_lambda_gives_it(value: Any) -> Any:
        if isinstance(value, datetime.datetime):
            return value.timestamp()
        raise TypeError(type(value).__name__)

    event = json.loads(json.dumps(records, default=as_lambda_gives_it))
    for record in event:
        record["eventSourceARN"] = arn
    return arn, event


def test_the_lambda_handler_resumes_from_real_stream_records_once(streamed_store: str, ledger: Ledger,
                                                                  dynamodb_endpoint: str, dynamodb_table: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    app = build("t")
    for thread in ("l1", "l2", "l3"):
        app.invoke({"item": thread}, thread_id=thread)
    app.invoke({"item": "late", "expires_in": 0.5, "on_expire": "timed out"}, thread_id="late")
    _answer(streamed_store, "l1", "y")
    _answer(streamed_store, "l3", "n", responder="bob")
    _, records = _stream_records(dynamodb_endpoint, dynamodb_table)
    answer_keys = [k for r in records if (k := record_key(r)) and "/a." in k]
    assert len(answer_keys) == 2  # what the stream carries: the answers' own writes

    with Receiver(SECRET) as receiver:
        monkeypatch.setenv("STATEHITL_WORKER_STORE", streamed_store)
        monkeypatch.setenv("STATEHITL_WORKER_APPS", "worker_app:build")
        monkeypatch.setenv("STATEHITL_WORKER_ON_ANSWER", receiver.url)
        monkeypatch.setenv("STATEHITL_WEBHOOK_SECRET", SECRET.decode())
        assert lambda_handler({"Records": records}, None) == {"batchItemFailures": []}
        assert sorted(ledger.applied().values()) == ["l1 ship y", "l3 ship n"]
        assert lambda_handler({"Records": records}, None) == {"batchItemFailures": []}  # redelivered
        assert len(ledger.attempts()) == 2
        assert sorted(e["thread_id"] for e in receiver.events) == ["l1", "l3"]

        wait_for(lambda: time.time() > app.get_state("late").interrupts[0].expires_at)  # the deadline passes
        assert lambda_handler({"source": "aws.events", "detail-type": "Scheduled Event"}, None) == {
            "batchItemFailures": []}
        assert sorted(ledger.applied().values()) == ["l1 ship y", "l3 ship n", "late ship timed out"]
        assert sorted(e["thread_id"] for e in receiver.events) == ["l1", "l3", "late"]
        assert receiver.bad_signatures == 0
    assert [p.thread_id for p in inbox.pending(streamed_store)] == ["l2"]
    assert os.environ["STATEHITL_WORKER_APPS"] == "worker_app:build"


def test_the_worker_polls_the_index_on_s3(s3_server: str, s3_bucket: str, ledger: Ledger, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"s3://{s3_bucket}/app?region={REGION}&endpoint_url={s3_server}"
    monkeypatch.setenv(STORE_ENV, url)
    app = build("t")
    with workers(2, ["--app", "worker_app:build", "--store", url, "--interval", "0.1"], worker_env(url, ledger.root),
                 tmp_path / "logs") as running:
        for thread in ("o1", "o2"):
            app.invoke({"item": thread}, thread_id=thread)
            _answer(url, thread, "y")
        app.invoke({"item": "soon", "expires_in": 1.0}, thread_id="soon")
        wait_for(lambda: len(ledger.applied()) == 3, what="the polling workers")
        for worker in running:
            assert worker.stop()[0] == 0, worker.log
    assert len(ledger.attempts()) == 3
    assert sorted(ledger.applied().values()) == ["o1 ship y", "o2 ship y", "soon ship expired"]
    assert [(e.responder, e.via) for e in app.audit("soon")] == [("expiry", "expiry")]
