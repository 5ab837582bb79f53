"""The rules of one orchestrator call that need no orchestrator: how it ended, whether its task is a retry,
what a task may be, which trace attributes a span keeps, and its nodes' results as objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statehitl.checkpoint.records import CheckpointRecord
from statehitl.errors import ResumeInputError
from statehitl.multiagent.nodes import OrchestratedNode
from statehitl.multiagent.results import NodeResult
from statehitl.multiagent.state import task_channel
from statehitl.status import Status

STEP_LIMIT = 100_000
"""Steps an orchestration may take in one call: its own limits (node executions, handoffs, time) are
what end a loop; this only keeps a graph with none of them set from running forever."""


def call_status(status: str, state: dict[str, Any], cancelled: dict[str, str]) -> Status:
    """How a call that stopped with the runner's ``status`` in ``state`` ended, as Strands says it (a
    thread left ``executing`` is a call still running, or one whose process died)."""
    if status == "interrupted":
        return Status.INTERRUPTED
    if status == "executing":
        return Status.EXECUTING
    if status == "failed" or cancelled or state.get("failure") is not None:
        return Status.FAILED
    return Status.COMPLETED


def is_retry(task: Any, record: CheckpointRecord) -> bool:
    """Whether ``task``, sent to a thread whose call stopped mid-way (its process died, or a step raised),
    is that call's own task sent again: a retry, which goes on from where the call stopped instead of
    running its finished nodes again."""
    return (record.status in ("executing", "failed") and bool(record.pending)
            and record.values.get("task") == task_channel(task))


def span_attributes(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Strands' ``trace_attributes``: those whose value a span can hold (str, int, float, bool, or a list
    of them), as Strands keeps them; the others are left out."""
    scalar = (str, int, float, bool)
    return {k: v for k, v in (given or {}).items()
            if isinstance(v, scalar) or (isinstance(v, list) and all(isinstance(x, scalar) for x in v))}


def check_task(task: Any, label: str) -> None:
    """A task is a str or a list of content blocks (dicts); refuse anything else before it runs."""
    if isinstance(task, str) or (isinstance(task, list) and task and all(isinstance(b, dict) and b for b in task)):
        return
    raise ResumeInputError(
        f"{label}: a task must be a str or a list of content blocks like {{'text': ...}} (or, to answer "
        f"interrupts, a list of {{'interruptResponse': ...}}); got {type(task).__name__}: {task!r}"
    )


def node_results(state: dict[str, Any], nodes: dict[str, OrchestratedNode]) -> dict[str, NodeResult]:
    """This invocation's results so far, as objects (what edge conditions and node inputs read)."""
    return {node_id: nodes[node_id].load_result(data) for node_id, data in state.get("results", {}).items()
            if node_id in nodes}

