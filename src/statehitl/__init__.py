"""statehitl: agents, graphs and swarms that stop and ask a human, then resume from a durable checkpoint.

``from statehitl import Agent, tool, ToolContext, InterventionHandler, Snapshot`` (Strands' top-level
names) loads each on first use, so ``import statehitl`` (a serverless cold start) loads nothing.

Public and internal modules. A module is public when a user imports it: it is pinned by
``tests/test_public_api.py`` (the authority on what each public module exports) or
``tests/test_strands_paths.py``; or its path is a Strands or LangGraph module's with ``statehitl`` for
``strands``/``langgraph`` (``statehitl.types.tools``, ``statehitl.graph.message``); or README.md or a page
of docs/ names it. Only public modules have an ``__all__``, and it lists what users may import from
them. Every other module (and any ``_module``) is internal: it has no ``__all__``, and statehitl's own
modules import each name from the module that defines it, never through another internal module.
``tests/test_public_surface.py`` holds the sources to this.
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
