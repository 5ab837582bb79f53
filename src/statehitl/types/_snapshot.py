"""``Snapshot``: a point-in-time capture of an agent, as versioned JSON (Strands' ``strands.types._snapshot``).

``agent.take_snapshot(preset=..., include=..., exclude=...)`` captures the fields chosen (preset, then
include added, then exclude taken away); ``agent.load_snapshot(snapshot)`` restores the fields it holds
and leaves the others as they are. The fields are Strands':

- ``messages``, ``state``, ``conversation_manager_state``, ``system_prompt`` (as content blocks),
  ``model_state``;
- ``interrupt_state``: the interrupts the agent waits on (``activated``), with, in ``context``, the
  checkpoint of its thread that holds the tool calls waiting on them;

and one of statehitl's own:

- ``checkpoint``: a reference to the checkpoint of the agent's thread holding its conversation, state and
  pending interrupts, instead of a copy of them. Loading it takes the agent back to that checkpoint (the
  thread's next checkpoint is written after it: time travel over the thread's own history). This is what
  ``SnapshotSessionManager`` stores.

The ``"session"`` preset is what a session keeps: ``messages``, ``state``, ``conversation_manager_state``,
``interrupt_state`` and ``model_state``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from statehitl.errors import SnapshotError

SnapshotField = Literal[
    "messages", "state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state", "checkpoint",
]
SnapshotPreset = Literal["session"]
Scope = Literal["agent", "multiAgent"]

ALL_SNAPSHOT_FIELDS: tuple[SnapshotField, ...] = (
    "messages", "state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state", "checkpoint",
)
VALID_SCOPES: tuple[Scope, ...] = ("agent", "multiAgent")
SNAPSHOT_SCHEMA_VERSION = "1.0"
SNAPSHOT_PRESETS: dict[str, tuple[SnapshotField, ...]] = {
    "session": ("messages", "state", "conversation_manager_state", "interrupt_state", "model_state"),
}


class _Stored(BaseModel):
    """What a snapshot's dict must hold, checked before a ``Snapshot`` is built from it."""

    model_config = ConfigDict(extra="ignore", strict=True, defer_build=True)

    scope: str = "agent"
    schema_version: str = ""
    created_at: str
    data: dict[str, Any]
    app_data: dict[str, Any] = {}


@dataclass
class Snapshot:
    """A capture of an agent: Strands-owned ``data``, the application's own ``app_data``, when it was taken."""

    scope: Scope
    schema_version: str
    data: dict[str, Any]
    app_data: dict[str, Any]
    created_at: str = field(default="")
    """ISO 8601, UTC (``...Z``); filled in when left empty."""

    def __post_init__(self) -> None:
        if not self.created_at:
            self.created_at = datetime.now(UTC).isoformat().replace("+00:00", "Z")

    def validate(self) -> None:
        """Refuse (``SnapshotError``) a snapshot this statehitl cannot load: another schema version or scope."""
        if self.schema_version != SNAPSHOT_SCHEMA_VERSION:
            raise SnapshotError(f"Unsupported snapshot schema version: {self.schema_version!r}. "
                                f"Current version: {SNAPSHOT_SCHEMA_VERSION}")
        if self.scope not in VALID_SCOPES:
            raise SnapshotError(f"Invalid snapshot scope: {self.scope!r}. Valid scopes: {sorted(VALID_SCOPES)}")

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as plain data (JSON once any bytes in messages are encoded)."""
        return {"scope": self.scope, "schema_version": self.schema_version, "created_at": self.created_at,
                "data": self.data, "app_data": self.app_data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        """The snapshot ``to_dict`` gave; ``SnapshotError`` for anything else (a missing or mistyped field,
        another schema version or scope)."""
        try:
            stored = _Stored.model_validate(data)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'snapshot'}: {e['msg']}" for e in error.errors())
            raise SnapshotError(f"not a snapshot: {problems}") from None
        snapshot = cls(scope=stored.scope, schema_version=stored.schema_version,  # type: ignore[arg-type]
                       created_at=stored.created_at, data=stored.data, app_data=stored.app_data)
        snapshot.validate()
        return snapshot


def resolve_snapshot_fields(*, preset: SnapshotPreset | None = None, include: list[SnapshotField] | None = None,
                            exclude: list[SnapshotField] | None = None) -> set[SnapshotField]:
    """The fields to capture: the preset's, then ``include`` added, then ``exclude`` taken away.

    ``SnapshotError`` for an unknown preset or field, or when nothing is left to capture.
    """
    valid = set(ALL_SNAPSHOT_FIELDS)
    for name in [*(include or []), *(exclude or [])]:
        if name not in valid:
            raise SnapshotError(f"Invalid snapshot field: {name!r}. Valid fields: {sorted(valid)}")
    if preset is not None and preset not in SNAPSHOT_PRESETS:
        raise SnapshotError(f"Invalid snapshot preset: {preset!r}. Valid presets: {sorted(SNAPSHOT_PRESETS)}")
    fields: set[SnapshotField] = set(SNAPSHOT_PRESETS[preset]) if preset is not None else set()
    fields |= set(include or [])
    fields -= set(exclude or [])
    if not fields:
        raise SnapshotError(
            "No snapshot fields resolved. Provide a preset or at least one field in 'include'. "
            "Note: passing only 'exclude' without a preset or 'include' always results in an empty set."
        )
    return fields
