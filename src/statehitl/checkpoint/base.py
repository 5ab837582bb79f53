"""LangGraph's checkpoint shapes, at its path (``langgraph.checkpoint.base``): what a checkpointer's
``get_tuple``, ``list`` and ``get`` give back (``checkpoint/saver.py`` builds them from statehitl's records).

These are the shapes only: statehitl's checkpointers write their own records (``checkpoint/records.py``), and
``CheckpointTuple`` is how LangGraph code that reads a saver directly sees them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypedDict

__all__ = ["Checkpoint", "CheckpointMetadata", "CheckpointTuple", "PendingWrite"]

PendingWrite = tuple[str, str, Any]
"""A write kept on a checkpoint for the step that runs from it: ``(task id, channel, value)``."""


class CheckpointMetadata(TypedDict, total=False):
    """What a checkpoint says of how it was made: ``source`` (``"input"``, ``"loop"``, ``"update"``,
    ``"fork"``), ``step`` (-1 for a new thread's input) and ``parents`` (checkpoint ids of enclosing graphs by
    namespace; ``{}`` at the top level)."""

    source: str
    step: int
    parents: dict[str, str]


class Checkpoint(TypedDict):
    """One checkpoint as LangGraph's savers hold it. ``channel_values`` are the state's channels as stored
    (without the writes of tasks that finished in a step that then stopped: those are ``pending_writes``).
    statehitl keeps no channel versions, so ``channel_versions`` and ``versions_seen`` are empty
    (``docs/langgraph.md``)."""

    v: int
    id: str
    ts: str
    channel_values: dict[str, Any]
    channel_versions: dict[str, Any]
    versions_seen: dict[str, dict[str, Any]]
    updated_channels: list[str] | None


class CheckpointTuple(NamedTuple):
    """A checkpoint with its config, metadata, the config of the checkpoint before it, and the writes kept
    on it for the step that runs from it (the 5-field named tuple LangGraph's ``get_tuple`` and ``list``
    return)."""

    config: dict[str, Any]
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: dict[str, Any] | None = None
    pending_writes: list[PendingWrite] | None = None
