"""The answer block a caller passes to resume one interrupt, with the audit extras (``responder``,
``comment``) the human-side tests add."""

from __future__ import annotations

from typing import Any


def reply(interrupt: Any, response: Any, **extra: Any) -> list[dict[str, Any]]:
    """``[{"interruptResponse": ...}]`` answering ``interrupt`` (an ``Interrupt``, or its id)."""
    interrupt_id = interrupt if isinstance(interrupt, str) else interrupt.id
    return [{"interruptResponse": {"interruptId": interrupt_id, "response": response, **extra}}]
