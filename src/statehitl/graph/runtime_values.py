"""LangGraph's ``Runtime`` and what it carries: a node's run-scoped context, its stream writer, where it runs
(``ExecutionInfo``), the server it runs for (``ServerInfo``) and the run's drain switch (``RunControl``).

Plain values; what fills them in for a node call is ``graph.node_calls``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

C = TypeVar("C")


@dataclass(frozen=True)
class ExecutionInfo:
    """Where a node call runs: the thread, the checkpoint its run began from, its task, and which attempt of
    its retry policy this is (``node_attempt`` from 1; ``node_first_attempt_time`` in epoch seconds)."""

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        """A copy with the fields named replaced."""
        return replace(self, **overrides)


class ServerInfo:
    """What a LangGraph server says about the run (``assistant_id``, ``graph_id`` and the ``user`` from the
    config's ``configurable``); None when the config carries none."""

    __slots__ = ("assistant_id", "graph_id", "user")
    assistant_id: str
    graph_id: str
    user: Any

    def __init__(self, assistant_id: str, graph_id: str, user: Any = None) -> None:
        for name, value in (("assistant_id", assistant_id), ("graph_id", graph_id), ("user", user)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ServerInfo is frozen: cannot assign to {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerInfo) and (self.assistant_id, self.graph_id, self.user) == (
            other.assistant_id, other.graph_id, other.user)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ServerInfo(assistant_id={self.assistant_id!r}, graph_id={self.graph_id!r}, user={self.user!r})"


class RunControl:
    """A run's drain switch (``invoke(..., control=RunControl())``): ``request_drain(reason)`` from any thread
    (a SIGTERM handler) makes the run stop before its next step, its checkpoint written, and raise
    ``GraphDrained``; ``invoke(None, config)`` goes on from there. One per run."""

    __slots__ = ("_reason",)

    def __init__(self) -> None:
        self._reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        self._reason = reason  # one attribute write: safe from any thread without a lock

    @property
    def drain_requested(self) -> bool:
        return self._reason is not None

    @property
    def drain_reason(self) -> str | None:
        return self._reason


def _no_writer(_: Any) -> None:
    return None


def _no_heartbeat() -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class Runtime(Generic[C]):
    """What a node's ``runtime`` parameter gets (LangGraph's ``Runtime``): the run's ``context`` (what
    ``invoke(..., context=...)`` gave, coerced into the graph's ``context_schema``), its ``stream_writer``,
    ``heartbeat()`` (progress for an ``idle_timeout``), ``execution_info``, ``server_info`` and the run's
    ``control``. statehitl has no LangGraph store (``store`` is None) and no functional API (``previous``)."""

    context: C = field(default=None)  # type: ignore[assignment]
    store: Any = None
    stream_writer: Callable[[Any], None] = _no_writer
    heartbeat: Callable[[], None] = _no_heartbeat
    previous: Any = None
    execution_info: ExecutionInfo | None = None
    server_info: ServerInfo | None = None
    control: RunControl | None = None

    def merge(self, other: Runtime[C]) -> Runtime[C]:
        """This runtime with what ``other`` sets (its non-empty fields) laid over it."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=self.stream_writer if other.stream_writer is _no_writer else other.stream_writer,
            heartbeat=self.heartbeat if other.heartbeat is _no_heartbeat else other.heartbeat,
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Any) -> Runtime[C]:
        """A copy with the fields named replaced."""
        return replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime[C]:
        """A copy whose ``execution_info`` has the fields named replaced."""
        if self.execution_info is None:
            raise RuntimeError("Cannot patch execution_info before it has been set")
        return replace(self, execution_info=self.execution_info.patch(**overrides))

    @property
    def drain_requested(self) -> bool:
        return self.control is not None and self.control.drain_requested

    @property
    def drain_reason(self) -> str | None:
        return None if self.control is None else self.control.drain_reason


DEFAULT_RUNTIME: Runtime[Any] = Runtime()
"""A runtime with nothing set: what ``merge`` starts from."""

