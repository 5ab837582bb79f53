"""What an agent call accepts."""

from __future__ import annotations

from typing import Any, TypedDict

from statehitl.types.content import ContentBlock, Messages

__all__ = ["AgentInput", "InterruptResponse", "InterruptResponseContent"]


class InterruptResponse(TypedDict):
    interruptId: str
    response: Any


class InterruptResponseContent(TypedDict):
    """One answer to an interrupt: ``{"interruptResponse": {"interruptId": ..., "response": ...}}``."""

    interruptResponse: InterruptResponse


AgentInput = str | list[ContentBlock] | list[InterruptResponseContent] | Messages | None
"""A prompt, content blocks, whole messages, interrupt responses, or None (continue the conversation)."""
