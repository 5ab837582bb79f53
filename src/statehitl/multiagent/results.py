"""What Graph and Swarm calls return, with the attributes Strands users read.

A node's result is stored in the orchestration's checkpoint as JSON (``NodeResult.to_dict``) and read
back into these objects, so a result built in a new process (after a resume) is the same as one built
in the process that ran the nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from statehitl.agent.result import AgentResult
from statehitl.errors import InvalidUpdateError
from statehitl.interrupt import Interrupt
from statehitl.multiagent.failures import dump_exception, load_exception
from statehitl.status import Status


def zero_usage() -> dict[str, int]:
    return {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def add_usage(total: dict[str, int], usage: dict[str, Any]) -> None:
    """Add ``usage``'s token counts into ``total``."""
    for key, value in usage.items():
        if isinstance(value, int):
            total[key] = total.get(key, 0) + value


def accumulated(results: Iterable[NodeResult]) -> tuple[dict[str, int], dict[str, int]]:
    """The token usage and latency of ``results`` added up (an orchestration's, from its nodes')."""
    usage, latency = zero_usage(), 0
    for result in results:
        add_usage(usage, result.accumulated_usage)
        latency += result.accumulated_metrics.get("latencyMs", 0)
    return usage, {"latencyMs": latency}


@dataclass
class NodeResult:
    """One node's outcome: ``result`` is an ``AgentResult``, a ``MultiAgentResult`` (a nested Graph or
    Swarm), a StateGraph's run result, or the ``Exception`` that failed it."""

    result: Any
    execution_time: int = 0
    status: Status = Status.PENDING
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, int] = field(default_factory=lambda: {"latencyMs": 0})
    execution_count: int = 0
    interrupts: list[Interrupt] = field(default_factory=list)

    def __str__(self) -> str:
        return str(self.result)

    def get_agent_results(self) -> list[AgentResult]:
        """Every agent's result in this node, flattened through nested orchestrators."""
        if isinstance(self.result, AgentResult):
            return [self.result]
        if isinstance(self.result, MultiAgentResult):
            return [r for node in self.result.results.values() for r in node.get_agent_results()]
        return []

    def to_dict(self) -> dict[str, Any]:
        """JSON, as the orchestration's checkpoint stores it."""
        result = self.result
        payload: dict[str, Any]
        if isinstance(result, Exception):
            payload = dump_exception(result)
        elif callable(getattr(result, "to_dict", None)):
            payload = result.to_dict()
        else:
            raise InvalidUpdateError(
                f"a NodeResult's result must be an AgentResult, a MultiAgentResult or an exception to be stored; got "
                f"{type(result).__name__}: {result!r}"
            )
        return {"result": payload, "execution_time": self.execution_time, "status": self.status.value,
                "accumulated_usage": self.accumulated_usage, "accumulated_metrics": self.accumulated_metrics,
                "execution_count": self.execution_count, "interrupts": [i.to_dict() for i in self.interrupts]}

    @classmethod
    def from_dict(cls, data: dict[str, Any], load_other: Callable[[dict[str, Any]], Any] | None = None) -> NodeResult:
        """A result back from its JSON; ``load_other`` reads a payload that is not an agent's, an
        orchestrator's or an exception (a StateGraph node's run result)."""
        payload = data["result"]
        kind = payload.get("type")
        result: Any
        if kind == "agent_result":
            result = AgentResult.from_dict(payload)
        elif kind == "multiagent_result":
            result = MultiAgentResult.from_dict(payload)
        elif kind == "exception":
            result = load_exception(payload)
        elif load_other is not None:
            result = load_other(payload)
        else:
            result = payload
        return cls(result, int(data.get("execution_time", 0)), Status(data.get("status", "pending")),
                   dict(data.get("accumulated_usage", zero_usage())),
                   dict(data.get("accumulated_metrics", {"latencyMs": 0})), int(data.get("execution_count", 0)),
                   [Interrupt(**i) for i in data.get("interrupts", [])])


@dataclass
class MultiAgentResult:
    """What a Graph or Swarm call returns. Loop while ``status == Status.INTERRUPTED``, answering
    ``interrupts``; ``results`` holds each node's last result of this invocation."""

    status: Status = Status.PENDING
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, int] = field(default_factory=lambda: {"latencyMs": 0})
    execution_count: int = 0
    execution_time: int = 0
    interrupts: list[Interrupt] = field(default_factory=list)
    failure: str | None = None
    """Why the call ended FAILED without an exception: a limit, a cancelled node, a failed node."""

    def __str__(self) -> str:
        if self.interrupts:
            return str([i.to_dict() for i in self.interrupts])
        return "\n".join(f"{name}: {text}" for name, result in self.results.items()
                         if (text := str(result).removesuffix("\n")))

    def to_dict(self) -> dict[str, Any]:
        return {"type": "multiagent_result", "status": self.status.value,
                "results": {k: v.to_dict() for k, v in self.results.items()},
                "accumulated_usage": self.accumulated_usage, "accumulated_metrics": self.accumulated_metrics,
                "execution_count": self.execution_count, "execution_time": self.execution_time,
                "interrupts": [i.to_dict() for i in self.interrupts], "failure": self.failure}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MultiAgentResult:
        return cls(Status(data["status"]), {k: NodeResult.from_dict(v) for k, v in data.get("results", {}).items()},
                   dict(data.get("accumulated_usage", zero_usage())),
                   dict(data.get("accumulated_metrics", {"latencyMs": 0})), int(data.get("execution_count", 0)),
                   int(data.get("execution_time", 0)), [Interrupt(**i) for i in data.get("interrupts", [])],
                   data.get("failure"))


@dataclass
class GraphResult(MultiAgentResult):
    """A Graph call's result: counts of nodes by outcome, the order they ran in, the graph's shape."""

    total_nodes: int = 0
    completed_nodes: int = 0
    failed_nodes: int = 0
    interrupted_nodes: int = 0
    execution_order: list[Any] = field(default_factory=list)
    edges: list[tuple[Any, Any]] = field(default_factory=list)
    entry_points: list[Any] = field(default_factory=list)


@dataclass
class SwarmResult(MultiAgentResult):
    """A Swarm call's result: ``node_history`` is the agents in the order they had the turn."""

    node_history: list[Any] = field(default_factory=list)
