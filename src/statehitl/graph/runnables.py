"""LangChain Runnables (a chain, a prompt, a tool, a chat model) as StateGraph nodes, as LangGraph takes them.

A Runnable is not callable: LangGraph calls its ``invoke`` with the node's input and config. statehitl
does the same through ``ainvoke``, so a Runnable node runs on the loop like an async function node. No
LangChain module is imported here: a Runnable can only be given by a program that imported LangChain.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def is_runnable(action: Any) -> bool:
    """Whether ``action`` is a LangChain ``Runnable`` (only if ``langchain_core`` was imported)."""
    base = sys.modules.get("langchain_core.runnables.base")
    return base is not None and isinstance(action, base.Runnable)


def is_graph(action: Any) -> bool:
    """Whether ``action`` is a compiled graph (not callable, but named as a Runnable is: ``get_name()``)."""
    return not callable(action) and callable(getattr(action, "get_name", None))


def node_name(action: Any) -> str:
    """The name ``add_node(action)`` gives a node, as LangGraph names it: a Runnable's or a compiled graph's own
    name (``compile(name=)``), a function's ``__name__``, else the class of the callable object."""
    if is_runnable(action) or is_graph(action):
        return str(action.get_name())
    return str(getattr(action, "__name__", None) or type(action).__name__)


def runnable_node(runnable: Any) -> Callable[..., Any]:
    """An async node function that runs ``runnable`` on the node's input, with the node's config."""

    async def run_runnable(state: Any, config: dict[str, Any]) -> Any:
        return await runnable.ainvoke(state, config)

    run_runnable.__name__ = node_name(runnable)
    return run_runnable


def mapping_runnable(action: dict[str, Any]) -> Any:
    """A dict of Runnables (or functions) as one node, as LangGraph coerces it: LangChain's
    ``RunnableParallel``, which gives each key what its value returns for the node's input. LangChain's own
    ``TypeError`` for a value that is neither; a ``GraphValidationError`` when langchain-core is missing."""
    try:
        from langchain_core.runnables import RunnableParallel
    except ImportError as missing:
        from statehitl.errors import GraphValidationError

        raise GraphValidationError("a dict of Runnables as a node needs langchain-core (pip install "
                                   "'statehitl[langchain]')") from missing
    return RunnableParallel(action)
