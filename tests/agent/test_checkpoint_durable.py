"""What statehitl adds to Strands' checkpointing: the pause is a checkpoint of the agent's thread.

With a session, another process resumes it with the same ``checkpointResume``; two processes resuming
one pause cannot both go on; a resume that does not fit the pause is refused before anything is
written; and the pause is what a new ``Agent`` on the session finds.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import uses

from statehitl import Agent, tool
from statehitl.errors import AgentCheckpointError, CheckpointConflict, NotInterruptedError
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager

SCRIPT = [uses(("t1", "add", {"a": 1, "b": 2})), uses(("t2", "add", {"a": 3, "b": 4})), "done"]

APP = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from statehitl import Agent, tool
    from statehitl.models import ScriptedModel
    from statehitl.session import FileSessionManager

    store, checkpoint = Path(sys.argv[1]), json.loads(sys.argv[2])

    @tool
    def add(a: int, b: int) -> int:
        "Add two numbers."
        with open(store / "runs.txt", "a") as runs:  # counts runs across processes
            runs.write(f"{a}+{b}\\n")
        return a + b

    script = [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t2", "name": "add", "input": {"a": 3, "b": 4}}}]},
        "done",
    ]
    agent = Agent(model=ScriptedModel(script, keyed_by="position"), tools=[add], callback_handler=None,
                  checkpointing=True, session_manager=FileSessionManager("job", storage_dir=store / "sessions"))
    result = agent({"checkpointResume": {"checkpoint": checkpoint}})
    print(json.dumps({"stop_reason": result.stop_reason, "text": str(result),
                      "checkpoint": result.checkpoint and result.checkpoint.to_dict(),
                      "messages": len(agent.messages)}))
    """
)


def counting_add(runs: list[str]) -> Any:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        runs.append(f"{a}+{b}")
        return a + b

    return add


def session_agent(store: Path, runs: list[str], **options: Any) -> Agent:
    return Agent(model=ScriptedModel(SCRIPT, keyed_by="position"), tools=[counting_add(runs)], callback_handler=None,
                 session_manager=FileSessionManager("job", storage_dir=store / "sessions"),
                 **{"checkpointing": True, **options})


def resume_elsewhere(store: Path, checkpoint: dict[str, Any]) -> dict[str, Any]:
    app = store / "app.py"
    app.write_text(APP)
    done = subprocess.run([sys.executable, str(app), str(store), json.dumps(checkpoint)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_another_process_resumes_each_pause_and_every_tool_runs_once(tmp_path: Path) -> None:
    runs: list[str] = []
    result = session_agent(tmp_path, runs)("add things")
    assert result.checkpoint is not None
    assert result.checkpoint.to_dict() == {"position": "after_model", "cycle_index": 0, "schema_version": "1.0"}
    seen = []
    checkpoint = result.checkpoint.to_dict()
    while checkpoint is not None:  # every resume in a new process, each built from the session alone
        found = resume_elsewhere(tmp_path, checkpoint)
        seen.append((found["stop_reason"], found["checkpoint"]))
        checkpoint = found["checkpoint"]
    assert [stop for stop, _ in seen] == ["checkpoint", "checkpoint", "checkpoint", "end_turn"]
    assert [c["position"] for _, c in seen[:-1]] == ["after_tools", "after_model", "after_tools"]
    assert (tmp_path / "runs.txt").read_text().split() == ["1+2", "3+4"]
    assert runs == []  # none ran in this process
    assert found["text"] == "done"
    assert found["messages"] == 6


def test_a_new_agent_on_the_session_finds_the_pause(tmp_path: Path) -> None:
    first = session_agent(tmp_path, [])("go")
    assert first.checkpoint is not None
    again = session_agent(tmp_path, [])
    assert again.interrupts == []  # nothing to answer: it is paused
    record = asyncio.run(again.checkpointer.latest(again.thread_id))
    assert record is not None
    assert (record.status, record.pending, record.interrupts) == ("interrupted", ["tools"], [])
    follow = again({"checkpointResume": {"checkpoint": first.checkpoint.to_dict()}})
    assert follow.checkpoint is not None
    assert follow.checkpoint.position == "after_tools"


def test_of_two_processes_resuming_one_pause_only_one_goes_on(tmp_path: Path) -> None:
    runs: list[str] = []
    paused = session_agent(tmp_path, runs)("go")
    assert paused.checkpoint is not None
    one, other = session_agent(tmp_path, runs), session_agent(tmp_path, runs)  # both read the pause
    resume = {"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}}
    assert one(resume).stop_reason == "checkpoint"
    with pytest.raises(CheckpointConflict):
        other(resume)
    assert runs == ["1+2"]  # the tool ran once


def history(agent: Agent) -> int:
    return asyncio.run(agent.checkpointer.count_checkpoints(agent.thread_id))


def test_a_resume_that_does_not_fit_the_pause_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    runs: list[str] = []
    agent = session_agent(tmp_path, runs)
    first = agent("go")
    assert first.checkpoint is not None
    stale = first.checkpoint.to_dict()
    second = agent({"checkpointResume": {"checkpoint": stale}})
    assert second.checkpoint is not None
    before = history(agent)
    with pytest.raises(AgentCheckpointError, match="is paused after_tools, but the checkpoint given was taken "
                                                   "after_model"):
        agent({"checkpointResume": {"checkpoint": stale}})
    with pytest.raises(NotInterruptedError, match=r"paused at a checkpoint \(after_tools\), not waiting on an "
                                                  "interrupt"):
        agent([{"interruptResponse": {"interruptId": "x", "response": "y"}}])
    assert history(agent) == before
    assert runs == ["1+2"]
    third = agent({"checkpointResume": {"checkpoint": second.checkpoint.to_dict()}})  # the right one still works
    assert third.checkpoint is not None
    assert third.checkpoint.cycle_index == 1


def test_a_resume_of_an_agent_that_is_not_paused_is_refused(tmp_path: Path) -> None:
    checkpoint = {"position": "after_tools", "cycle_index": 0, "schema_version": "1.0"}
    fresh = Agent(model=ScriptedModel(["x"]), callback_handler=None, checkpointing=True)
    with pytest.raises(AgentCheckpointError, match=r"not paused at a checkpoint \(it has never run\)"):
        fresh({"checkpointResume": {"checkpoint": checkpoint}})

    def ask(event: BeforeToolCallEvent) -> None:
        event.interrupt("approve", reason="?")

    waiting = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "done"]), tools=[counting_add([])],
                    callback_handler=None)
    waiting.add_hook(BeforeToolCallEvent, ask)
    assert waiting("go").stop_reason == "interrupt"
    waiting.checkpointing = True
    with pytest.raises(AgentCheckpointError, match=r"not paused at a checkpoint \(it waits on an interrupt\)"):
        waiting({"checkpointResume": {"checkpoint": checkpoint}})
    assert len(waiting.interrupts) == 1  # still waiting, untouched


def test_calling_a_paused_agent_with_nothing_goes_on_from_the_pause(tmp_path: Path) -> None:
    runs: list[str] = []
    paused = session_agent(tmp_path, runs)("go")
    assert paused.checkpoint is not None
    plain = session_agent(tmp_path, runs, checkpointing=False)  # no checkpointing: it runs to the end
    result = plain()
    assert (result.stop_reason, str(result), runs) == ("end_turn", "done", ["1+2", "3+4"])


def test_streaming_a_pause_ends_with_the_result_and_its_checkpoint() -> None:
    agent = Agent(model=ScriptedModel(SCRIPT), tools=[counting_add([])], callback_handler=None, checkpointing=True)

    async def stream() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async("go")]

    events = asyncio.run(stream())
    assert events[-1]["result"].checkpoint.position == "after_model"
    assert not any("message" in event for event in events)  # the toolUse joins the conversation with its results


def test_a_cancelled_model_call_ends_the_call_instead_of_pausing() -> None:
    from statehitl.hooks import BeforeModelCallEvent

    cancelling: list[bool] = []
    agent = Agent(model=ScriptedModel(SCRIPT), tools=[counting_add([])], callback_handler=None, checkpointing=True)
    agent.add_hook(BeforeModelCallEvent, lambda event: setattr(event, "cancel", "stopped") if cancelling else None)
    paused = agent("go")
    resumed = agent({"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}})  # type: ignore[union-attr]
    assert resumed.checkpoint is not None
    cancelling.append(True)
    ended = agent({"checkpointResume": {"checkpoint": resumed.checkpoint.to_dict()}})
    assert (ended.stop_reason, ended.checkpoint, str(ended)) == ("end_turn", None, "stopped")
    assert agent.messages[-1] == {"role": "assistant", "content": [{"text": "stopped"}]}
