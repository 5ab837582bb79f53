"""``AgentResult`` where Strands' code imports it from (``strands.agent.agent_result``), as its documented
custom Graph node does; ``statehitl.agent`` has it too."""

from __future__ import annotations

from statehitl.agent.result import AgentMetrics, AgentResult

__all__ = ["AgentMetrics", "AgentResult"]
