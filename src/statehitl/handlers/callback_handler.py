"""Callback handlers: what ``Agent(callback_handler=...)`` calls with each streaming event, as keywords.

Strands' three, under Strands' module path (``statehitl.handlers.callback_handler``): the printing
default, one that fans events out to several handlers, and one that drops them (``callback_handler=None``
does the same).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"]


class PrintingCallbackHandler:
    """The default: print the model's text as it streams, and each tool call as it starts.

    ``tool_count`` counts the tool calls seen; with ``verbose_tool_use=False`` they are counted but
    not printed, so only the model's text reaches the terminal.
    """

    def __init__(self, verbose_tool_use: bool = True) -> None:
        self.verbose_tool_use = verbose_tool_use
        self.tool_count = 0
        self._tools_seen: set[str] = set()

    def __call__(self, **event: Any) -> None:
        data = event.get("data")
        if data:
            sys.stdout.write(data)
            sys.stdout.flush()
        tool_use = event.get("current_tool_use")
        if tool_use and tool_use.get("toolUseId") not in self._tools_seen:
            self._tools_seen.add(tool_use.get("toolUseId"))
            self.tool_count += 1
            if self.verbose_tool_use:
                sys.stdout.write(f"\nTool #{self.tool_count}: {tool_use.get('name')}\n")
        if "message" in event and event["message"].get("role") == "assistant":
            sys.stdout.write("\n")


class CompositeCallbackHandler:
    """Calls each of ``handlers`` with every event, in order (a printer and a logger side by side)."""

    def __init__(self, *handlers: Callable[..., Any]) -> None:
        self.handlers = handlers

    def __call__(self, **event: Any) -> None:
        for handler in self.handlers:
            handler(**event)


def null_callback_handler(**_event: Any) -> None:
    """Drop every event: the agent prints nothing."""
