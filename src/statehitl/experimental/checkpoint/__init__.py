"""Strands' ``strands.experimental.checkpoint``: an agent that pauses at every tool cycle's boundaries.

``Agent(checkpointing=True)`` stops with ``stop_reason == "checkpoint"`` and ``result.checkpoint``
after the model asks for tools and again after they ran; ``agent({"checkpointResume": {"checkpoint":
result.checkpoint.to_dict()}})`` goes on. The pause is a checkpoint of the agent's thread, so with a
session another process resumes it (see ``checkpoint.py``).
"""

from __future__ import annotations

from statehitl.experimental.checkpoint.checkpoint import CHECKPOINT_SCHEMA_VERSION, Checkpoint, CheckpointPosition

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"]
