"""``Checkpoint``: where an agent built with ``checkpointing=True`` paused, to pass back to resume it.

An agent that checkpoints stops at the two boundaries of every cycle that calls tools: ``after_model``
(the model asked for tools, none has run) and ``after_tools`` (the tools ran, the model has not seen
their results). It returns ``stop_reason == "checkpoint"`` with ``result.checkpoint``, and goes on
when called with ``{"checkpointResume": {"checkpoint": checkpoint.to_dict()}}``. ``cycle_index`` counts
the invocation's tool cycles from 0.

In Strands the checkpoint is only a marker and the conversation must be persisted apart. In statehitl
the pause is a checkpoint of the agent's thread like an interrupt's: with a session, a new ``Agent`` in
another process, given the same ``checkpointResume``, goes on from it. An interrupt takes precedence
over a checkpoint (a cycle whose tools interrupt returns ``stop_reason == "interrupt"``; once answered,
the cycle pauses ``after_tools``), and so does a cancel (a cancelled model call ends the invocation).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from statehitl.errors import AgentCheckpointError

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"]

logger = logging.getLogger(__name__)

CHECKPOINT_SCHEMA_VERSION = "1.0"
"""The checkpoint format this statehitl reads and writes (Strands' too)."""

CheckpointPosition = Literal["after_model", "after_tools"]
"""Which boundary of a tool cycle the agent paused at."""


class _Fields(BaseModel):
    """What a checkpoint's dict must hold, checked before anything is built from it."""

    model_config = ConfigDict(extra="ignore", strict=True, defer_build=True)  # built on a first resume

    position: CheckpointPosition
    cycle_index: int = 0


@dataclass(frozen=True)
class Checkpoint:
    """Where the agent paused; pass it back (``to_dict()``) to resume. ``schema_version`` is fixed."""

    position: CheckpointPosition
    cycle_index: int = 0
    schema_version: str = field(init=False, default=CHECKPOINT_SCHEMA_VERSION)

    def to_dict(self) -> dict[str, Any]:
        """The checkpoint as JSON-ready data, what ``from_dict`` and ``checkpointResume`` take back."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Checkpoint:
        """The checkpoint ``to_dict`` gave. ``AgentCheckpointError`` (Strands' ``CheckpointException``) for
        another schema version, an unknown position or a cycle index that is not a whole number ≥ 0;
        unknown fields are ignored with a warning, as Strands does."""
        if not isinstance(data, dict):
            raise AgentCheckpointError(f"a checkpoint is the dict Checkpoint.to_dict() gives, got {data!r}")
        version = data.get("schema_version", "")
        if version != CHECKPOINT_SCHEMA_VERSION:
            raise AgentCheckpointError(
                f"Checkpoints with schema version {version!r} are not compatible "
                f"with current version {CHECKPOINT_SCHEMA_VERSION}."
            )
        unknown = set(data) - {"position", "cycle_index", "schema_version"}
        if unknown:
            logger.warning("unknown_keys=<%s> | ignoring unknown fields in checkpoint data", unknown)
        try:
            fields = _Fields.model_validate(data)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise AgentCheckpointError(f"checkpoint {data!r} cannot be resumed from: {problems}") from None
        if fields.cycle_index < 0:
            raise AgentCheckpointError(f"checkpoint {data!r} cannot be resumed from: cycle_index is negative")
        return cls(position=fields.position, cycle_index=fields.cycle_index)
