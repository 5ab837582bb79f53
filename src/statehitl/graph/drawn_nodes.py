"""What a node of ``get_graph()``'s LangChain ``Graph`` holds (``graph.nodes[name].data``), as LangGraph holds a
Runnable at each drawn node: ``to_json()`` then shows every node but ``__end__`` as
``{"type": "runnable", "data": {"id": [...], "name": node}}``, the shape tools reading LangGraph's drawings expect.

The ``id`` is the import path of the statehitl class that is at that node, never LangGraph's: LangGraph names
its private ``RunnableCallable`` there, a class statehitl does not have and does not run nodes through, so
claiming it would send anyone resolving the id to code that is not what runs. A function node names
``NodeFunction`` (what ``builder.nodes[name].runnable`` is for it, statehitl's counterpart of that class), a
statehitl callable object (``ToolNode``) its class, as LangGraph names its own ``ToolNode``, a subgraph node its
compiled graph's class, ``__start__`` the class of what ``graph.nodes["__start__"]`` is (``CompiledNode``); a
LangChain Runnable node holds the Runnable itself, whose own id LangGraph shows too.

Imported only by ``get_graph()``, which needs ``langchain-core``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableLambda

from statehitl.graph.node_specs import NodeFunction
from statehitl.graph.runnables import is_runnable


class DrawnNode(RunnableLambda[Any, Any]):
    """A drawn node: invoking it runs what is at the node (a function on its input, a subgraph's ``invoke``),
    and LangChain's serializer names it after ``stands_for``, the statehitl class found at that node (it reads
    an object's ``__module__`` and ``__name__``)."""

    def __init__(self, name: str, run: Callable[..., Any], *, stands_for: type,
                 arun: Callable[..., Any] | None = None) -> None:
        super().__init__(run, arun, name=name)
        self.__module__ = stands_for.__module__
        self.__name__ = stands_for.__name__
        self.stands_for = stands_for


def _passes_input_on(value: Any) -> Any:
    """``__start__``: the input goes on to the graph's state as given."""
    return value


def drawn_node(name: str, action: Any) -> Any:
    """What node ``name`` holds when drawn: a LangChain Runnable as it is; a compiled graph, a function, or
    the node object at ``__start__`` (where nothing of the user's runs) as a ``DrawnNode``; None for nothing
    (``__end__``)."""
    if action is None or is_runnable(action):
        return action
    if hasattr(action, "machine") and callable(getattr(action, "invoke", None)):
        return DrawnNode(name, action.invoke, arun=action.ainvoke, stands_for=type(action))
    if callable(action):
        return DrawnNode(name, action, stands_for=_own_class(action) or NodeFunction)
    return DrawnNode(name, _passes_input_on, stands_for=type(action))


def _own_class(action: Any) -> type | None:
    """The class of a node that is one of statehitl's callable objects (``ToolNode``, ``ValidationNode``), which
    it names as LangGraph names its own Runnables of that kind; None for a function or a user's object."""
    kind = type(action)
    is_function = inspect.isfunction(action) or inspect.ismethod(action) or isinstance(action, functools.partial)
    return kind if kind.__module__.startswith("statehitl.") and not is_function else None
