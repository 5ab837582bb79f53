"""What ``ToolNode`` hands a tool and the wrapper around its calls: LangGraph's ``ToolRuntime``, ``ToolCallRequest``
and ``ToolCallWithContext``.

``ToolRuntime`` is injected by its type alone (``runtime: ToolRuntime``, no ``Annotated``): it subclasses
langchain-core's directly injected argument, so the schema the model is shown leaves the parameter out.
``ToolCallRequest`` is what ``wrap_tool_call`` is given; ``override()`` makes a changed copy, the original untouched.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypedDict

from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langchain_core.tools.base import _DirectlyInjectedToolArg
from typing_extensions import TypeVar

ContextT = TypeVar("ContextT", default=Any)
StateT = TypeVar("StateT", default=Any)


def no_writer(chunk: Any) -> None:
    """Where a tool's stream writes go outside a run streaming "custom": nowhere."""


@dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool parameter typed ``ToolRuntime`` (or named ``runtime``) gets: the graph's state, the run's
    ``context``, the call's ``config`` and ``tool_call_id``, the ``store``, the run's ``stream_writer`` and the
    node's tools. ``idempotency_key`` is statehitl's: the key of this call (``InjectedIdempotencyKey``'s)."""

    state: StateT
    context: ContextT
    config: dict[str, Any]
    stream_writer: Callable[[Any], None]
    tool_call_id: str | None
    store: Any
    tools: list[BaseTool] = field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None
    idempotency_key: str = ""


class ToolCallWithContext(TypedDict):
    """One tool call with the state it was made in: what a ``Send`` to a ``ToolNode`` carries (the agent's
    ``version="v2"`` sends each call of a reply as a task of its own)."""

    __type: Literal["tool_call_with_context"]
    tool_call: ToolCall
    state: Any


@dataclass
class ToolCallRequest:
    """One call as ``wrap_tool_call`` sees it: the call, the tool (None for a name the node does not know), the
    state and the ``ToolRuntime``."""

    tool_call: ToolCall
    tool: BaseTool | None
    state: Any
    runtime: Any

    def __setattr__(self, name: str, value: Any) -> None:
        # LangGraph's rule: set once by __init__; a later assignment still works but warns, as override() is the way
        if name in self.__dict__:
            warnings.warn(f"Setting attribute '{name}' on ToolCallRequest is deprecated. Use the override() method "
                          "instead to create a new instance with modified values.", DeprecationWarning, stacklevel=2)
        object.__setattr__(self, name, value)

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A copy with ``tool_call``, ``tool`` or ``state`` replaced (a new state is the runtime's too)."""
        request = replace(self, **overrides)
        if "state" in overrides and isinstance(request.runtime, ToolRuntime):
            object.__setattr__(request, "runtime", replace(request.runtime, state=request.state))
        return request


ToolCallWrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Any]], Any]
"""``wrap_tool_call(request, execute)``: returns the call's ``ToolMessage`` or ``Command``; ``execute`` runs the
tool for a request (as often as the wrapper likes: each time anew)."""

AsyncToolCallWrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Awaitable[Any]]], Awaitable[Any]]
"""``awrap_tool_call``: the same, awaited."""
