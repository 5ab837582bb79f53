"""Helpers for agent tests: an ``add`` tool, scripted assistant messages, answers, and a conversation checker."""

from __future__ import annotations

from typing import Any

from statehitl import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first
        b: the second
    """
    return a + b


def uses(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message asking for tools: ``uses(("t1", "name", {...}), ...)``."""
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": i, "name": n, "input": x}} for i, n, x in calls]}


def answer(result: Any, text: str = "y") -> list[dict[str, Any]]:
    """Answer every pending interrupt of ``result`` with ``text``."""
    return [{"interruptResponse": {"interruptId": i.id, "response": text}} for i in result.interrupts]


def assert_no_dangling_tool_use(messages: list[dict[str, Any]]) -> None:
    """Every toolUse in the conversation is answered by a toolResult in the next message."""
    for index, message in enumerate(messages):
        ids = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if not ids:
            continue
        assert index + 1 < len(messages), f"message {index} has unanswered tool uses {ids}"
        answered = {b["toolResult"]["toolUseId"] for b in messages[index + 1]["content"] if "toolResult" in b}
        assert set(ids) == answered, f"message {index}: tool uses {ids}, results {answered}"
