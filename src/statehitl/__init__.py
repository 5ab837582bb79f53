"""statehitl: agents, graphs and swarms that stop and ask a human, then resume from a durable checkpoint.

``from statehitl import Agent, tool, ToolContext, InterventionHandler, Snapshot`` (Strands' top-level
names) loads each on first use, so ``import statehitl`` (a serverless cold start) loads nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statehitl.agent import Agent
    from statehitl.interventions import InterventionHandler
    from statehitl.tools import tool
    from statehitl.types._snapshot import Snapshot
    from statehitl.types.tools import ToolContext

__all__ = ["Agent", "InterventionHandler", "Snapshot", "ToolContext", "tool"]


def __getattr__(name: str) -> Any:
    if name == "Agent":
        from statehitl.agent import Agent

        return Agent
    if name == "tool":
        from statehitl.tools import tool

        return tool
    if name == "InterventionHandler":
        from statehitl.interventions import InterventionHandler

        return InterventionHandler
    if name == "ToolContext":
        from statehitl.types.tools import ToolContext

        return ToolContext
    if name == "Snapshot":
        from statehitl.types._snapshot import Snapshot

        return Snapshot
    raise AttributeError(f"module 'statehitl' has no attribute {name!r}")
