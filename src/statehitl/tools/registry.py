"""The tools an agent may call, by name.

Built once from what the user passes as ``tools=[...]`` and checked then, so that a mistake (a
function without ``@tool``, two tools with one name) fails when the agent is built rather than when
the model first asks for the tool. The specs sent to the model on every cycle are computed once.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator
from typing import Any

from statehitl.types.tools import AgentTool, ToolSpec

__all__ = ["ToolRegistry"]


class ToolRegistry:
    """An agent's tools in registration order, looked up by ``tool_name``."""

    def __init__(self, tools: Iterable[Any] = ()) -> None:
        self._tools: dict[str, AgentTool] = {}
        for candidate in tools:
            self._tools[_checked_name(candidate, self._tools)] = candidate
        self._names = tuple(self._tools)
        self._specs = [t.tool_spec for t in self._tools.values()]

    def get(self, name: str) -> AgentTool | None:
        return self._tools.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def specs(self) -> list[ToolSpec]:
        """The specs to send the model; the same list on every call, so do not mutate it."""
        return self._specs

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(self._tools.values())


def _checked_name(candidate: Any, registered: dict[str, AgentTool]) -> str:
    if not isinstance(candidate, AgentTool):
        if inspect.isfunction(candidate) or inspect.ismethod(candidate):
            raise TypeError(
                f"{candidate.__qualname__} is a plain function; decorate it with @tool "
                "(from statehitl import tool) to give it to an agent"
            )
        raise TypeError(
            f"tools must be AgentTool objects (functions decorated with @tool, or AgentTool subclasses), "
            f"got {candidate!r}"
        )
    name = candidate.tool_name
    if name in registered:
        raise ValueError(f"two tools are named {name!r}; tool names must be unique (rename one with @tool(name=...))")
    return name
