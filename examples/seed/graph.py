"""The seed's Multi-Agents Graph example, running on statehitl with scripted models.

Outside the blocks marked "not in the seed" this is the seed's code verbatim, except: ``strands`` ->
``statehitl`` in the imports and ``model=`` on each ``Agent``. The inspector runs; a
``BeforeNodeCallEvent`` hook asks before the "cleanup" agent runs. With a ``STATEHITL_SESSION_URL``
(e.g. ``file://./sessions``) the graph is kept in that session instead of in memory.

    printf 'y\\n' | python examples/seed/graph.py   # inspects, then cleans up
    printf 'n\\n' | python examples/seed/graph.py   # the hook cancels cleanup: the graph raises
"""

import json
import os

from statehitl import Agent
from statehitl.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.multiagent import GraphBuilder, Status
from statehitl.session import SessionManager

# --- not in the seed: the models, scripted ---------------------------------------------------------
REPLIES = {
    "inspector": ["I found 3 resources older than 5 days."],
    "cleanup": ["I cleaned up the 3 resources older than 5 days."],
}


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


inspector_agent = Agent(name="inspector", system_prompt="You inspect resources.", callback_handler=None, model=scripted_model("inspector"))
cleanup_agent = Agent(name="cleanup", system_prompt="You clean up resources older than 5 days.", callback_handler=None, model=scripted_model("cleanup"))

builder = GraphBuilder()
builder.add_node(inspector_agent, "inspector")
builder.add_node(cleanup_agent, "cleanup")
builder.add_edge("inspector", "cleanup")
builder.set_entry_point("inspector")
builder.set_hook_providers([ApprovalHook("myapp")])
# --- not in the seed: a session, when the environment names one -------------------------------------
if os.environ.get("STATEHITL_SESSION_URL"):
    builder.set_session_manager(SessionManager.from_url(session_id="graph-example"))
# --- the seed -----------------------------------------------------------------------------------------
graph = builder.build()

result = graph("Inspect and clean up my resources")
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

    result = graph(responses)

print(f"MESSAGE: {json.dumps(result.results['cleanup'].result.message, indent=2)}")
