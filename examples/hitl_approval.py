"""An agent with Strands' ``HumanInTheLoop`` whose approval outlives its process: the agent asks, stops and
exits; a human answers in the inbox from another process; ``statehitl worker`` resumes the agent, and the
approved tool runs once.

    export STATEHITL_SESSION_URL=file://.statehitl-hitl       # where the session lives (files, S3, DynamoDB)
    python examples/hitl_approval.py ask                      # lists the reports, asks to delete two, exits
    statehitl inbox --store $STATEHITL_SESSION_URL            # the question, from any machine
    statehitl inbox answer ID y --as ann --store $STATEHITL_SESSION_URL
    PYTHONPATH=examples statehitl worker --app hitl_approval:build --store $STATEHITL_SESSION_URL --once
    python examples/hitl_approval.py show                     # what the agent did, and who allowed it

Besides ``y``, the inbox takes the typed answers: ``'{"type": "reject", "message": "keep them"}'`` (the
model reads the reason) or ``'{"type": "edit", "input": {"paths": ["q1.csv"]}}'`` (delete only that one).
The model is scripted by position (``ScriptedModel(..., keyed_by="position")``), so every process that
builds the agent gets the same replies; the reports are files in ``reports/`` beside the session's store.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from statehitl import Agent, tool
from statehitl.models import ScriptedModel
from statehitl.session import SESSION_URL_ENV, SessionManager
from statehitl.vended_interventions.hitl import HumanInTheLoop

SESSION = "reports-cleanup"
DEFAULT_STORE = "file://.statehitl-hitl"


def reports_dir() -> Path:
    """``reports/`` beside the file store the session lives in."""
    store = os.environ.get(SESSION_URL_ENV, DEFAULT_STORE)
    return Path(store.removeprefix("file://")).parent / "reports"


@tool
def list_reports() -> list[str]:
    """List the reports on disk."""
    return sorted(p.name for p in reports_dir().glob("*.csv"))


@tool
def delete_reports(paths: list[str]) -> str:
    """Delete reports.

    Args:
        paths: the reports to delete, by file name
    """
    for name in paths:
        (reports_dir() / name).unlink()
    with open(reports_dir().parent / "actions.log", "a", encoding="utf-8") as log:  # one line per run
        log.write(f"deleted {', '.join(paths)}\n")
    return f"deleted {len(paths)} report(s)"


SCRIPT = [
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "list-1", "name": "list_reports", "input": {}}}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "delete-1", "name": "delete_reports",
                                                   "input": {"paths": ["q1.csv", "q2.csv"]}}}]},
    "Done: I cleaned up the old reports.",
]


def build(thread_id: str = SESSION) -> Agent:
    """The agent of session ``thread_id``, as every process builds it (the worker's ``--app``)."""
    return Agent(
        model=ScriptedModel(SCRIPT, keyed_by="position"),
        tools=[list_reports, delete_reports],
        interventions=[HumanInTheLoop(allowed_tools=["list_reports"])],
        session_manager=SessionManager.from_url(os.environ.get(SESSION_URL_ENV, DEFAULT_STORE), session_id=thread_id),
        callback_handler=None,
    )


def ask() -> None:
    reports_dir().mkdir(parents=True, exist_ok=True)
    for name in ("q1.csv", "q2.csv", "q3.csv"):
        (reports_dir() / name).write_text("quarter,total\n")
    result = build()("Delete the reports of the first two quarters.")
    print(f"stop_reason: {result.stop_reason}")
    for asked in result.interrupts:
        print(f"waiting: {asked.id} {asked.name}")
        print(asked.reason)


def show() -> None:
    agent = build()
    print(f"waiting on: {[i.name for i in agent.interrupts]}")
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                print(f"tool result: {block['toolResult']['content'][0]['text']}")
            elif "text" in block and message["role"] == "assistant":
                print(f"agent: {block['text']}")
    for entry in agent.audit():
        print(f"answered {entry.response!r} by {entry.responder} via {entry.via}: {entry.outcome}")
    print(f"reports left: {sorted(p.name for p in reports_dir().glob('*.csv'))}")


if __name__ == "__main__":
    {"ask": ask, "show": show}[sys.argv[1] if len(sys.argv) > 1 else "ask"]()
