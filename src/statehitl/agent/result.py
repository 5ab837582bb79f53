"""What an agent call returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statehitl.interrupt import Interrupt
from statehitl.types.content import Message

__all__ = ["AgentMetrics", "AgentResult", "ToolMetrics"]


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
    and call again), ``"cancelled"``, ``"max_tokens"``... ``message`` is the last assistant message (on
    an interrupt, the one whose tool calls are waiting). ``str(result)`` is its text.
    """

    stop_reason: str
    message: Message
    metrics: AgentMetrics
    state: dict[str, Any]
    interrupts: list[Interrupt] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(block["text"] for block in self.message.get("content", []) if "text" in block)
