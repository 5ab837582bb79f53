"""An item as its storage holds it: one kind-tagged, versioned JSON record per item, validated by pydantic
when read, and checked to be the record of the key it was read from."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from statehitl.errors import StoreCorruptError
from statehitl.store.items import Item, SearchItem


class StoredItem(BaseModel):
    """One item: its value and times, when it expires (``ttl`` minutes after it was last put or read, as
    ``expires_at`` seconds since the epoch) and the vectors its index embedded, by path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["store_item"] = "store_item"
    v: Literal[1] = 1
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    ttl: float | None = None
    expires_at: float | None = None
    vectors: dict[str, list[float]] = Field(default_factory=dict)

    @classmethod
    def read(cls, where: str, data: bytes, namespace: tuple[str, ...], key: str) -> StoredItem:
        """The record in ``data``, read from storage key ``where``, which holds ``namespace``/``key``."""
        try:
            record = cls.model_validate_json(data)
        except ValidationError as exc:
            raise StoreCorruptError(f"stored item {where!r} is malformed: {exc.errors(include_url=False)}") from None
        if record.namespace != namespace or record.key != key:
            raise StoreCorruptError(f"stored item {where!r} says it is {record.key!r} in {record.namespace!r}: copied "
                                    "there from elsewhere, or edited")
        return record

    def dump(self) -> bytes:
        return self.model_dump_json().encode()

    def alive(self, now: float) -> bool:
        """Whether the item has not expired at ``now`` (seconds since the epoch)."""
        return self.expires_at is None or now < self.expires_at

    def item(self) -> Item:
        return Item(value=self.value, key=self.key, namespace=self.namespace, created_at=self.created_at,
                    updated_at=self.updated_at)

    def found(self, score: float | None = None) -> SearchItem:
        return SearchItem(self.namespace, self.key, self.value, self.created_at, self.updated_at, score=score)


def utc(seconds: float) -> datetime:
    """A time in seconds since the epoch as an aware UTC datetime, what an item's times are."""
    return datetime.fromtimestamp(seconds, UTC)
