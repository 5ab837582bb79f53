"""The seed's Tools example (``tool_context.interrupt`` in ``DeleteTool``), running on statehitl.

Outside the blocks marked "not in the seed" this is the seed's code verbatim, except:
``strands`` -> ``statehitl`` in the imports, ``model=`` on the ``Agent``, a tiny implementation where
the seed has ``# Implementation here``, and the seed's ``...`` completed with the interrupt loop of the
Hooks example (hence ``import json``). The model (a ``ScriptedModel``, so the run is deterministic and
offline) asks for ``inspect_files`` and ``delete_files`` in one turn, then answers.

    printf 'y\\n' | python examples/seed/tool_context.py   # deletes, the tool returns True
    printf 'n\\n' | python examples/seed/tool_context.py   # the tool returns False without deleting
"""

import json
from typing import Any

from statehitl import Agent, tool
from statehitl.models import ScriptedModel
from statehitl.types.tools import ToolContext

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


class DeleteTool:
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    @tool(context=True)
    def delete_files(self, tool_context: ToolContext, paths: list[str]) -> bool:
        approval = tool_context.interrupt(f"{self.app_name}-approval", reason={"paths": paths})
        if approval.lower() != "y":
            return False

        # Implementation here
        print(f"DELETING {paths}")

        return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    # Implementation here
    print(f"INSPECTING {paths}")
    return {path: {"age_days": 7} for path in paths}


agent = Agent(
    model=scripted_model(),
    system_prompt="You delete files older than 5 days",
    tools=[DeleteTool("myapp").delete_files, inspect_files],
    callback_handler=None,
)

# --- the seed's "...", completed with the interrupt loop of its Hooks example -------------------------
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
