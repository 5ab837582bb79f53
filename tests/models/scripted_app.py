"""One program's agent, run by several processes: a ScriptedModel keyed by position in the conversation.

``build(thread_id)`` is the ``--app scripted_app:build`` registration ``statehitl inbox answer`` calls
to resume a thread (the store comes from ``STATEHITL_SCRIPTED_TEST_STORE``); run as a script, it
starts or continues the session named on the command line with a prompt, the way a server would.
Each process builds the same model from the same whole-conversation script; none is handed only
"the replies still to come". Every tool that runs appends a line to ``STATEHITL_SCRIPTED_TEST_LOG``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from statehitl import Agent, tool
from statehitl.models import ScriptedModel
from statehitl.session import SessionManager
from statehitl.types.tools import ToolContext

STORE_ENV = "STATEHITL_SCRIPTED_TEST_STORE"
LOG_ENV = "STATEHITL_SCRIPTED_TEST_LOG"

SCRIPT: list[Any] = [
    {"role": "assistant", "content": [{"toolUse": {"name": "find_files", "input": {"older_than_days": 5}}}]},
    {"role": "assistant", "content": [{"text": "Deleting the old one."},
                                      {"toolUse": {"name": "delete_files", "input": {"path": "/tmp/old"}}}]},
    "I deleted /tmp/old.",
    "Nothing else is older than 5 days.",
]
"""The whole conversation's replies: response n answers the conversation's n-th model turn."""


def _log(line: str) -> None:
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
        log.write(line + "\n")


@tool
def find_files(older_than_days: int) -> list[str]:
    """Find files older than some days.

    Args:
        older_than_days: the age in days
    """
    _log(f"find {older_than_days}")
    return ["/tmp/old"]


@tool(context=True)
def delete_files(tool_context: ToolContext, path: str) -> str:
    """Delete files under a path.

    Args:
        path: what to delete
    """
    if tool_context.interrupt("delete-approval", reason={"path": path}) != "y":
        return "not deleted"
    _log(f"delete {path}")
    return f"deleted {path}"


def build(thread_id: str) -> Agent:
    """The registration: the agent whose session is ``thread_id``, with the program's one model."""
    session = SessionManager.from_url(os.environ[STORE_ENV], session_id=thread_id)
    return Agent(model=ScriptedModel(SCRIPT, keyed_by="position"), tools=[find_files, delete_files],
                 session_manager=session, callback_handler=None)


if __name__ == "__main__":
    session_id, prompt = sys.argv[1], sys.argv[2]
    agent = build(session_id)
    result = agent(prompt)
    print(json.dumps({"stop_reason": result.stop_reason, "text": str(result).strip(),
                      "interrupts": [i.id for i in result.interrupts], "model_calls": agent.model.calls}))
