"""LangGraph's small value types from ``langgraph.types`` that have no other home in statehitl: what
``bulk_update_state`` takes (``StateUpdate``), the ``"*"`` of ``interrupt_before`` (``All``), the durability
modes, what ``compile(checkpointer=)`` takes, and the check of it."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from statehitl.checkpoint.engine import Checkpointer as Saver


class StateUpdate(NamedTuple):
    """One update of ``bulk_update_state``: the values, and the node they are written as (None: the node
    LangGraph would pick). ``task_id`` is LangGraph's; statehitl names tasks by node and ignores it."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


All = Literal["*"]
"""``interrupt_before="*"``/``interrupt_after="*"``: stop before (or after) every node."""

Durability = Literal["sync", "async", "exit"]
"""When a run's checkpoints are written: ``"sync"`` fsyncs each step's before the next begins; ``"async"``
(statehitl's ``"step"``, the default) writes each step's and fsyncs the one ``invoke`` returns on;
``"exit"`` writes only that one."""

Checkpointer = None | bool | Saver
"""What ``compile(checkpointer=)`` takes: a checkpointer (``InMemorySaver()``, ``FileCheckpointer(dir)``,
any ``statehitl.checkpoint.Checkpointer``); ``True`` for a subgraph that keeps its state in its parent's
thread; ``None`` (or ``False``) for none of its own."""


def ensure_valid_checkpointer(checkpointer: Any) -> Any:
    """``checkpointer`` if ``compile()`` can take it, else LangGraph's ``TypeError`` naming what it got."""
    if checkpointer not in (None, True, False) and not isinstance(checkpointer, Saver):
        raise TypeError(
            "Invalid checkpointer provided. Expected an instance of `BaseCheckpointSaver`, `True`, `False`, or "
            f"`None`. Received {type(checkpointer).__name__}. Pass a proper saver (e.g., InMemorySaver, or "
            "statehitl's FileCheckpointer or any statehitl.checkpoint.Checkpointer)."
        )
    return checkpointer
