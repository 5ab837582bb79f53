"""LangGraph's graph lifecycle callbacks (``langgraph.callbacks``): a ``GraphCallbackHandler`` in a call's
``config["callbacks"]`` is told when a run stops on interrupts (``on_interrupt``) and when a run resumes a thread
that has a checkpoint (``on_resume``), as LangGraph tells it.

The handler is a LangChain callback handler (LangChain's other handlers in the same list see the graph's run as
a chain run and see none of these events), so this module needs langchain-core (the ``langchain`` extra).
A handler that raises is logged and the run goes on, unless the handler sets ``raise_error``, LangChain's rule
for every callback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias
from uuid import UUID

try:
    import langchain_core  # noqa: F401
except ImportError as missing:  # say what to install, not only what is missing
    from statehitl.graph.message_forms import needs_langchain

    raise ImportError(needs_langchain("statehitl.callbacks")) from missing

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.callbacks.manager import ahandle_event, handle_event

from statehitl.interrupt import Interrupt

__all__ = ["AsyncGraphCallbackManager", "GraphCallbackHandler", "GraphCallbackManager", "GraphInterruptEvent",
           "GraphLifecycleEvent", "GraphLifecycleStatus", "GraphResumeEvent",
           "get_async_graph_callback_manager_for_config", "get_sync_graph_callback_manager_for_config",
           "graph_handlers"]

GraphLifecycleStatus: TypeAlias = Literal["input", "pending", "done", "interrupt_before", "interrupt_after",
                                          "out_of_steps"]
"""Where the run was when the event came: ``pending`` (an ``interrupt()`` in a node, or a resume), or stopped
at a breakpoint (``interrupt_before``/``interrupt_after``); LangGraph's other statuses are named for its types."""


@dataclass(frozen=True)
class GraphInterruptEvent:
    """A run stopped on interrupts (none for a breakpoint): which run, at which checkpoint of which graph."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    """The checkpoint the run stopped at, as ``get_state`` names it."""
    checkpoint_ns: tuple[str, ...]
    """The graph's namespace: ``()`` for the graph that was called."""
    interrupts: tuple[Interrupt, ...]


@dataclass(frozen=True)
class GraphResumeEvent:
    """A run went on from a thread's checkpoint (input None or a ``Command``): which run, from which checkpoint."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent


class GraphCallbackHandler(BaseCallbackHandler):
    """Subclass and override ``on_interrupt``/``on_resume`` (sync or ``async def``); pass an instance in
    ``config["callbacks"]`` (a list, a handler, or a LangChain callback manager holding it)."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run stopped on ``event.interrupts`` (or at a breakpoint): its checkpoint waits for an answer."""
        return None

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run goes on from ``event.checkpoint_id``."""
        return None


def graph_handlers(callbacks: object) -> list[GraphCallbackHandler]:
    """The ``GraphCallbackHandler``s among a config's ``callbacks`` (LangChain's other handlers get no lifecycle
    events); a value that is no handler, list of handlers or manager is refused, as LangGraph refuses it."""
    if callbacks is None:
        return []
    if isinstance(callbacks, BaseCallbackManager):
        found: list[Any] = list(callbacks.handlers)
    elif isinstance(callbacks, BaseCallbackHandler):
        found = [callbacks]
    elif isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, Sequence):
        raise TypeError(f"callbacks must be a handler, sequence, or manager, got {callbacks!r}")
    else:
        found = list(callbacks)
    return [handler for handler in found if isinstance(handler, GraphCallbackHandler)]


class GraphCallbackManager(BaseCallbackManager):
    """Hands lifecycle events to its graph handlers, in the caller's thread (a coroutine handler is run to its end
    there, as LangChain's sync managers run one)."""

    def __init__(self, handlers: Sequence[GraphCallbackHandler] = (), *, run_id: UUID | None = None) -> None:
        super().__init__(list(handlers), list(handlers))
        self.run_id = run_id

    @classmethod
    def configure(cls, callbacks: object = None, *, run_id: UUID | None = None) -> GraphCallbackManager:
        return cls(graph_handlers(callbacks), run_id=run_id)

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        handle_event(self.handlers, "on_interrupt", None, event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        handle_event(self.handlers, "on_resume", None, event)


class AsyncGraphCallbackManager(BaseCallbackManager):
    """Hands lifecycle events to its graph handlers from a coroutine: ``async def`` handlers are awaited, others
    run inline when they set ``run_inline``, else on an executor (LangChain's async rule)."""

    def __init__(self, handlers: Sequence[GraphCallbackHandler] = (), *, run_id: UUID | None = None) -> None:
        super().__init__(list(handlers), list(handlers))
        self.run_id = run_id

    @property
    def is_async(self) -> bool:
        return True

    @classmethod
    def configure(cls, callbacks: object = None, *, run_id: UUID | None = None) -> AsyncGraphCallbackManager:
        return cls(graph_handlers(callbacks), run_id=run_id)

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        await ahandle_event(self.handlers, "on_interrupt", None, event)

    async def on_resume(self, event: GraphResumeEvent) -> None:
        await ahandle_event(self.handlers, "on_resume", None, event)


def get_sync_graph_callback_manager_for_config(config: dict[str, Any], *, run_id: UUID | None = None
                                               ) -> GraphCallbackManager:
    """The graph handlers of ``config["callbacks"]``, for events of run ``run_id`` told from sync code."""
    return GraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)


def get_async_graph_callback_manager_for_config(config: dict[str, Any], *, run_id: UUID | None = None
                                                ) -> AsyncGraphCallbackManager:
    """The graph handlers of ``config["callbacks"]``, for events of run ``run_id`` told from a coroutine."""
    return AsyncGraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)
