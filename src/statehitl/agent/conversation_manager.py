"""Conversation managers: what the agent keeps of its history between calls (Strands' names).

The default keeps everything. ``SlidingWindowConversationManager(window_size)`` keeps the newest
messages after each call, cutting only where the kept part still starts with a user's own words (never
with tool results whose tool uses were cut), so the model always sees a well-formed conversation. A
trimmed history is a rewrite, not an append: the next checkpoint stores it whole, once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

__all__ = ["Conversation", "ConversationManager", "NullConversationManager", "SlidingWindowConversationManager"]


class Conversation(Protocol):
    """What a manager works on: an agent's ``messages`` (assigning a new list replaces the history)."""

    @property
    def messages(self) -> list[dict[str, Any]]: ...

    @messages.setter
    def messages(self, value: list[dict[str, Any]]) -> None: ...


class ConversationManager(ABC):
    """Decides, after each call that finished (not one waiting on an interrupt), what history stays."""

    removed_message_count: int = 0

    @abstractmethod
    def apply_management(self, agent: Conversation) -> None: ...

    def get_state(self) -> dict[str, Any]:
        """What a snapshot (and a ``SnapshotSessionManager``) keeps of this manager, as JSON: Strands' shape."""
        return {"__name__": type(self).__name__, "removed_message_count": self.removed_message_count}

    def restore_from_session(self, state: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Take back what ``get_state`` gave; ``ValueError`` if it is another manager's (Strands' words).
        Returns messages to put before the restored conversation: none, for the managers here."""
        self.check_state(state)
        self.removed_message_count = state["removed_message_count"]
        return None

    def check_state(self, state: Any) -> None:
        """Refuse what ``restore_from_session`` cannot take, before anything else of a snapshot is loaded."""
        if not isinstance(state, dict) or state.get("__name__") != type(self).__name__:
            raise ValueError("Invalid conversation manager state.")
        count = state.get("removed_message_count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError("Invalid conversation manager state.")


class NullConversationManager(ConversationManager):
    """Keep the whole conversation (the default)."""

    def apply_management(self, agent: Conversation) -> None:
        return None


class SlidingWindowConversationManager(ConversationManager):
    """Keep at most ``window_size`` messages, the newest, starting at a user turn without tool results."""

    def __init__(self, window_size: int = 40) -> None:
        if not isinstance(window_size, int) or window_size < 1:
            raise ValueError(f"window_size must be a positive int, got {window_size!r}")
        self.window_size = window_size
        self.removed_message_count = 0

    def apply_management(self, agent: Conversation) -> None:
        messages = agent.messages
        if len(messages) <= self.window_size:
            return
        start = len(messages) - self.window_size
        while start < len(messages) and not _opens_a_turn(messages[start]):
            start += 1
        self.removed_message_count += start
        agent.messages = messages[start:]


def _opens_a_turn(message: dict[str, Any]) -> bool:
    """A message a conversation may start with: the user's, and not answering earlier tool uses."""
    return message.get("role") == "user" and not any("toolResult" in block for block in message.get("content", []))
