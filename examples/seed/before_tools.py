"""The seed's Hooks example (``BeforeToolsEvent``), running on statehitl with a scripted model.

Outside the blocks marked "not in the seed" this is the seed's code verbatim, except:
``strands`` -> ``statehitl`` in the imports, ``model=`` on the ``Agent``, and a tiny implementation
where the seed has ``# Implementation here`` + ``pass``. The model (a ``ScriptedModel``, so the run is
deterministic and offline) asks for two ``delete_files`` calls in one turn: one answer approves or
cancels the whole batch.

    printf 'y\\n' | python examples/seed/before_tools.py   # both deletions run
    printf 'n\\n' | python examples/seed/before_tools.py   # event.cancel: neither runs
"""

import json
from typing import Any

from statehitl import Agent, tool
from statehitl.hooks import BeforeToolsEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel

# --- not in the seed: the model, scripted -----------------------------------------------------------
MODEL = ScriptedModel([
    {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "delete-1", "name": "delete_files", "input": {"paths": ["a/b/c.txt"]}}},
        {"toolUse": {"toolUseId": "delete-2", "name": "delete_files", "input": {"paths": ["d/e/f.txt"]}}},
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


class BatchApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolsEvent, self.approve)

    def approve(self, event: BeforeToolsEvent) -> None:
        dangerous_tools = [
            content["toolUse"]["name"]
            for content in event.message["content"]
            if "toolUse" in content and content["toolUse"]["name"] == "delete_files"
        ]
        if not dangerous_tools:
            return

        approval = event.interrupt(f"{self.app_name}-batch-approval", reason={"tools": dangerous_tools})
        if approval.lower() != "y":
            event.cancel = "Batch cancelled by user"


agent = Agent(
    model=scripted_model(),
    hooks=[BatchApprovalHook("myapp")],
    system_prompt="You delete files older than 5 days",
    tools=[delete_files],
    callback_handler=None,
)

result = agent("Delete a/b/c.txt and d/e/f.txt")

while result.stop_reason == "interrupt":
    responses = []
    for interrupt in result.interrupts:
        if interrupt.name == "myapp-batch-approval":
            user_input = input(f"Approve running {interrupt.reason['tools']}? (y/N): ")
            responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": user_input}})

    result = agent(responses)

# --- not in the seed: the outcome and what the model was told, so a run can be checked ----------------
print()
print(f"MESSAGE: {json.dumps(result.message)}")
for block in MODEL.requests[-1]["messages"][-1]["content"]:
    print(f"TOOL RESULT: {json.dumps(block['toolResult'])}")
print(f"MODEL CALLS: {MODEL.calls}")
