"""The seed's Multi-Agents Swarm example, running on statehitl with a scripted model.

Outside the blocks marked "not in the seed" this is the seed's code verbatim, except: ``strands`` ->
``statehitl`` in the imports and ``model=`` on the ``Agent``. A ``BeforeNodeCallEvent`` hook asks
before the "cleanup" agent runs; the agent (a ``ScriptedModel``, deterministic and offline) answers.

    printf 'y\\n' | python examples/seed/swarm.py   # cleans up
    printf 'n\\n' | python examples/seed/swarm.py   # the hook cancels the node: the swarm ends FAILED
"""

import json

from statehitl import Agent
from statehitl.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.multiagent import Swarm, Status

# --- not in the seed: the model, scripted -----------------------------------------------------------
REPLIES = {"cleanup": ["I cleaned up the resources older than 5 days."]}


def scripted_model(name: str) -> ScriptedModel:
    return ScriptedModel(REPLIES[name])


# --- the seed -----------------------------------------------------------------------------------------


class ApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id != "cleanup":
            return

        approval = event.interrupt(f"{self.app_name}-approval", reason={"resources": "example"})
        if approval.lower() != "y":
            event.cancel_node = "User denied permission to cleanup resources"


swarm = Swarm(
    [
        Agent(name="cleanup", system_prompt="You clean up resources older than 5 days.", callback_handler=None, model=scripted_model("cleanup")),
    ],
    hooks=[ApprovalHook("myapp")],
)

result = swarm("Clean up my resources")
while result.status == Status.INTERRUPTED:
    responses = []
    for interrupt in result.interrupts:
        if interrupt.name == "myapp-approval":
            user_input = input(f"Do you want to cleanup {interrupt.reason['resources']} (y/N): ")
            responses.append({
                "interruptResponse": {
                    "interruptId": interrupt.id,
                    "response": user_input,
                },
            })

    result = swarm(responses)

# --- not in the seed: what a denied cleanup leaves, since the seed's last line needs the agent's result
print(f"STATUS: {result.status.value}")
if "cleanup" not in result.results:
    print(f"FAILURE: {result.failure}")
    raise SystemExit(0)
# --- the seed -----------------------------------------------------------------------------------------

print(f"MESSAGE: {json.dumps(result.results['cleanup'].result.message, indent=2)}")
