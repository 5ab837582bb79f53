"""The agent loop's transition log, pinned: what ran, in what order, what was kept and checkpointed."""

from __future__ import annotations

from typing import Any

from agent_helpers import answer, uses
from syrupy.assertion import SnapshotAssertion

from statehitl import Agent, tool
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel
from statehitl.testing import TransitionRecorder


@tool
def inspect_files(paths: list[str]) -> int:
    return len(paths)


@tool
def delete_files(paths: list[str]) -> bool:
    return True


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files" and event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = True


def test_interrupt_and_resume_of_a_tool_batch(transition_recorder: TransitionRecorder,
                                              snapshot: SnapshotAssertion) -> None:
    batch = uses(("t1", "inspect_files", {"paths": ["a"]}), ("t2", "delete_files", {"paths": ["a"]}))
    agent = Agent(model=ScriptedModel([batch, "done"]), tools=[inspect_files, delete_files], hooks=[],
                  callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve)
    result: Any = agent("clean up")
    transition_recorder.log.append("-- resume --")
    agent(answer(result))
    assert transition_recorder.log == snapshot
