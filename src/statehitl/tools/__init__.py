"""Tools: ``@tool`` makes one from a function, ``ToolRegistry`` holds an agent's tools by name."""

from __future__ import annotations

from statehitl.tools.decorator import DecoratedFunctionTool, tool
from statehitl.tools.registry import ToolRegistry

__all__ = ["DecoratedFunctionTool", "ToolRegistry", "tool"]
