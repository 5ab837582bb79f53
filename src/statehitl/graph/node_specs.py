"""A node as ``StateGraph`` keeps it until ``compile()``, and as ``builder.nodes[name]`` shows it: LangGraph's
``StateNodeSpec`` (its ``runnable``, ``metadata``, ``input_schema``, ``retry_policy``, ``cache_policy``,
``ends``, ``defer``, ``timeout``), so code that looks a node up on its builder (a test counting a node
object's calls through ``builder.nodes["n"].runnable.func``) reads the same attributes on both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statehitl.graph.caching import CachePolicy
from statehitl.graph.node_calls import is_async_callable
from statehitl.graph.retries import Policies
from statehitl.graph.runnables import is_runnable
from statehitl.timeout_policy import TimeoutPolicy


class NodeFunction:
    """The function of a node, as LangGraph's ``RunnableCallable`` holds it: ``func`` is a sync node's
    function (or callable object), ``afunc`` an async one's, ``name`` the node's name. It only shows what runs:
    statehitl adapts and calls the function when the graph runs, not through this object."""

    __slots__ = ("afunc", "func", "name")

    def __init__(self, name: str, action: Callable[..., Any]) -> None:
        self.name = name
        self.func: Callable[..., Any] | None = None if is_async_callable(action) else action
        self.afunc: Callable[..., Any] | None = action if self.func is None else None

    def __repr__(self) -> str:
        return f"NodeFunction({self.name!r}, {self.func or self.afunc!r})"


@dataclass
class StateNodeSpec:
    """One node added with ``add_node``: what runs (``action``: a function, a LangChain Runnable or a
    compiled graph) and the options it was added with, under statehitl's names and LangGraph's."""

    action: Any
    input_schema: Any
    destinations: tuple[str, ...] | dict[str, str] | None
    metadata: dict[str, Any] | None
    retry: Policies | None
    defer: bool
    error_handler: Callable[..., Any] | None = None
    timeout: TimeoutPolicy | None = None
    cache_policy: CachePolicy | None = None
    name: str = ""

    @property
    def runnable(self) -> Any:
        """What runs, as LangGraph's ``runnable``: a function's ``NodeFunction``; a Runnable or a compiled
        graph itself."""
        if is_runnable(self.action) or not callable(self.action):
            return self.action
        return NodeFunction(self.name, self.action)

    @property
    def retry_policy(self) -> Policies | None:
        """``add_node(retry_policy=)``, under LangGraph's name."""
        return self.retry

    @property
    def ends(self) -> tuple[str, ...] | dict[str, str]:
        """Where the node may go by ``Command(goto=)`` (``add_node(destinations=)`` or its return annotation),
        under LangGraph's name."""
        return () if self.destinations is None else self.destinations
