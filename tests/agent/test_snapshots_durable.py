"""What a statehitl snapshot holds beyond Strands': a checkpoint of the agent's thread, by reference.

A waiting agent's snapshot names the checkpoint holding its tool calls (``interrupt_state.context``), and
the ``checkpoint`` field names the one holding everything; loading either takes the agent back there,
in any process with the same session, and is refused elsewhere before the agent changes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import uses

from statehitl import Agent, Snapshot, tool
from statehitl.errors import AlreadyAnsweredError, SnapshotError
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager


def counting_add(runs: list[str]) -> Any:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        runs.append(f"{a}+{b}")
        return a + b

    return add


def approving(event: BeforeToolCallEvent) -> None:
    if event.interrupt("approve", reason={"call": event.tool_use["input"]}) != "y":
        event.cancel_tool = "refused"


def waiting_agent(store: Path, runs: list[str], script: list[Any] | None = None) -> Agent:
    agent = Agent(model=ScriptedModel(script or [uses(("t1", "add", {"a": 1, "b": 2})), "added"], keyed_by="position"),
                  tools=[counting_add(runs)], callback_handler=None,
                  session_manager=FileSessionManager("s", storage_dir=store))
    agent.add_hook(BeforeToolCallEvent, approving)
    return agent


def checkpoints(agent: Agent) -> int:
    return asyncio.run(agent.checkpointer.count_checkpoints(agent.thread_id))


def test_a_waiting_agents_snapshot_brings_its_interrupt_back_in_another_agent_of_the_session(tmp_path: Path) -> None:
    runs: list[str] = []
    first = waiting_agent(tmp_path, runs)
    waiting = first("add them")
    snapshot = Snapshot.from_dict(first.take_snapshot(preset="session").to_dict())
    state = snapshot.data["interrupt_state"]
    assert state["activated"] is True
    assert list(state["interrupts"]) == [waiting.interrupts[0].id]
    assert state["context"]["checkpoint"]["thread_id"] == "s"
    first([{"interruptResponse": {"interruptId": waiting.interrupts[0].id, "response": "n"}}])  # refused there
    assert runs == []

    later = waiting_agent(tmp_path, runs)  # a new process's agent on the session: back to the question
    later.load_snapshot(snapshot)
    assert [i.id for i in later.interrupts] == [waiting.interrupts[0].id]
    # the question was answered already: that answer binds (another is refused, and nothing runs)
    with pytest.raises(AlreadyAnsweredError):
        later([{"interruptResponse": {"interruptId": waiting.interrupts[0].id, "response": "y"}}])
    assert runs == []
    history = asyncio.run(later.checkpointer.history(later.thread_id))
    waited = next(h.seq for h in history if h.status == "interrupted")
    assert len([h for h in history if h.parent_seq == waited]) == 1  # the one branch its answer took


def test_on_another_thread_such_a_snapshot_is_refused_and_the_agent_is_unchanged(tmp_path: Path) -> None:
    snapshot = (waiting := waiting_agent(tmp_path / "a", []))("add them") and waiting.take_snapshot(preset="session")
    other = Agent(model=ScriptedModel(["hi"]), callback_handler=None, system_prompt="mine")
    other("hello")
    with pytest.raises(SnapshotError, match="can be loaded only by an agent on that thread"):
        other.load_snapshot(snapshot)
    assert (len(other.messages), other.system_prompt, other.interrupts) == (2, "mine", [])
    carried = waiting.take_snapshot(include=["messages", "state"])  # by value, it travels
    other.load_snapshot(carried)
    assert other.messages == waiting.messages


def test_without_its_interrupt_state_an_agent_stops_waiting_and_a_prompt_starts_anew(tmp_path: Path) -> None:
    runs: list[str] = []
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "fresh"]), tools=[counting_add(runs)],
                  callback_handler=None, session_manager=FileSessionManager("w", storage_dir=tmp_path))
    agent.add_hook(BeforeToolCallEvent, approving)
    agent("add them")
    before = checkpoints(agent)
    agent.load_snapshot(Snapshot(scope="agent", schema_version="1.0", app_data={},
                                 data={"messages": [], "interrupt_state": {"interrupts": {}, "context": {},
                                                                           "activated": False}}))
    assert agent.interrupts == []
    assert checkpoints(agent) == before  # loading writes nothing
    result = agent("start over")
    assert (result.stop_reason, str(result), runs) == ("end_turn", "fresh", [])
    assert [m["content"][0]["text"] for m in agent.messages] == ["start over", "fresh"]
    again = Agent(model=ScriptedModel([]), callback_handler=None,
                  session_manager=FileSessionManager("w", storage_dir=tmp_path))
    assert (again.interrupts, len(again.messages)) == ([], 2)


def test_a_snapshot_at_a_checkpoint_pause_resumes_the_pause(tmp_path: Path) -> None:
    runs: list[str] = []
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "done"], keyed_by="position"),
                  tools=[counting_add(runs)], callback_handler=None, checkpointing=True,
                  session_manager=FileSessionManager("p", storage_dir=tmp_path))
    paused = agent("go")
    assert paused.checkpoint is not None
    snapshot = agent.take_snapshot(preset="session")
    assert snapshot.data["interrupt_state"]["activated"] is False
    agent("never mind")  # leaves the pause: the tool call is closed unrun
    agent.load_snapshot(snapshot)
    result = agent({"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}})
    assert (result.checkpoint.position if result.checkpoint else None, runs) == ("after_tools", ["1+2"])


def test_the_checkpoint_field_is_time_travel_over_the_threads_own_history(tmp_path: Path) -> None:
    agent = Agent(model=ScriptedModel(["one", "two", "three"]), callback_handler=None,
                  session_manager=FileSessionManager("t", storage_dir=tmp_path))
    agent("first")
    marker = agent.take_snapshot(include=["checkpoint"])
    assert list(marker.data) == ["checkpoint"]  # a reference, not a copy
    assert checkpoints(agent) == 1  # nothing changed since the call: nothing written for it
    agent("second")
    agent.load_snapshot(marker)
    assert [m["content"][0]["text"] for m in agent.messages] == ["first", "one"]
    agent("branch")
    history = asyncio.run(agent.checkpointer.history(agent.thread_id))
    assert [(h.seq, h.parent_seq) for h in history] == [(2, 0), (1, 0), (0, None)]
    again = Agent(model=ScriptedModel([]), callback_handler=None,
                  session_manager=FileSessionManager("t", storage_dir=tmp_path))
    assert [m["content"][0]["text"] for m in again.messages] == ["first", "one", "branch", "three"]


def test_a_changed_conversation_is_checkpointed_before_it_is_referenced(tmp_path: Path) -> None:
    agent = Agent(model=ScriptedModel(["one"]), callback_handler=None,
                  session_manager=FileSessionManager("c", storage_dir=tmp_path))
    agent("first")
    agent.messages = agent.messages[:1]
    agent.state.set("edited", True)
    marker = agent.take_snapshot(include=["checkpoint"])
    assert checkpoints(agent) == 2
    again = Agent(model=ScriptedModel([]), callback_handler=None,
                  session_manager=FileSessionManager("c", storage_dir=tmp_path))
    again.load_snapshot(marker)
    assert (len(again.messages), again.state.get()) == (1, {"edited": True})


def test_a_reference_to_a_checkpoint_the_store_no_longer_holds_is_refused(tmp_path: Path) -> None:
    agent = Agent(model=ScriptedModel(["one", "two", "three"]), callback_handler=None,
                  session_manager=FileSessionManager("g", storage_dir=tmp_path))
    agent("first")
    marker = agent.take_snapshot(include=["checkpoint"])
    agent("second")
    agent("third")
    asyncio.run(agent.checkpointer.prune(agent.thread_id, keep_last=1))
    with pytest.raises(SnapshotError, match="which this agent's store does not hold"):
        agent.load_snapshot(marker)
    assert len(agent.messages) == 6
