"""The seed's Session Management example, ``server.py`` half, running on statehitl.

Outside the block marked "not in the seed" this is the seed's code verbatim, except: ``strands`` ->
``statehitl`` in the imports, ``model=`` on the ``Agent``, a tiny implementation where the seed has
``# Implementation here`` + ``pass``, and ``storage_dir="/path/to/storage"`` replaced by a directory this
program can write. Every ``server(...)`` call builds a new ``Agent`` on the session, as the seed does;
``session_client.py`` is the ``client.py`` half (run that one).

The model is a ``ScriptedModel`` (deterministic, offline) shared by every ``Agent`` of this process: it
asks to delete ``a/b/c.txt``, then ``d/e/f.txt``, then answers. A resumed agent runs the interrupted
tool without calling the model first, so the script holds exactly one reply per model turn.
"""

# ruff: noqa: F401  (the seed's server.py imports json, which only its client.py half uses)

# --- the seed -----------------------------------------------------------------------------------------
##### server.py #####

import json
import os
from typing import Any

from statehitl import Agent, tool
from statehitl.agent import AgentResult
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager
from statehitl.types.agent import AgentInput

# --- not in the seed ----------------------------------------------------------------------------------
# The seed's storage_dir="/path/to/storage", as a directory this program can write: $SESSION_STORAGE_DIR,
# or ./sessions under the working directory. The session persists there between runs (that is the point).
STORAGE_DIR = os.environ.get("SESSION_STORAGE_DIR", os.path.join(os.getcwd(), "sessions"))

RESPONSES: list[Any] = [
    {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "delete-1", "name": "delete_files", "input": {"paths": ["a/b/c.txt"]}}},
    ]},
    {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "delete-2", "name": "delete_files", "input": {"paths": ["d/e/f.txt"]}}},
    ]},
    "I have processed the files older than 5 days.",
]
MODEL = ScriptedModel(RESPONSES)


def scripted_model() -> ScriptedModel:
    return MODEL  # looked up per call: the one model every Agent of this process shares


# --- the seed (continued) -----------------------------------------------------------------------------


@tool
def delete_files(paths: list[str]) -> bool:
    # Implementation here
    print(f"DELETING {paths}")
    return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    # Implementation here
    print(f"INSPECTING {paths}")
    return {path: {"age_days": 7} for path in paths}


class ApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return

        if event.agent.state.get(f"{self.app_name}-approval") == "t":  # (t)rust
            return

        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() not in ["y", "t"]:
            event.cancel_tool = "User denied permission to delete files"

        event.agent.state.set(f"{self.app_name}-approval", approval.lower())


def server(prompt: AgentInput) -> AgentResult:
    agent = Agent(
        model=scripted_model(),
        hooks=[ApprovalHook("myapp")],
        session_manager=FileSessionManager(session_id="myapp", storage_dir=STORAGE_DIR),
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        callback_handler=None,
    )
    return agent(prompt)
