"""LangGraph's ``langgraph.constants``: the names of a graph's virtual first and last nodes.

``from statehitl.constants import START, END`` is ``from langgraph.constants import START, END`` ported; the
same strings LangGraph uses (``"__start__"``, ``"__end__"``), so configs, ``next`` tuples and drawings that
name them read the same. ``CONF`` is the key of a config's ``configurable`` part.
"""

from __future__ import annotations

from statehitl.machine import END, START

__all__ = ["CONF", "END", "START"]

CONF = "configurable"
"""The key of a run config's ``configurable`` part (``{"configurable": {"thread_id": ...}}``)."""
