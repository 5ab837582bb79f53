"""Multi-agent orchestration: ``Graph`` (built with ``GraphBuilder``) and ``Swarm``, as in Strands.

    from statehitl.multiagent import GraphBuilder, Swarm, Status

Both are machines on the shared runner whose nodes are agents (and, for a Graph, nested Graphs,
Swarms or compiled StateGraphs): interrupts from ``BeforeNodeCallEvent`` hooks or from inside any
node, sessions, streaming and telemetry work as for a single agent.
"""

from __future__ import annotations

from statehitl.multiagent.executor import MultiAgentBase
from statehitl.multiagent.graph import Graph, GraphBuilder, GraphEdge, GraphNode, GraphState
from statehitl.multiagent.results import GraphResult, MultiAgentResult, NodeResult, SwarmResult
from statehitl.multiagent.swarm import SharedContext, Swarm, SwarmNode
from statehitl.status import Status

__all__ = [
    "Graph",
    "GraphBuilder",
    "GraphEdge",
    "GraphNode",
    "GraphResult",
    "GraphState",
    "MultiAgentBase",
    "MultiAgentResult",
    "NodeResult",
    "SharedContext",
    "Status",
    "Swarm",
    "SwarmNode",
    "SwarmResult",
]
