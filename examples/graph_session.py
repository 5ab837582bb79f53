"""The seed's Graph example as a server would run it: one process per call, the graph in a file session.

Each run builds a NEW graph (new agents, same session), as a request handler would; the session
directory is all the calls share. The first call stops at the approval and exits; a later one, in
another process, lists what the graph waits on and answers it.

    python examples/graph_session.py "Inspect and clean up my resources"   # stops at the approval
    printf 'y\\n' | python examples/graph_session.py --resume              # answers it, then finishes

``SESSIONS`` (default ``./sessions``) is the session directory.
"""

import json
import os
import sys

from statehitl import Agent
from statehitl.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.multiagent import GraphBuilder, Status
from statehitl.session import FileSessionManager

# The replies each call needs: the inspector answers in the first call, the cleanup agent in the
# second (a resumed graph never runs a finished node again).
FIRST = {"inspector": ["I found 3 resources older than 5 days."], "cleanup": []}
LATER = {"inspector": [], "cleanup": ["I cleaned up the 3 resources older than 5 days."]}


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


def build_graph(replies: dict[str, list[str]]):
    """What a server builds per request: new agents, a new graph, the same session."""
    builder = GraphBuilder()
    for name, prompt in (("inspector", "You inspect resources."),
                         ("cleanup", "You clean up resources older than 5 days.")):
        builder.add_node(Agent(name=name, system_prompt=prompt, callback_handler=None,
                               model=ScriptedModel(replies[name])), name)
    builder.add_edge("inspector", "cleanup")
    builder.set_hook_providers([ApprovalHook("myapp")])
    builder.set_session_manager(FileSessionManager(session_id="graph-demo",
                                                   storage_dir=os.environ.get("SESSIONS", "./sessions")))
    return builder.build()


def show(result) -> None:
    if result.status == Status.INTERRUPTED:
        for interrupt in result.interrupts:
            print(f"WAITING: {interrupt.name} {json.dumps(interrupt.reason)}")
    else:
        print(f"STATUS: {result.status.value}")
        print(f"MESSAGE: {json.dumps(result.results['cleanup'].result.message)}")


if sys.argv[1:2] == ["--resume"]:
    graph = build_graph(LATER)
    responses = []
    for interrupt in graph.interrupts:  # read from the session: this process never saw them raised
        user_input = input(f"Do you want to cleanup {interrupt.reason['resources']} (y/N): ")
        responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": user_input}})
    show(graph(responses))
else:
    show(build_graph(FIRST)(" ".join(sys.argv[1:]) or "Inspect and clean up my resources"))
