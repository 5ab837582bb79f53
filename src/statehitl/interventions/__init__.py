"""Interventions: typed control layers over an agent (Strands' ``strands.interventions``).

A handler (``InterventionHandler``) looks at the agent's lifecycle events and returns a decision
(``Proceed``, ``Deny``, ``Guide``, ``Confirm``, ``Transform``); the agent composes the decisions of all
its handlers, in order::

    from statehitl import Agent, InterventionHandler
    from statehitl.interventions import Deny, Proceed

    class NoDeletes(InterventionHandler):
        name = "no-deletes"

        def before_tool_call(self, event):
            if event.tool_use["name"] == "delete_file":
                return Deny(reason="deleting is not allowed here")
            return Proceed()

    agent = Agent(model=..., tools=[...], interventions=[NoDeletes()])

A ``Confirm`` is a statehitl interrupt: durable, answered once, audited, answerable from another process.
"""

from __future__ import annotations

from statehitl.interventions.actions import Confirm, Deny, Guide, InterventionAction, Proceed, Transform
from statehitl.interventions.handler import InterventionHandler, OnError

__all__ = ["Confirm", "Deny", "Guide", "InterventionAction", "InterventionHandler", "OnError", "Proceed", "Transform"]
