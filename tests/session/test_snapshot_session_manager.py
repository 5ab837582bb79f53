"""``SnapshotSessionManager`` side by side with Strands 1.62's, then what statehitl's keeps differently.

The programs run on both frameworks, each on its own ``LocalFileStorage`` (or ``InMemoryStorage``), and
must observe the same: which snapshots exist under which keys, what a restore or a new agent on the
session finds, what ``save_snapshot`` returns, the errors, and what ``delete_session`` leaves. Strands
stores each snapshot as a copy of the agent; statehitl stores a reference to a checkpoint of the agent's
thread (the tests after the side-by-side ones).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import strands.session
import strands.storage

from snapshot_sessions import framework, keys, time_travel
from statehitl import Agent, tool
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel
from statehitl.session import SnapshotSessionManager
from statehitl.storage import InMemoryStorage, LocalFileStorage
from strands_side import conversation, side, uses


def test_snapshots_time_travel_and_session_deletion_as_in_strands(tmp_path: Path) -> None:
    theirs = time_travel("strands", strands.storage.LocalFileStorage(str(tmp_path / "strands")))
    assert time_travel("statehitl", LocalFileStorage(tmp_path / "statehitl")) == theirs
    prefix = "session/s1/scopes/agent/default/snapshots/"
    assert theirs[1] == [f"{prefix}immutable_history/snapshot_<uuid7>.json"] * 2 + [f"{prefix}snapshot_latest.json"]
    assert theirs[3] == (2, {})
    assert theirs[5] == (4, "sp", {})  # the saved system prompt replaces the constructor's
    assert theirs[-1] == []


def refusals(name: str) -> list[tuple[str, str]]:
    on = side(name)
    sessions, stores, null = framework(name)
    manager = sessions.SnapshotSessionManager("r", storage=stores.InMemoryStorage())
    agent = on.Agent(model=on.model([]), callback_handler=None, conversation_manager=null(), session_manager=manager)
    attempts = [
        lambda: asyncio.run(manager.restore_snapshot(agent, snapshot_id="x")),
        lambda: asyncio.run(manager.list_snapshot_ids(agent, start_after="../escape")),
        lambda: sessions.SnapshotSessionManager("s", save_latest_on="bogus"),
        lambda: sessions.SnapshotSessionManager("s", bidi_agent_save_latest_on="bogus"),
        lambda: sessions.SnapshotSessionManager("s", multi_agent_save_latest_on="bogus"),
    ]
    outcomes = []
    for attempt in attempts:
        with pytest.raises(ValueError) as raised:  # noqa: PT011 - the message is compared below
            attempt()
        outcomes.append((type(raised.value).__name__, str(raised.value)))
    return outcomes


def test_bad_ids_and_strategies_are_refused_with_strands_errors() -> None:
    theirs = refusals("strands")
    assert refusals("statehitl") == theirs
    assert theirs[0] == ("ValueError", "'x' is not a valid snapshot id")


def latest_on_trigger(name: str) -> list[Any]:
    on = side(name)
    sessions, stores, null = framework(name)
    storage, firing = stores.InMemoryStorage(), []

    def build(script: list[Any], session_id: str = "t", trigger: Any = None) -> Any:
        manager = sessions.SnapshotSessionManager(
            session_id, storage=storage, save_latest_on="trigger",
            snapshot_trigger=trigger or (lambda *, agent_data, **kwargs: bool(firing)))
        return on.Agent(model=on.model(script), callback_handler=None, conversation_manager=null(),
                        session_manager=manager)

    def raising(**kwargs: Any) -> bool:
        raise RuntimeError("the trigger failed")

    agent = build(["a1", "a2", "a3"])
    agent("one")
    seen: list[Any] = [len(build([]).messages)]  # nothing triggered yet: a new agent starts empty
    firing.append(True)
    agent("two")
    firing.clear()
    agent("three")
    later = build(["b1"])
    seen += [len(later.messages), str(later("after")).strip(), len(build([]).messages)]
    build(["x"], "u", raising)("hi")  # a failing trigger still saves the latest
    seen.append(len(build([], "u").messages))
    return seen


def test_under_the_trigger_strategy_a_new_agent_starts_from_the_last_triggered_snapshot() -> None:
    theirs = latest_on_trigger("strands")
    assert latest_on_trigger("statehitl") == theirs
    assert theirs == [0, 4, "b1", 4, 2]


def default_storage(name: str, directory: Path) -> list[Any]:
    on = side(name)
    sessions, stores, null = framework(name)
    agent_storage = stores.InMemoryStorage()
    first = on.Agent(model=on.model(["one"]), callback_handler=None, conversation_manager=null(),
                     storage=agent_storage, session_manager=sessions.SnapshotSessionManager("d"))
    first("hi")
    on_disk = on.Agent(model=on.model(["two"]), callback_handler=None, conversation_manager=null(),
                       session_manager=sessions.SnapshotSessionManager("d"))
    on_disk("hello")
    again = on.Agent(model=on.model([]), callback_handler=None, conversation_manager=null(), storage=agent_storage,
                     session_manager=sessions.SnapshotSessionManager("d"))
    return [keys(agent_storage), keys(stores.LocalFileStorage(str(directory / ".strands"))),
            [m["content"][0]["text"] for m in again.messages]]


def test_without_storage_the_agents_storage_is_used_else_a_local_directory(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "strands").mkdir()
    (tmp_path / "statehitl").mkdir()
    monkeypatch.chdir(tmp_path / "strands")
    theirs = default_storage("strands", tmp_path / "strands")
    monkeypatch.chdir(tmp_path / "statehitl")
    assert default_storage("statehitl", tmp_path / "statehitl") == theirs
    assert theirs[0] == theirs[1] == ["session/d/scopes/agent/default/snapshots/snapshot_latest.json"]
    assert theirs[2] == ["hi", "one"]


# -- statehitl's own: the history is the thread's checkpoints ------------------------------------------


def test_a_saved_snapshot_is_a_reference_to_a_checkpoint_not_a_copy(tmp_path: Path) -> None:
    storage = LocalFileStorage(tmp_path)
    manager = SnapshotSessionManager("ref", storage=storage,
                                     snapshot_trigger=lambda *, agent_data, **kwargs: True)
    agent = Agent(model=ScriptedModel(["x" * 5000, "y" * 5000]), callback_handler=None, session_manager=manager,
                  system_prompt="sp")
    agent("first")
    agent("second")
    (newest,) = asyncio.run(manager.list_snapshot_ids(agent, start_after=asyncio.run(
        manager.list_snapshot_ids(agent))[0]))
    stored = asyncio.run(storage.read(f"session/ref/scopes/agent/default/snapshots/immutable_history/"
                                      f"snapshot_{newest}.json"))
    assert stored is not None
    assert len(stored) < 600  # the conversation (10 KB of replies) is not in it
    data = json.loads(stored)["data"]
    assert set(data) == {"checkpoint", "conversation_manager_state", "system_prompt", "model_state"}
    record = asyncio.run(agent.checkpointer.latest(agent.thread_id))
    assert record is not None
    assert data["checkpoint"]["checkpoint_id"] == record.checkpoint_id
    assert asyncio.run(agent.checkpointer.count_checkpoints(agent.thread_id)) == 2  # a call, a checkpoint: no copy


def test_restoring_forks_the_thread_and_keeps_every_branch(tmp_path: Path) -> None:
    manager = SnapshotSessionManager("fork", storage=InMemoryStorage(),
                                     snapshot_trigger=lambda *, agent_data, **kwargs: len(agent_data.messages) == 2)
    agent = Agent(model=ScriptedModel(["a", "b", "c"]), callback_handler=None, session_manager=manager)
    agent("one")
    agent("two")
    (first,) = asyncio.run(manager.list_snapshot_ids(agent))
    assert asyncio.run(manager.restore_snapshot(agent, snapshot_id=first))
    agent("other way")
    history = asyncio.run(agent.checkpointer.history(agent.thread_id))
    assert [(h.seq, h.parent_seq) for h in history] == [(2, 0), (1, 0), (0, None)]
    assert [m["content"][0]["text"] for m in agent.messages] == ["one", "a", "other way", "c"]


def test_a_waiting_agent_of_a_snapshot_session_is_resumed_by_a_new_agent(tmp_path: Path) -> None:
    runs: list[str] = []

    @tool
    def delete_files(paths: list[str]) -> bool:
        """Delete files."""
        runs.extend(paths)
        return True

    def build() -> Agent:
        agent = Agent(model=ScriptedModel([uses("t1", "delete_files", {"paths": ["a"]}), "deleted"],
                                          keyed_by="position"),
                      tools=[delete_files], callback_handler=None,
                      session_manager=SnapshotSessionManager("app", storage=LocalFileStorage(tmp_path)))

        def approve(event: BeforeToolCallEvent) -> None:
            if event.interrupt("myapp-approval", reason={"paths": event.tool_use["input"]["paths"]}) != "y":
                event.cancel_tool = "denied"

        agent.add_hook(BeforeToolCallEvent, approve)
        return agent

    waiting = build()("delete a")
    assert waiting.stop_reason == "interrupt"
    server = build()  # a new request, a new process: the session holds the question
    assert [i.id for i in server.interrupts] == [waiting.interrupts[0].id]
    result = server([{"interruptResponse": {"interruptId": waiting.interrupts[0].id, "response": "y"}}])
    assert (str(result), runs) == ("deleted", ["a"])


def test_sessions_in_two_namespaces_of_one_store_are_apart() -> None:
    storage = InMemoryStorage()
    for tenant, reply in (("a", "for a"), ("b", "for b")):
        agent = Agent(model=ScriptedModel([reply]), callback_handler=None,
                      session_manager=SnapshotSessionManager("same-id", storage=storage.namespace(tenant)))
        agent("hi")
    again = Agent(model=ScriptedModel([]), callback_handler=None,
                  session_manager=SnapshotSessionManager("same-id", storage=storage.namespace("b")))
    assert again.messages[-1]["content"][0]["text"] == "for b"
    assert keys(storage) == [f"{tenant}/same-id/scopes/agent/default/snapshots/snapshot_latest.json"
                             for tenant in ("a", "b")]


def test_it_needs_one_of_statehitls_stores() -> None:
    with pytest.raises(TypeError, match=r"give it one of statehitl\.storage's stores"):
        SnapshotSessionManager("x", storage=strands.storage.InMemoryStorage())


def test_an_orchestrator_on_it_needs_storage_from_the_constructor() -> None:
    from statehitl.multiagent import GraphBuilder

    def node() -> Agent:
        return Agent(model=ScriptedModel(["done"]), callback_handler=None)

    builder = GraphBuilder()
    builder.add_node(node(), "only")
    builder.set_session_manager(SnapshotSessionManager("g"))
    with pytest.raises(RuntimeError, match="requires a storage backend for multi-agent orchestrators"):
        builder.build()
    builder = GraphBuilder()
    builder.add_node(node(), "only")
    builder.set_session_manager(SnapshotSessionManager("g", storage=InMemoryStorage()))
    assert str(builder.build()("go").results["only"].result).strip() == "done"


def save_points(name: str, strategy: str) -> dict[str, Any]:
    """What a new agent on the session finds while a call runs its tool, and after that call failed."""
    on = side(name)
    sessions, stores, null = framework(name)
    storage = stores.InMemoryStorage()
    seen: dict[str, Any] = {}

    def built(script: list[Any], tools: list[Any]) -> Any:
        return on.Agent(model=on.model(script), tools=tools, callback_handler=None, conversation_manager=null(),
                        session_manager=sessions.SnapshotSessionManager("s", storage=storage,
                                                                        save_latest_on=strategy))

    @on.tool
    def probe(x: int) -> str:
        """Look at the session from another agent.

        Args:
            x: a number
        """
        seen["during the call"] = [role for role, _ in conversation(built([], []).messages)]
        return "probed"

    with pytest.raises(Exception, match="down") as raised:
        built([uses("t1", "probe", {"x": 1}), RuntimeError("down")], [probe])("go")
    seen["after the failed call"] = ([role for role, _ in conversation(built([], []).messages)],
                                     type(raised.value).__name__)
    return seen


@pytest.mark.parametrize("strategy", ["message", "invocation", "trigger"])
def test_save_latest_on_after_a_failed_call_and_during_one(strategy: str) -> None:
    """After a call that failed, a new agent finds what Strands' finds under every strategy. During a call,
    it finds the thread's last step under "message" and "invocation" alike: the turn whose tools run is not
    in the conversation yet (Strands "message": it is, without its results), and "invocation" shows the
    steps so far rather than the last call's end, since a new agent goes on from the thread's head (what
    keeps an answered, acted-on interrupt from being answered again after a crash)."""
    theirs, ours = save_points("strands", strategy), save_points("statehitl", strategy)
    assert ours["after the failed call"][0] == theirs["after the failed call"][0] == (
        [] if strategy == "trigger" else ["user", "assistant", "user"])
    assert (theirs["after the failed call"][1], ours["after the failed call"][1]) == ("EventLoopException",
                                                                                       "RuntimeError")
    during = {"message": (["user", "assistant"], ["user"]), "invocation": ([], ["user"]), "trigger": ([], [])}
    assert (theirs["during the call"], ours["during the call"]) == during[strategy]
