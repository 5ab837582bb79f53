"""How an agent runs one batch of tool calls: all at once (the default) or one after another.

Either way every call in the batch runs to its end, interrupted or not, so an interrupt in one tool
never loses another tool's work.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from statehitl import observe
from statehitl.types.tools import ToolUse

__all__ = ["ConcurrentToolExecutor", "SequentialToolExecutor", "ToolExecutor"]

T = TypeVar("T")
ToolCall = Callable[[ToolUse, bool], Awaitable[T]]
"""``call(tool_use, inline)``: ``inline`` says the tool runs alone and may use the loop's thread."""


class ToolExecutor(ABC):
    """Base of the executors: ``run`` returns each call's outcome in the batch's order."""

    @abstractmethod
    async def run(self, uses: Sequence[ToolUse], call: ToolCall[T]) -> list[T]: ...


class SequentialToolExecutor(ToolExecutor):
    """One tool at a time, in the order the model asked for them (for tools that share a resource)."""

    async def run(self, uses: Sequence[ToolUse], call: ToolCall[T]) -> list[T]:
        return [await call(use, True) for use in uses]


class ConcurrentToolExecutor(ToolExecutor):
    """Every tool of the batch at once; sync tools in worker threads so they overlap too."""

    async def run(self, uses: Sequence[ToolUse], call: ToolCall[T]) -> list[T]:
        return await observe.gather_in_order(uses, call)
