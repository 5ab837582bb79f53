"""The seed's Hooks example (``BeforeToolCallEvent``), running on statehitl with a scripted model.

Outside the blocks marked "not in the seed" this is the seed's code verbatim, except: ``strands`` ->
``statehitl`` in the imports, ``model=`` on the ``Agent``, and a tiny implementation where the seed has
``# Implementation here`` + ``pass``. The model (a ``ScriptedModel``, so the run is deterministic and
offline) asks for ``inspect_files`` and ``delete_files`` in one turn, then answers.

    printf 'y\\n' | python examples/seed/before_tool_call.py   # deletes
    printf 'n\\n' | python examples/seed/before_tool_call.py   # the hook cancels delete_files
"""

import json
from typing import Any

from statehitl import Agent, tool
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel

# --- not in the seed: the model, scripted -----------------------------------------------------------
MODEL = ScriptedModel([
    {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "inspect-1", "name": "inspect_files",
                     "input": {"paths": ["a/b/c.txt", "d/e/f.txt"]}}},
        {"toolUse": {"toolUseId": "delete-1", "name": "delete_files",
                     "input": {"paths": ["a/b/c.txt", "d/e/f.txt"]}}},
    ]},
    "I have processed the files older than 5 days.",
])


def scripted_model() -> ScriptedModel:
    return MODEL


# --- the seed -----------------------------------------------------------------------------------------


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

        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() != "y":
            event.cancel_tool = "User denied permission to delete files"


agent = Agent(
    model=scripted_model(),
    hooks=[ApprovalHook("myapp")],
    system_prompt="You delete files older than 5 days",
    tools=[delete_files, inspect_files],
    callback_handler=None,
)

paths = ["a/b/c.txt", "d/e/f.txt"]
result = agent(f"paths=<{paths}>")

while True:
    if result.stop_reason != "interrupt":
        break

    responses = []
    for interrupt in result.interrupts:
        if interrupt.name == "myapp-approval":
            user_input = input(f"Do you want to delete {interrupt.reason['paths']} (y/N): ")
            responses.append({
                "interruptResponse": {
                    "interruptId": interrupt.id,
                    "response": user_input
                }
            })

    result = agent(responses)

print(f"MESSAGE: {json.dumps(result.message)}")

# --- not in the seed: what the model was told, so a run can be checked -------------------------------
print()
for block in MODEL.requests[-1]["messages"][-1]["content"]:
    print(f"TOOL RESULT: {json.dumps(block['toolResult'])}")
print(f"MODEL CALLS: {MODEL.calls}")
