"""LangGraph's ``langgraph.constants``: the names of a graph's virtual first and last nodes.

``from statehitl.constants import START, END`` is ``from langgraph.constants import START, END`` ported; the
same strings LangGraph uses (``"__start__"``, ``"__end__"``), so configs, ``next`` tuples and drawings that
name them read the same. ``CONF`` is the key of a config's ``configurable`` part; ``TAG_NOSTREAM`` and
``TAG_HIDDEN`` are LangGraph's tag strings, for configs and tags written for it.
"""

from __future__ import annotations

from statehitl.machine import END, START

__all__ = ["CONF", "END", "START", "TAG_HIDDEN", "TAG_NOSTREAM"]

CONF = "configurable"
"""The key of a run config's ``configurable`` part (``{"configurable": {"thread_id": ...}}``)."""

TAG_NOSTREAM = "nostream"
"""LangGraph's tag string (``"nostream"``), so configs and tags written for LangGraph import unchanged; statehitl's
``messages`` stream does not read tags."""

TAG_HIDDEN = "langsmith:hidden"
"""LangGraph's tag string for LangSmith's hidden runs (``"langsmith:hidden"``); statehitl's tracing does not read
tags."""
