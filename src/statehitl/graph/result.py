"""What a StateGraph run returns, and how its stored status reads through the API.

Also how the result is stored when the graph runs as a node of a Graph (``to_dict``/``from_dict``):
the orchestration's checkpoint keeps each node's result as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from statehitl.interrupt import Interrupt
from statehitl.status import Status

if TYPE_CHECKING:
    from statehitl.channels import StateSchema

__all__ = ["GraphRunResult", "run_result", "stop_reason"]

M = TypeVar("M", bound=BaseModel)

_STOP_REASON = {"interrupted": "interrupt", "completed": "end", "executing": "running"}


def stop_reason(status: str, cancelled: dict[str, str]) -> str:
    """Why a run stopped, in a word: ``failed`` reads ``cancelled`` when a hook cancelled a node (the
    run is FAILED, as Strands reports a cancelled node) and ``error`` when a node raised."""
    if status == "failed":
        return "cancelled" if cancelled else "error"
    return _STOP_REASON[status]


@dataclass
class GraphRunResult(Generic[M]):
    """What ``invoke`` returns. Loop while ``stop_reason == "interrupt"``, answering ``interrupts``."""

    thread_id: str
    state: M
    status: Status
    stop_reason: str
    interrupts: list[Interrupt]
    checkpoint_id: str
    step: int
    cancelled: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return str(self.state)

    def to_dict(self) -> dict[str, Any]:
        """JSON of the result, as a Graph stores a StateGraph node's result."""
        return {"type": "state_graph_result", "values": self.state.model_dump(mode="json"), "status": self.status.value,
                "stop_reason": self.stop_reason, "step": self.step, "cancelled": self.cancelled,
                "interrupts": [i.to_dict() for i in self.interrupts]}

    @classmethod
    def from_dict(cls, data: dict[str, Any], schema: StateSchema[M]) -> GraphRunResult[M]:
        return cls("", schema.load(data["values"]), Status(data["status"]), data["stop_reason"],
                   [Interrupt(**i) for i in data.get("interrupts", [])], "", int(data["step"]),
                   data.get("cancelled", {}))


def run_result(thread_id: str, status: str, state: Any, interrupts: list[Interrupt], step: int,
               cancelled: dict[str, str], checkpoint_id: str = "") -> GraphRunResult[Any]:
    """A run's result from the stored status it stopped with."""
    return GraphRunResult(thread_id, state, Status(status), stop_reason(status, cancelled), interrupts,
                          checkpoint_id, step, cancelled)
