"""Callback handlers: what ``Agent(callback_handler=...)`` calls with each streaming event."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["PrintingCallbackHandler"]


class PrintingCallbackHandler:
    """The default: print the model's text as it streams, and each tool call as it starts."""

    def __init__(self) -> None:
        self._tools_seen: set[str] = set()

    def __call__(self, **event: Any) -> None:
        data = event.get("data")
        if data:
            sys.stdout.write(data)
            sys.stdout.flush()
        tool_use = event.get("current_tool_use")
        if tool_use and tool_use.get("toolUseId") not in self._tools_seen:
            self._tools_seen.add(tool_use.get("toolUseId"))
            sys.stdout.write(f"\nTool #{len(self._tools_seen)}: {tool_use.get('name')}\n")
        if "message" in event and event["message"].get("role") == "assistant":
            sys.stdout.write("\n")
