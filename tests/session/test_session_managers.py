"""Session managers on the file store: an agent interrupted under a session is resumed by a new Agent.

The approval hook is the seed's ("Session Management" in interrupts.md): ``BeforeToolCallEvent`` asks
before ``delete_files`` runs and records the answer in ``agent.state``. Every resume is done by a new
``Agent`` (and a new session manager object) built on the same session, as a server handling the
client's next request would; the multi-process cases run ``AGENT_APP`` in fresh interpreters.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import stored_records
from resume_processes import AGENT_APP, AGENT_FINAL, assert_one_agent_winner, race_agent_resumes, run_app, session_spec
from statehitl import Agent, tool
from statehitl.errors import (
    CheckpointCorruptError,
    InvalidResponseError,
    InvalidThreadIdError,
    NotInterruptedError,
    ResumeInputError,
    UnknownInterruptError,
)
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.models.scripted import ScriptedModel
from statehitl.session import SESSION_URL_ENV, FileSessionManager, SessionManager

PROMPT = "Delete the logs older than 5 days"
DELETE = {"role": "assistant", "content": [
    {"text": "Deleting the old logs."},
    {"toolUse": {"toolUseId": "tooluse_delete", "name": "delete_files", "input": {"paths": ["old.log", "older.log"]}}},
]}


class ApprovalHook(HookProvider):
    """The seed's hook: ask before deleting, unless the user said (t)rust earlier in the session."""

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        if event.agent.state.get(f"{self.app_name}-approval") == "t":
            return
        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() not in ["y", "t"]:
            event.cancel_tool = "User denied permission to delete files"
        event.agent.state.set(f"{self.app_name}-approval", approval.lower())


class Server:
    """Builds a new ``Agent`` per request on a session, like the seed's ``server()``; ``deleted`` logs the tool."""

    def __init__(self, make_session: Callable[[], SessionManager]) -> None:
        self.make_session = make_session
        self.deleted: list[list[str]] = []

        @tool
        def delete_files(paths: list[str]) -> str:
            """Delete files.

            Args:
                paths: The files to delete.
            """
            self.deleted.append(paths)
            return f"deleted {len(paths)} files"

        self.tool = delete_files

    def agent(self, *replies: Any, agent_id: str | None = None) -> Agent:
        return Agent(model=ScriptedModel(list(replies)), tools=[self.tool], hooks=[ApprovalHook("myapp")],
                     session_manager=self.make_session(), agent_id=agent_id, callback_handler=None)


def answer(result: Any, response: str = "y") -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in result.interrupts]


def read_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def session_maker(how: str, store: Path, env: pytest.MonkeyPatch) -> Callable[[], SessionManager]:
    """A new session manager object on session "myapp" of ``store`` per call, built the way ``how`` says."""
    if how == "FileSessionManager":
        return lambda: FileSessionManager(session_id="myapp", storage_dir=store)
    if how == "from_url(file://)":
        return lambda: SessionManager.from_url(f"file://{store}", session_id="myapp")
    if how == "from_url(plain path)":
        return lambda: SessionManager.from_url(str(store), session_id="myapp")
    assert how == SESSION_URL_ENV
    env.setenv(SESSION_URL_ENV, f"file://{store}")
    return lambda: SessionManager.from_url(session_id="myapp")


# -- interrupt, then resume from a new Agent ------------------------------------------------------------------


@pytest.mark.parametrize("how", ["FileSessionManager", "from_url(file://)", "from_url(plain path)", SESSION_URL_ENV])
def test_a_new_agent_on_the_session_resumes_the_interrupt(how: str, store: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(session_maker(how, store, monkeypatch))
    first = server.agent(DELETE)
    first.state.set("owner", "ops")
    result = first(PROMPT)
    assert result.stop_reason == "interrupt"
    [pending] = result.interrupts
    assert (pending.name, pending.reason) == ("myapp-approval", {"paths": ["old.log", "older.log"]})
    assert server.deleted == []
    assert stored_records.keys(store, "threads/myapp/")  # the default agent's thread is the session id

    second = server.agent(AGENT_FINAL)  # scripted with the final answer only
    assert second.messages == first.messages
    assert second.state.get() == first.state.get() == {"owner": "ops"}
    done = second(answer(result))
    assert (done.stop_reason, done.message) == ("end_turn", {"role": "assistant", "content": [{"text": AGENT_FINAL}]})
    assert server.deleted == [["old.log", "older.log"]]
    # the model was asked once, after the tool ran: its only request already holds the tool's result
    assert second.model.calls == 1  # type: ignore[attr-defined]
    [request] = second.model.requests  # type: ignore[attr-defined]
    assert request["messages"][-1]["content"] == [
        {"toolResult": {"toolUseId": "tooluse_delete", "status": "success", "content": [{"text": "deleted 2 files"}]}}
    ]
    assert second.state.get() == {"owner": "ops", "myapp-approval": "y"}

    third = server.agent()  # what the session holds now
    assert third.messages == second.messages
    assert [m["role"] for m in third.messages] == ["user", "assistant", "user", "assistant"]
    assert third.state.get() == {"owner": "ops", "myapp-approval": "y"}
    with pytest.raises(NotInterruptedError, match="not waiting on any interrupt"):
        third(answer(result))
    assert server.deleted == [["old.log", "older.log"]]


def test_a_trust_answer_is_kept_in_the_session_and_skips_the_next_interrupt(store: Path) -> None:
    server = Server(lambda: FileSessionManager("myapp", store))
    result = server.agent(DELETE)(PROMPT)
    assert server.agent("Done.")(answer(result, "t")).stop_reason == "end_turn"

    later = server.agent(DELETE, "Done again.")  # a later request: the trust answer came from the store
    assert later.state.get("myapp-approval") == "t"
    assert later("And the new ones too").stop_reason == "end_turn"
    assert server.deleted == [["old.log", "older.log"]] * 2
    assert later.model.calls == 2  # type: ignore[attr-defined]


def test_a_denial_cancels_the_tool_and_is_saved(store: Path) -> None:
    server = Server(lambda: FileSessionManager("myapp", store))
    result = server.agent(DELETE)(PROMPT)
    done = server.agent("I did not delete anything.")(answer(result, "n"))
    assert done.stop_reason == "end_turn"
    assert server.deleted == []
    restored = server.agent()
    [tool_result] = [b["toolResult"] for b in restored.messages[2]["content"]]
    assert tool_result["status"] == "error"
    assert "User denied permission to delete files" in str(tool_result["content"])
    assert restored.state.get() == {"myapp-approval": "n"}


# -- rejected resumes leave the session as it was ------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "error", "match"),
    [
        ("y", ResumeInputError, "waiting on interrupts"),
        (PROMPT, TypeError, "resume it with a list"),
        ([{"interruptResponse": {"interruptId": "v1:not-an-id", "response": "y"}}], UnknownInterruptError,
         "'v1:not-an-id'"),
        ([{"interruptResponse": {"interruptId": "v1:not-an-id", "response": "y"}}], KeyError, "not pending"),
        ([{"text": "y"}], ResumeInputError, "interruptResponse"),
        ([{"toolResult": {"toolUseId": "tooluse_delete", "status": "success", "content": []}}], TypeError,
         "interruptResponse"),
        ([], InvalidResponseError, "empty"),
    ],
    ids=["answer-as-str", "prompt", "unknown-id", "unknown-id-is-a-KeyError", "text-block", "toolResult-block",
         "empty-list"],
)
def test_a_bad_resume_raises_and_leaves_the_session_files_byte_identical(
        payload: Any, error: type[Exception], match: str, store: Path) -> None:
    server = Server(lambda: FileSessionManager("myapp", store))
    result = server.agent(DELETE)(PROMPT)
    before = read_tree(store)

    resumer = server.agent(AGENT_FINAL)
    with pytest.raises(error, match=match):
        resumer(payload)
    assert read_tree(store) == before
    assert server.deleted == []
    assert resumer.model.calls == 0  # type: ignore[attr-defined]

    # the same agent object, and the session, still take the right answer
    assert resumer(answer(result)).stop_reason == "end_turn"
    assert server.deleted == [["old.log", "older.log"]]


def test_a_mixed_list_is_rejected_whole(store: Path) -> None:
    """A valid answer next to a non-interruptResponse block is not half-applied."""
    server = Server(lambda: FileSessionManager("myapp", store))
    result = server.agent(DELETE)(PROMPT)
    before = read_tree(store)
    with pytest.raises(ResumeInputError, match="item 1"):
        server.agent(AGENT_FINAL)([*answer(result), {"text": "and also this"}])
    assert read_tree(store) == before
    assert server.deleted == []


# -- from_url and the environment variable ---------------------------------------------------------------------


def test_from_url_without_a_url_or_the_env_var_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SESSION_URL_ENV, raising=False)
    with pytest.raises(ValueError, match=f"no url and {SESSION_URL_ENV} is not set") as raised:
        SessionManager.from_url(session_id="myapp")
    assert "file://" in str(raised.value)
    monkeypatch.setenv(SESSION_URL_ENV, "")
    with pytest.raises(ValueError, match=SESSION_URL_ENV):
        SessionManager.from_url(session_id="myapp")


def test_an_explicit_url_wins_over_the_env_var(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SESSION_URL_ENV, f"file://{tmp_path / 'elsewhere'}")
    server = Server(lambda: SessionManager.from_url(f"file://{store}", session_id="myapp"))
    assert server.agent(DELETE)(PROMPT).stop_reason == "interrupt"
    assert stored_records.keys(store, "threads/myapp/")
    assert not (tmp_path / "elsewhere").exists()


def test_from_url_passes_checkpointer_options(store: Path) -> None:
    """``signing_key=`` reaches the Checkpointer: a session signed with one key is refused under another."""
    signed = Server(lambda: SessionManager.from_url(str(store), session_id="myapp", signing_key=b"k" * 32))
    result = signed.agent(DELETE)(PROMPT)
    assert signed.agent(AGENT_FINAL).messages == [{"role": "user", "content": [{"text": PROMPT}]}]
    other_key = Server(lambda: SessionManager.from_url(str(store), session_id="myapp", signing_key=b"x" * 32))
    with pytest.raises(CheckpointCorruptError, match="signature"):
        other_key.agent()
    assert signed.agent(AGENT_FINAL)(answer(result)).stop_reason == "end_turn"


# -- ids ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["../x", "a/b", "a\\b", "..", ".hidden", "-x", "", "x" * 201, "s@a", "with space"])
@pytest.mark.parametrize("make", [
    lambda bad, store: FileSessionManager(bad, store),
    lambda bad, store: SessionManager.from_url(f"file://{store}", session_id=bad),
], ids=["FileSessionManager", "from_url"])
def test_an_unsafe_session_id_is_refused_before_anything_is_written(
        bad: str, make: Callable[[str, Path], SessionManager], store: Path) -> None:
    with pytest.raises(InvalidThreadIdError, match="session id") as raised:
        make(bad, store)
    assert isinstance(raised.value, ValueError)
    assert repr(bad) in str(raised.value)
    assert not store.exists() or read_tree(store) == {}


@pytest.mark.parametrize("bad", ["x/y", "../x", "a\\b", "x" * 200])
def test_an_unsafe_agent_id_is_refused_when_the_agent_is_built(bad: str, store: Path) -> None:
    server = Server(lambda: FileSessionManager("myapp", store))
    with pytest.raises(InvalidThreadIdError, match="agent id") as raised:
        server.agent(DELETE, agent_id=bad)
    assert isinstance(raised.value, ValueError)
    assert not store.exists() or read_tree(store) == {}


def test_thread_ids_of_different_sessions_never_collide(store: Path) -> None:
    """``@`` joins session and agent ids, so a session id may not contain it: otherwise agent "a" of
    session "s" and the default agent of session "s@a" would share (and overwrite) one thread."""
    session = FileSessionManager("s", store)
    assert (session.thread_id("default"), session.thread_id("a"), session.thread_id("a@b")) == ("s", "s@a", "s@a@b")
    with pytest.raises(InvalidThreadIdError, match="'@'"):
        FileSessionManager("s@a", store)


# -- several agents in one session -----------------------------------------------------------------------------


def test_agents_with_different_ids_in_one_session_are_separate_threads(store: Path) -> None:
    server = Server(lambda: FileSessionManager("myapp", store))
    cleaner = server.agent(DELETE, agent_id="cleaner")
    planner = server.agent("Plan: delete the old logs.", agent_id="planner")
    planner.state.set("plan", 1)
    paused = cleaner(PROMPT)
    assert paused.stop_reason == "interrupt"
    assert planner("Make a plan").stop_reason == "end_turn"  # not blocked by the cleaner's interrupt
    assert {key.split("/")[1] for key in stored_records.keys(store, "threads/")} == {"myapp@cleaner", "myapp@planner"}

    cleaner_again, planner_again, default = (server.agent(AGENT_FINAL, agent_id="cleaner"),
                                             server.agent(agent_id="planner"), server.agent())
    assert cleaner_again.messages == [{"role": "user", "content": [{"text": PROMPT}]}]
    assert planner_again.messages == planner.messages
    assert [m["content"][0]["text"] for m in planner_again.messages] == ["Make a plan", "Plan: delete the old logs."]
    assert (cleaner_again.state.get(), planner_again.state.get()) == ({}, {"plan": 1})
    assert default.messages == []

    # the cleaner's interrupt belongs to the cleaner's thread only
    with pytest.raises(NotInterruptedError):
        server.agent(agent_id="planner")(answer(paused))
    with pytest.raises(NotInterruptedError):
        default(answer(paused))
    assert server.deleted == []
    assert cleaner_again(answer(paused)).stop_reason == "end_turn"
    assert server.deleted == [["old.log", "older.log"]]
    assert server.agent(agent_id="planner").messages == planner.messages


# -- across processes --------------------------------------------------------------------------------------------


@pytest.fixture
def agent_app(tmp_path: Path) -> Path:
    path = tmp_path / "agent_app.py"
    path.write_text(AGENT_APP)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["url", "file", "env"])
def test_interrupt_in_one_process_resume_in_another(kind: str, agent_app: Path, store: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if kind == "env":
        monkeypatch.setenv(SESSION_URL_ENV, f"file://{store}")  # the subprocesses inherit it
        spec = session_spec("url")
    else:
        spec = session_spec(kind, f"file://{store}" if kind == "url" else str(store))
    deleted = agent_app.parent / "deleted.txt"

    first = run_app(agent_app, "start", spec, "ticket-7")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert (pending["name"], pending["reason"]) == ("myapp-approval", {"paths": ["old.log", "older.log"]})
    assert not deleted.exists()

    second = run_app(agent_app, "resume", spec, "ticket-7", pending["id"], "y")
    assert (second["stop_reason"], second["message"]["content"]) == ("end_turn", [{"text": AGENT_FINAL}])
    assert second["model_calls"] == 1
    assert "toolResult" in second["model_saw"][0][-1]["content"][0]  # the tool ran before the model was asked
    assert deleted.read_text() == f"{second['pid']} old.log older.log\n"
    assert second["state"] == {"myapp-approval": "y"}
    assert Server(lambda: FileSessionManager("ticket-7", store)).agent().messages == second["messages"]


@pytest.mark.slow
def test_concurrent_resumes_in_separate_processes_run_the_tool_once(agent_app: Path, store: Path) -> None:
    spec = session_spec("url", f"file://{store}")
    [pending] = run_app(agent_app, "start", spec, "ticket-8")["interrupts"]
    winner = assert_one_agent_winner(race_agent_resumes(agent_app, spec, "ticket-8", pending["id"]),
                                     agent_app.parent / "deleted.txt")
    assert Server(lambda: FileSessionManager("ticket-8", store)).agent().messages == winner["messages"]


def test_an_agent_a_request_built_is_freed_when_dropped(store: Path) -> None:
    """No reference cycle: the agent and its storage go as soon as the request drops them, without
    waiting for the cycle collector (which a busy server runs rarely). The logs it wrote stay open
    for the next request's storage (``file_handles``)."""
    import gc
    import weakref

    server = Server(lambda: FileSessionManager(session_id="myapp", storage_dir=store))
    gc.collect()
    gc.disable()
    try:
        agent = server.agent(DELETE)
        assert agent(PROMPT).stop_reason == "interrupt"
        storage = agent.session_manager.checkpointer.storage
        dropped = weakref.ref(agent), weakref.ref(storage)
        del agent, storage
        assert [ref() for ref in dropped] == [None, None]
    finally:
        gc.enable()


@pytest.mark.parametrize("how", ["default", "FileSessionManager", "url"])
def test_a_file_session_is_stored_compressed_unless_told_not_to(store: Path, how: str) -> None:
    """Compressed by default; ``FileSessionManager(..., compress=False)`` or ``compress=false`` in the
    session URL writes plain JSON (as a fleet with older readers must), and each kind resumes the other."""
    make: dict[str, Callable[[], SessionManager]] = {
        "default": lambda: FileSessionManager("myapp", store),
        "FileSessionManager": lambda: FileSessionManager("myapp", store, compress=False),
        "url": lambda: SessionManager.from_url(f"file://{store}?compress=false", session_id="myapp"),
    }
    server = Server(make[how])
    paused = server.agent(DELETE)(PROMPT)
    assert paused.stop_reason == "interrupt"
    thread = server.make_session().thread_id("default")
    records = [stored_records.read(store, key) for key in stored_records.keys(store, f"threads/{thread}/")]
    assert records
    assert all(r.startswith(b"\x00z1" if how == "default" else b"{") for r in records), records
    other = Server(lambda: FileSessionManager("myapp", store, compress=how != "default"))
    done = other.agent("Deleted them.")(answer(paused))
    assert done.stop_reason == "end_turn"
    assert (server.deleted, other.deleted) == ([], [["old.log", "older.log"]])
