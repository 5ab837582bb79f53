"""What a StateGraph run returns, and how its stored status reads through the API.

Also how the result is stored when the graph runs as a node of a Graph (``to_dict``/``from_dict``):
the orchestration's checkpoint keeps each node's result as JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from statehitl.interrupt import Interrupt
from statehitl.status import Status

if TYPE_CHECKING:
    from statehitl.channels import StateSchema


M = TypeVar("M", bound=BaseModel)

_STOP_REASON = {"interrupted": "interrupt", "completed": "end", "executing": "running"}


def stop_reason(status: str, cancelled: dict[str, str]) -> str:
    """Why a run stopped, in a word: ``failed`` reads ``cancelled`` when a hook cancelled a node (the
    run is FAILED, as Strands reports a cancelled node) and ``error`` when a node raised."""
    if status == "failed":
        return "cancelled" if cancelled else "error"
    return _STOP_REASON[status]


class GraphRunResult(dict[str, Any], Generic[M]):
    """What ``invoke`` returns: LangGraph's result, the state's values as a dict with ``"__interrupt__"``
    (a list of ``Interrupt``) when the run stopped on interrupts, and statehitl's view of the same run as
    attributes. Loop while ``stop_reason == "interrupt"``, answering ``interrupts``.
    """

    thread_id: str
    state: M
    status: Status
    stop_reason: str
    interrupts: list[Interrupt]
    checkpoint_id: str
    step: int
    cancelled: dict[str, str]

    def __init__(self, thread_id: str, state: M, status: Status, *, stop_reason: str, interrupts: list[Interrupt],
                 checkpoint_id: str, step: int, cancelled: dict[str, str] | None = None,
                 values: Any = None) -> None:
        super().__init__(values if isinstance(values, dict) else {} if values is None else {"root": values})
        if interrupts:
            self["__interrupt__"] = list(interrupts)
        self.thread_id, self.state, self.status, self.stop_reason = thread_id, state, status, stop_reason
        self.interrupts, self.checkpoint_id, self.step = interrupts, checkpoint_id, step
        self.cancelled = cancelled or {}

    def __repr__(self) -> str:
        return dict.__repr__(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON of the result, as a Graph stores a StateGraph node's result."""
        return {"type": "state_graph_result", "values": _json_values(self.state), "status": self.status.value,
                "stop_reason": self.stop_reason, "step": self.step, "cancelled": self.cancelled,
                "interrupts": [i.to_dict() for i in self.interrupts]}

    @classmethod
    def from_dict(cls, data: dict[str, Any], schema: StateSchema[M]) -> GraphRunResult[M]:
        state = schema.load(data["values"])
        return cls("", state, Status(data["status"]), stop_reason=data["stop_reason"],
                   interrupts=[Interrupt(**i) for i in data.get("interrupts", [])], checkpoint_id="",
                   step=int(data["step"]), cancelled=data.get("cancelled", {}), values=_plain_values(state))


def _json_values(state: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = state.model_dump(mode="json")
    return dumped


def _plain_values(state: Any) -> dict[str, Any]:
    values: dict[str, Any] = state.model_dump()
    return values


def run_result(thread_id: str, status: str, state: Any, *, interrupts: list[Interrupt], step: int,
               cancelled: dict[str, str], checkpoint_id: str = "", values: Any = None) -> GraphRunResult[Any]:
    """A run's result from the stored status it stopped with; ``values``: what the dict holds (the state's
    channels as the graph's output schema shows them; by default all of the model's fields)."""
    return GraphRunResult(thread_id, state, Status(status), stop_reason=stop_reason(status, cancelled),
                          interrupts=interrupts, checkpoint_id=checkpoint_id, step=step, cancelled=cancelled,
                          values=_plain_values(state) if values is None else values)
