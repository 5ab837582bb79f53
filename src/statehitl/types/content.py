"""Messages and content blocks in Bedrock Converse format: what ``agent.messages`` holds."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from statehitl.types.tools import ToolResult, ToolUse

__all__ = ["ContentBlock", "Message", "Messages", "Role", "SystemContentBlock"]

Role = Literal["user", "assistant"]


class ContentBlock(TypedDict, total=False):
    """One block of a message: text, a tool use, a tool result (others pass through untouched)."""

    text: str
    toolUse: ToolUse
    toolResult: ToolResult
    image: dict[str, Any]
    document: dict[str, Any]
    reasoningContent: dict[str, Any]
    json: Any


class SystemContentBlock(TypedDict, total=False):
    text: str


class Message(TypedDict):
    role: Role
    content: list[ContentBlock]


Messages = list[Message]
