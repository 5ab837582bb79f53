"""What an agent call returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statehitl.interrupt import Interrupt
from statehitl.types.content import Message

if TYPE_CHECKING:
    from statehitl.experimental.checkpoint import Checkpoint


@dataclass
class ToolMetrics:
    """Calls of one tool in one invocation."""

    call_count: int = 0
    success_count: int = 0
    error_count: int = 0
    total_time: float = 0.0


@dataclass
class AgentMetrics:
    """Counts for one invocation: cycles (model calls), token usage, tool calls."""

    cycle_count: int = 0
    accumulated_usage: dict[str, int] = field(
        default_factory=lambda: {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    )
    accumulated_metrics: dict[str, int] = field(default_factory=lambda: {"latencyMs": 0})
    tool_metrics: dict[str, ToolMetrics] = field(default_factory=dict)

    def add_usage(self, usage: dict[str, Any], metrics: dict[str, Any]) -> None:
        for key in ("inputTokens", "outputTokens", "totalTokens"):
            self.accumulated_usage[key] += int(usage.get(key, 0) or 0)
        self.accumulated_metrics["latencyMs"] += int(metrics.get("latencyMs", 0) or 0)

    def add_tool(self, name: str, ok: bool, seconds: float) -> None:
        tool = self.tool_metrics.setdefault(name, ToolMetrics())
        tool.call_count += 1
        tool.success_count += ok
        tool.error_count += not ok
        tool.total_time += seconds


@dataclass
class AgentResult:
    """The outcome of ``agent(...)``.

    ``stop_reason`` is ``"end_turn"`` (the model answered), ``"interrupt"`` (answer ``interrupts``
    and call again), ``"checkpoint"`` (an agent built with ``checkpointing=True`` paused: pass
    ``checkpoint`` back to go on), ``"cancelled"``, ``"max_tokens"``... ``message`` is the last assistant
    message (on an interrupt, the one whose tool calls are waiting). ``str(result)`` is its text.
    """

    stop_reason: str
    message: Message
    metrics: AgentMetrics
    state: dict[str, Any]
    interrupts: list[Interrupt] = field(default_factory=list)
    checkpoint: Checkpoint | None = None

    def __str__(self) -> str:
        return "\n".join(block["text"] for block in self.message.get("content", []) if "text" in block)

    def to_dict(self) -> dict[str, Any]:
        """JSON of the result, as an orchestrator stores a node's result (Strands' shape, ``type`` first).

        The caller's invocation state is not stored: it is the caller's, and need not be JSON.
        """
        from statehitl.agent.binary import to_json_safe

        stored = {
            "type": "agent_result",
            "stop_reason": self.stop_reason,
            "message": to_json_safe(self.message),
            "metrics": {"cycle_count": self.metrics.cycle_count,
                        "accumulated_usage": dict(self.metrics.accumulated_usage),
                        "accumulated_metrics": dict(self.metrics.accumulated_metrics)},
            "interrupts": [i.to_dict() for i in self.interrupts],
        }
        if self.checkpoint is not None:  # only a paused agent's: every other result stores no extra bytes
            stored["checkpoint"] = self.checkpoint.to_dict()
        return stored

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentResult:
        """A result back from ``to_dict``'s JSON."""
        from statehitl.agent.binary import from_json_safe

        stored = data.get("metrics", {})
        metrics = AgentMetrics()
        metrics.cycle_count = int(stored.get("cycle_count", 0))
        metrics.accumulated_usage.update(stored.get("accumulated_usage", {}))
        metrics.accumulated_metrics.update(stored.get("accumulated_metrics", {}))
        checkpoint = None
        if data.get("checkpoint"):
            from statehitl.experimental.checkpoint import Checkpoint

            checkpoint = Checkpoint.from_dict(data["checkpoint"])
        return cls(data["stop_reason"], from_json_safe(data["message"]), metrics, {},
                   [Interrupt(**i) for i in data.get("interrupts", [])], checkpoint)
