"""Agent sessions on S3 and DynamoDB, against real servers (moto_server, DynamoDB Local) on loopback.

``S3SessionManager``, ``DynamoDBSessionManager`` and ``SessionManager.from_url`` with ``s3://`` and
``dynamodb://`` URLs (``region`` and ``endpoint_url`` query parameters, or ``STATEHITL_SESSION_URL``).
An agent whose approval hook interrupts before ``delete_files`` is started in one interpreter and
answered in another (``AGENT_APP`` in ``resume_processes.py``): nothing but the store connects them.
Then several interpreters answer the same interrupt at once, and exactly one of them deletes.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from statehitl_checkpoint_dynamodb import DynamoDBConfigError, DynamoDBStorage, DynamoDBTableNotFoundError
from statehitl_checkpoint_s3 import BucketNotFoundError, S3Storage
from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

from resume_processes import AGENT_APP, AGENT_FINAL, assert_one_agent_winner, race_agent_resumes, run_app, session_spec
from statehitl import Agent
from statehitl.errors import InvalidThreadIdError, NotInterruptedError
from statehitl.models.scripted import ScriptedModel
from statehitl.session import SESSION_URL_ENV, DynamoDBSessionManager, S3SessionManager, SessionManager

REGION = "us-east-1"
PREFIX = "sessions"


@pytest.fixture(autouse=True)
def aws_env(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials (for the clients here and in the subprocesses); never a real profile or endpoint.

    After ``s3_server``, whose session-long credentials this must not undo when it restores the
    environment at the end of a test."""
    for name in AWS_ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(SESSION_URL_ENV, raising=False)


@dataclass(frozen=True)
class Backend:
    """One store on a test server, named three ways: the session manager's constructor, a URL, the env var."""

    kind: str
    constructor: str
    """``AGENT_APP`` SPEC for ``S3SessionManager`` / ``DynamoDBSessionManager``."""
    url: str
    """The same store as a session URL."""

    def spec(self, how: str, monkeypatch: pytest.MonkeyPatch) -> str:
        if how == "constructor":
            return self.constructor
        if how == "url":
            return session_spec("url", self.url)
        assert how == "env"
        monkeypatch.setenv(SESSION_URL_ENV, self.url)  # the subprocesses inherit it
        return session_spec("url")

    def session(self, session_id: str) -> SessionManager:
        return SessionManager.from_url(self.url, session_id=session_id)


@pytest.fixture(params=["s3", "dynamodb"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Started lazily: a DynamoDB-only run never starts moto_server, and the reverse."""
    if request.param == "s3":
        endpoint: str = request.getfixturevalue("s3_server")
        bucket: str = request.getfixturevalue("s3_bucket")
        options = {"endpoint_url": endpoint, "region_name": REGION}
        return Backend("s3", session_spec("s3", bucket, PREFIX, **options),
                       f"s3://{bucket}/{PREFIX}?region={REGION}&endpoint_url={endpoint}")
    endpoint = request.getfixturevalue("dynamodb_endpoint")
    table: str = request.getfixturevalue("dynamodb_table")
    options = {"endpoint_url": endpoint, "region_name": REGION}
    return Backend("dynamodb", session_spec("dynamodb", table, **options),
                   f"dynamodb://{table}?region={REGION}&endpoint_url={endpoint}")


@pytest.fixture
def agent_app(tmp_path: Path) -> Path:
    path = tmp_path / "agent_app.py"
    path.write_text(AGENT_APP)
    return path


def build_here(agent_app: Path, session: SessionManager, *replies: Any, agent_id: str | None = None) -> Any:
    """``AGENT_APP``'s agent (same tool and hook), built in this process on ``session``."""
    app = runpy.run_path(str(agent_app))
    return Agent(model=ScriptedModel(list(replies)), tools=[app["delete_files"]], hooks=[app["ApprovalHook"]("myapp")],
                 session_manager=session, agent_id=agent_id, callback_handler=None)


def thread_status(session: SessionManager, thread_id: str) -> str | None:
    info = asyncio.run(session.checkpointer.thread_info(thread_id))
    return None if info is None else str(info.status)


# -- interrupt in one process, resume in another ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("start_with", "resume_with"), [
    ("constructor", "constructor"),
    ("url", "url"),
    ("constructor", "url"),  # the manager and the URL name the same objects/items
    ("env", "env"),
])
def test_interrupt_in_one_process_resume_in_another(backend: Backend, start_with: str, resume_with: str,
                                                    agent_app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deleted = agent_app.parent / "deleted.txt"
    first = run_app(agent_app, "start", backend.spec(start_with, monkeypatch), "ticket-1")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert (pending["name"], pending["reason"]) == ("myapp-approval", {"paths": ["old.log", "older.log"]})
    assert not deleted.exists()
    session = backend.session("ticket-1")
    assert thread_status(session, "ticket-1") == "interrupted"
    parked = build_here(agent_app, session)
    assert (parked.messages, parked.state.get()) == (first["messages"], first["state"])

    second = run_app(agent_app, "resume", backend.spec(resume_with, monkeypatch), "ticket-1", pending["id"], "y")
    assert (second["stop_reason"], second["message"]["content"]) == ("end_turn", [{"text": AGENT_FINAL}])
    assert second["model_calls"] == 1  # scripted with the final answer only: no model call before the tool
    assert second["model_saw"][0][-1]["content"] == [{"toolResult": {
        "toolUseId": "tooluse_delete", "status": "success", "content": [{"text": "deleted 2 files"}]}}]
    assert deleted.read_text() == f"{second['pid']} old.log older.log\n"
    assert second["state"] == {"myapp-approval": "y"}

    assert thread_status(session, "ticket-1") == "completed"
    history = asyncio.run(session.checkpointer.history("ticket-1"))
    assert [str(h.status) for h in history].count("interrupted") == 1
    restored = build_here(agent_app, backend.session("ticket-1"))
    assert (restored.messages, restored.state.get()) == (second["messages"], second["state"])
    with pytest.raises(NotInterruptedError):
        restored([{"interruptResponse": {"interruptId": pending["id"], "response": "y"}}])
    assert deleted.read_text() == f"{second['pid']} old.log older.log\n"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["constructor", "url"])
def test_a_session_stored_compressed_is_resumed_by_a_process_set_not_to_compress(
        backend: Backend, how: str, agent_app: Path) -> None:
    """The default stores the records on the server compressed; another interpreter set not to compress
    (``checkpointer_options={"compress": False}``, or ``compress=false`` in the session URL, as a fleet
    with older readers would be) answers the interrupt from them and writes plain JSON after them."""
    [pending] = run_app(agent_app, "start", backend.constructor, "ticket-z")["interrupts"]
    storage = backend.session("ticket-z").checkpointer.storage

    def stored() -> list[bytes]:
        keys = [key for key in asyncio.run(storage.list("threads/ticket-z/"))  # newest first
                if key.rsplit("/", 1)[1].isdigit()]  # checkpoints and claims, not the answer
        found = [asyncio.run(storage.read(key)) for key in keys]
        assert keys
        assert None not in found, keys
        return [value for value, _ in filter(None, found)]

    paused = stored()
    assert all(value.startswith(b"\x00z1") for value in paused), paused  # compressed, not JSON
    spec = json.loads(backend.constructor)
    plain = (session_spec(spec["kind"], *spec["args"], **spec["options"], checkpointer_options={"compress": False})
             if how == "constructor" else session_spec("url", f"{backend.url}&compress=false"))
    second = run_app(agent_app, "resume", plain, "ticket-z", pending["id"], "y")
    assert (second["stop_reason"], second["message"]["content"]) == ("end_turn", [{"text": AGENT_FINAL}])
    assert (agent_app.parent / "deleted.txt").read_text() == f"{second['pid']} old.log older.log\n"
    assert thread_status(backend.session("ticket-z"), "ticket-z") == "completed"
    resumed = stored()
    assert resumed[len(resumed) - len(paused):] == paused
    assert all(value.startswith(b"{") for value in resumed[: len(resumed) - len(paused)]), resumed


@pytest.mark.slow
@pytest.mark.parametrize("how", ["constructor", "url"])
def test_concurrent_resumes_in_separate_processes_run_the_tool_once(backend: Backend, how: str, agent_app: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    spec = backend.spec(how, monkeypatch)
    [pending] = run_app(agent_app, "start", spec, "ticket-2")["interrupts"]
    outcomes = race_agent_resumes(agent_app, spec, "ticket-2", pending["id"], processes=4)
    winner = assert_one_agent_winner(outcomes, agent_app.parent / "deleted.txt")
    restored = build_here(agent_app, backend.session("ticket-2"))
    assert restored.messages == winner["messages"]
    assert [m["role"] for m in restored.messages] == ["user", "assistant", "user", "assistant"]
    assert thread_status(backend.session("ticket-2"), "ticket-2") == "completed"


# -- in one process: layout, agents, options, errors ------------------------------------------------------------


def test_agents_of_one_session_are_separate_threads_in_the_store(backend: Backend, agent_app: Path) -> None:
    session = backend.session("ops")
    cleaner = build_here(agent_app, session, runpy.run_path(str(agent_app))["DELETE"], agent_id="cleaner")
    assert cleaner("Delete the logs").stop_reason == "interrupt"
    helper = build_here(agent_app, backend.session("ops"), "Hello.", agent_id="helper")
    assert helper("Hi").stop_reason == "end_turn"
    threads = asyncio.run(session.checkpointer.threads())
    assert sorted((t.thread_id, str(t.status)) for t in threads) == [
        ("ops@cleaner", "interrupted"), ("ops@helper", "completed")]
    assert build_here(agent_app, backend.session("ops"), agent_id="helper").messages == helper.messages
    assert build_here(agent_app, backend.session("ops")).messages == []  # the default agent has no thread yet


def test_s3_session_manager_keeps_its_objects_under_the_prefix(s3_server: str, s3_bucket: str, s3_admin: Any,
                                                              s3_session: Any, agent_app: Path) -> None:
    session = S3SessionManager("ticket-3", s3_bucket, PREFIX, session=s3_session, endpoint_url=s3_server)
    assert isinstance(session.checkpointer.storage, S3Storage)
    agent = build_here(agent_app, session, runpy.run_path(str(agent_app))["DELETE"])
    assert agent("Delete the logs").stop_reason == "interrupt"
    keys = [o["Key"] for o in s3_admin.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert any(k.startswith(f"{PREFIX}/threads/ticket-3/") for k in keys), keys
    assert all(k.startswith(f"{PREFIX}/") for k in keys), keys


def test_checkpointer_options_reach_the_checkpointer(s3_server: str, s3_bucket: str, s3_session: Any,
                                                     dynamodb_endpoint: str, dynamodb_table: str) -> None:
    key = b"k" * 32
    s3 = S3SessionManager("s", s3_bucket, checkpointer_options={"signing_key": key}, session=s3_session,
                          endpoint_url=s3_server)
    dynamodb = DynamoDBSessionManager("s", dynamodb_table, checkpointer_options={"signing_key": key},
                                      endpoint_url=dynamodb_endpoint, region_name=REGION, ttl_seconds=3600)
    assert s3.checkpointer.signing_key == dynamodb.checkpointer.signing_key == key
    assert isinstance(dynamodb.checkpointer.storage, DynamoDBStorage)
    assert dynamodb.checkpointer.storage.ttl_seconds == 3600


def test_a_missing_bucket_or_table_is_named_when_the_agent_loads_its_session(
        s3_server: str, s3_session: Any, dynamodb_endpoint: str, agent_app: Path) -> None:
    with pytest.raises(BucketNotFoundError, match="no-such-bucket"):
        build_here(agent_app, S3SessionManager("s", "no-such-bucket", session=s3_session, endpoint_url=s3_server))
    with pytest.raises(DynamoDBTableNotFoundError, match="no-such-table"):
        build_here(agent_app, DynamoDBSessionManager("s", "no-such-table", endpoint_url=dynamodb_endpoint,
                                                     region_name=REGION))


@pytest.mark.parametrize(("url", "error", "match"), [
    ("s3://bucket/prefix?regoin=eu-west-1", ValueError, "regoin"),
    ("dynamodb://table?regoin=eu-west-1", DynamoDBConfigError, "known options"),
    ("dynamodb://table/extra", DynamoDBConfigError, "names only a table"),
])
def test_a_bad_session_url_fails_before_any_request(url: str, error: type[Exception], match: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(error, match=match):
        SessionManager.from_url(url, session_id="s")
    monkeypatch.setenv(SESSION_URL_ENV, url)
    with pytest.raises(error, match=match):
        SessionManager.from_url(session_id="s")


@pytest.mark.parametrize("make", [
    lambda bad: S3SessionManager(bad, "bucket", PREFIX, region_name=REGION),
    lambda bad: DynamoDBSessionManager(bad, "table", region_name=REGION),
    lambda bad: SessionManager.from_url(f"s3://bucket/{PREFIX}?region={REGION}", session_id=bad),
    lambda bad: SessionManager.from_url(f"dynamodb://table?region={REGION}", session_id=bad),
], ids=["S3SessionManager", "DynamoDBSessionManager", "from_url(s3)", "from_url(dynamodb)"])
@pytest.mark.parametrize("bad", ["../x", "a/b", "s@a"])
def test_an_unsafe_session_id_is_refused(make: Callable[[str], SessionManager], bad: str) -> None:
    with pytest.raises(InvalidThreadIdError, match="session id"):
        make(bad)
