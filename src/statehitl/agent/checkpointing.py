"""Strands' checkpointing on the agent loop: what a pause is, and what each input means at one.

``Agent(checkpointing=True)`` runs the loop machine with breakpoints after both of its nodes
(``CHECKPOINT_PAUSES``). The runner stops a run there only when a step leaves a node to run next, so the
agent pauses after ``model`` only when the model asked for tools (``after_model``) and after ``tools``
only when the model is to be called again (``after_tools``): a cycle whose tools interrupt stops on the
interrupt, and a cancelled call ends the run at its next cancellation-safe point instead of pausing
(``checkpoint_pauses``). The pause is the thread's
checkpoint (status ``interrupted``, nothing to answer, the next node pending), written durably, so
any process resumes it.

Pure functions only: the agent's thread (``thread.py``) asks them, then does the I/O. ``Checkpoint``
itself is imported when an agent first pauses or resumes, so an agent that never checkpoints never
loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statehitl.errors import AgentCheckpointError
from statehitl.runner_parts import Pauses
from statehitl.types.content import Message

if TYPE_CHECKING:
    from statehitl.experimental.checkpoint import Checkpoint, CheckpointPosition
    from statehitl.machine import Machine


CHECKPOINT_PAUSES = Pauses(after=frozenset({"model", "tools"}))
"""Where an agent with ``checkpointing=True`` stops: after each node, when another follows."""


@dataclass(frozen=True)
class CancellablePauses(Pauses):
    """``CHECKPOINT_PAUSES`` for one call: once ``cancelled()`` says the call is cancelled, the run does not
    pause but goes on to its next cancellation-safe point, as Strands skips its ``after_model`` checkpoint."""

    cancelled: Callable[[], bool] = field(default=lambda: False, compare=False)

    def stops_after(self, machine: Machine, ran: list[str]) -> bool:
        return super().stops_after(machine, ran) and not self.cancelled()


def checkpoint_pauses(cancelled: Callable[[], bool]) -> Pauses:
    """Where a checkpointing call stops: ``CHECKPOINT_PAUSES``, unless ``cancelled()`` by then."""
    return CancellablePauses(after=CHECKPOINT_PAUSES.after, cancelled=cancelled)

INTERRUPTED_TOOL_TEXT = "Tool was interrupted."
"""The error result a tool call gets when a new prompt arrives before it ran (Strands' words)."""


def checkpoint_resume(prompt: Any, *, enabled: bool) -> Checkpoint | None:
    """The checkpoint a ``{"checkpointResume": {"checkpoint": ...}}`` input resumes from; None for any
    other input. Refused as Strands refuses it: on an agent without checkpointing, without its
    ``checkpoint`` key, or with a checkpoint ``Checkpoint.from_dict`` refuses."""
    if not (isinstance(prompt, dict) and "checkpointResume" in prompt):
        return None
    if not enabled:
        raise AgentCheckpointError(
            "Received checkpointResume block but agent was created with checkpointing=False. "
            "Pass checkpointing=True when constructing the Agent."
        )
    payload = prompt["checkpointResume"]
    if not isinstance(payload, dict) or "checkpoint" not in payload:
        raise KeyError("checkpoint | missing required key in checkpointResume block")
    from statehitl.experimental.checkpoint import Checkpoint  # only agents that checkpoint load it

    return Checkpoint.from_dict(payload["checkpoint"])


def paused_at(status: str, pending: list[str], waiting: bool) -> CheckpointPosition | None:
    """Which boundary a thread with this last checkpoint is paused at; None if it is not paused (it ended,
    or waits on an interrupt)."""
    if status != "interrupted" or waiting:
        return None
    if pending == ["tools"]:
        return "after_model"
    if pending == ["model"]:
        return "after_tools"
    return None


def first_cycle(resumed: Checkpoint | None) -> int:
    """The index of the tool cycle a call starts in: 0 for any call but a ``checkpointResume``, which goes
    on in the cycle it paused in (``after_model``) or the next one (``after_tools``), as Strands counts."""
    if resumed is None:
        return 0
    return resumed.cycle_index + 1 if resumed.position == "after_tools" else resumed.cycle_index


def unanswered_results(turn: dict[str, Any]) -> Message:
    """The user message that closes ``turn``'s tool calls with an error result each, for a conversation
    that goes on with a new prompt instead of running them (Strands does the same)."""
    return {"role": "user", "content": [
        {"toolResult": {"toolUseId": block["toolUse"]["toolUseId"], "status": "error",
                        "content": [{"text": INTERRUPTED_TOOL_TEXT}]}}
        for block in turn.get("content", []) if "toolUse" in block
    ]}
