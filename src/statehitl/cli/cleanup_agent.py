"""The agent demo's agent: the seed's file-cleanup session example, scripted so every run is the same.

Two tools that only pretend (no file is read, touched or deleted: they answer from ``PRETEND_FILES`` and
record what they would delete in ``agent.state``), and an approval hook that stops ``delete_files`` for a
human. The model is a ``ScriptedModel``: one reply asks to inspect and delete in one batch, so
``inspect_files`` runs and is kept while ``delete_files`` waits; after the answer, a new ``Agent`` on the
same session runs only the remaining tool and then needs exactly one more reply — the summary, scripted
for the answer it got (``final_reply``), since a real model would read the tool results too.

Plain library code, like ``statehitl.cli.refund``: ``statehitl.cli.demo`` is the command around it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from statehitl.agent import Agent
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel
from statehitl.session import SessionManager
from statehitl.tools import tool
from statehitl.tools.executors import SequentialToolExecutor
from statehitl.types.content import Message
from statehitl.types.tools import ToolContext

APPROVAL = "cleanup-approval"
"""The interrupt the approval hook raises before ``delete_files`` runs."""

DENIED = "User denied permission to delete files"
"""The error result ``delete_files`` gets when the human says no (the seed's wording)."""

SYSTEM_PROMPT = "You delete files older than 5 days"
PROMPT = "Clean up: delete the files in logs/ and tmp/ that are older than 5 days."

PRETEND_FILES: dict[str, dict[str, Any]] = {
    "logs/app-2024-05-01.log": {"age_days": 12},
    "tmp/build-cache.tar": {"age_days": 9},
}
"""The make-believe file system the tools answer from (nothing on disk is looked at)."""

TARGETS = list(PRETEND_FILES)
"""What the scripted model asks to inspect and to delete."""


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    """Report the age and size of files.

    Args:
        paths: the files to inspect
    """
    found = {path: PRETEND_FILES.get(path, {"error": "no such file"}) for path in paths}
    return {"status": "success", "content": [{"json": found}]}


@tool(context=True)
def delete_files(paths: list[str], tool_context: ToolContext) -> dict[str, Any]:
    """Delete files.

    Args:
        paths: the files to delete
    """
    # Pretend: remember what would have gone (in agent.state, saved with the session) and say so.
    state = tool_context.agent.state
    state.set("deleted", [*(state.get("deleted") or []), *paths])
    return {"status": "success", "content": [{"json": {"deleted": paths, "pretend": True}}]}


def question(reason: Any) -> str:
    """The human-readable question for a ``cleanup-approval`` interrupt reason."""
    paths = reason.get("paths") if isinstance(reason, dict) else None
    if isinstance(paths, list) and paths:
        return f"Delete {len(paths)} file{'s' if len(paths) != 1 else ''}: {', '.join(map(str, paths))}?"
    return f"Allow the deletion? ({reason!r})"


def approve_deletion(event: BeforeToolCallEvent) -> None:
    """The seed's approval hook: ``delete_files`` runs only after a human says y."""
    if event.tool_use["name"] != "delete_files":
        return
    paths = event.tool_use["input"].get("paths", [])
    approval = event.interrupt(APPROVAL, reason={"paths": paths, "question": question({"paths": paths})})
    answer = str(approval).strip().lower()
    event.agent.state.set(APPROVAL, answer)
    if answer not in ("y", "yes"):
        event.cancel_tool = DENIED


def first_reply() -> Message:
    """The model's first turn: inspect and delete in one batch of tool calls."""
    return {"role": "assistant", "content": [
        {"text": "I'll check the files and delete the old ones."},
        {"toolUse": {"toolUseId": "inspect-1", "name": "inspect_files", "input": {"paths": TARGETS}}},
        {"toolUse": {"toolUseId": "delete-1", "name": "delete_files", "input": {"paths": TARGETS}}},
    ]}


def final_reply(answer: str) -> str:
    """The model's last turn, after the tools ran with the human's ``answer`` (``y`` or ``n``)."""
    ages = ", ".join(f"{p} ({PRETEND_FILES[p]['age_days']} days)" for p in TARGETS)
    if answer == "y":
        return f"Deleted {len(TARGETS)} files older than 5 days: {ages}."
    return "I deleted nothing: you denied permission to delete the files."


def build_agent(session: SessionManager | None, replies: Sequence[Message | str],
                callback_handler: Callable[..., Any] | None = None) -> Agent:
    """A new agent on ``session`` whose model replies with exactly ``replies``.

    A new one per call, as the seed's server does: it loads the session (conversation, state, pending
    interrupt) and continues it. Tools run one after another so the demo prints them in the model's order.
    """
    agent = Agent(
        model=ScriptedModel(replies),
        tools=[inspect_files, delete_files],
        system_prompt=SYSTEM_PROMPT,
        session_manager=session,
        callback_handler=callback_handler,
        tool_executor=SequentialToolExecutor(),
    )
    agent.add_hook(BeforeToolCallEvent, approve_deletion)
    return agent


def demo_agent() -> Agent:
    """The demo's agent without a session (``statehitl draw statehitl.cli.cleanup_agent:demo_agent``)."""
    return build_agent(None, [first_reply()])
