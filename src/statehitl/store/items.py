"""What the store hands back: an ``Item`` (a value under a namespace and key, with its times) and a
``SearchItem`` (an item found by ``search``, with its relevance score), shaped as LangGraph's so code
written against ``langgraph.store.base`` reads them unchanged."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def _when(value: datetime | str) -> datetime:
    """A time given as a datetime or, as a deserialized item carries it, as ISO text."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


class Item:
    """A stored value: ``value`` (a dict, its keys filterable), ``key`` (unique within the namespace),
    ``namespace`` (a tuple of labels, like a folder path), ``created_at`` and ``updated_at``."""

    __slots__ = ("created_at", "key", "namespace", "updated_at", "value")

    def __init__(self, *, value: dict[str, Any], key: str, namespace: tuple[str, ...],
                 created_at: datetime | str, updated_at: datetime | str) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _when(created_at)
        self.updated_at = _when(updated_at)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return False
        return (self.value, self.key, self.namespace, self.created_at, self.updated_at) == (
            other.value, other.key, other.namespace, other.created_at, other.updated_at)

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict[str, Any]:
        """The item as JSON-ready data (times as ISO text), as LangGraph's ``Item.dict()``."""
        return {"namespace": list(self.namespace), "key": self.key, "value": self.value,
                "created_at": self.created_at.isoformat(), "updated_at": self.updated_at.isoformat()}

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.dict().items())
        return f"{type(self).__name__}({shown})"


class SearchItem(Item):
    """An item ``search`` found; ``score`` is its similarity to the query (None without a query, or for an
    item that has no embedding)."""

    __slots__ = ("score",)

    def __init__(self, namespace: tuple[str, ...], key: str, value: dict[str, Any], created_at: datetime | str,
                 updated_at: datetime | str, *, score: float | None = None) -> None:
        super().__init__(value=value, key=key, namespace=namespace, created_at=created_at, updated_at=updated_at)
        self.score = score

    def dict(self) -> dict[str, Any]:
        return {**super().dict(), "score": self.score}
