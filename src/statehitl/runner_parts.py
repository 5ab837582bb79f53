"""The runner's contracts and the small types of one step, apart from the step loop (``runner``).

``StateAdapter`` is how a machine's state is reduced and stored; ``NodeRules`` what an owner (a Graph,
a Swarm) decides about its nodes besides running them. The outcomes, run settings and the two errors
that carry a failure out of a concurrent step are the runner's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from statehitl.checkpoint.chain import Cursor, StateCodec
from statehitl.checkpoint.record_parts import FailureRecord
from statehitl.checkpoint.records import RecordStatus, StoredCheckpoint
from statehitl.errors import StorageError
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine, NodeSpec
from statehitl.offload import may_run_inline, sync_pool
from statehitl.position import Position, Writes
from statehitl.telemetry import RunTracer

LOOP_SHARED: ContextVar[bool] = ContextVar("statehitl_loop_shared", default=False)
"""Whether the running code shares the event loop with work that must not wait for it: a sibling task of a
step, or a streamed run's reader. A sync node then runs in a worker thread even when it runs alone in its
step (a subgraph's lone node beside the subgraph's siblings), so it never holds up what the loop serves."""

UNSEEN_THREADS: ContextVar[bool | None] = ContextVar("statehitl_unseen_threads", default=None)
"""Whether a cancelled sync node's worker thread may be left to finish on its own, as LangGraph leaves it: only
in a graph run no checkpointer keeps, within no run one keeps (None: outside any graph run), since nothing can
continue such a run and run the node again beside it. Any other run waits for the thread's end (``in_thread``)."""


@contextlib.contextmanager
def unseen_threads(kept: bool) -> Iterator[None]:
    """Within a graph run: its sync nodes' threads may be left behind when cancelled unless the run, or a run
    it is part of, is ``kept`` by a checkpointer."""
    outer = UNSEEN_THREADS.get()
    token = UNSEEN_THREADS.set(not kept and outer is not False)
    try:
        yield
    finally:
        UNSEEN_THREADS.reset(token)


class StateAdapter(StateCodec, Protocol):
    """How a machine's state is reduced and stored; the runner treats the state as opaque.

    An adapter may also have ``halted(state) -> bool``: a state it says is halted ends the run after
    the step that made it so, whatever the transitions say (an orchestrator that hit a limit).
    """

    def apply(self, state: Any, writes: Writes) -> Any: ...
    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]: ...
    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]: ...
    def load_update(self, node: str, stored: dict[str, Any]) -> dict[str, Any]: ...


class NodeRules(Protocol):
    """What the owner of a machine decides about its nodes besides running them: Strands' Graph and
    Swarm check their limits before any ``BeforeNodeCallEvent`` hook is asked about a node (so no human
    is asked to approve a node a limit then refuses), record a cancelled node as a result of its own,
    and a Swarm ends FAILED when such a hook raises. ``runtime`` is the run's (``NodeContext.runtime``).

    - ``admit(state, pending, runtime)``: before a step whose nodes have not begun (a fresh step, or a
      resumed one with no work kept), None lets it run; an update ends the run there, failed, with
      that update applied.
    - ``cancelled(node, message, runtime)``: a hook cancelled ``node``; the update to apply for it with
      the step's others. ``AfterNodeCallEvent`` then fires for the node, as Strands' orchestrators fire it.
    - ``hook_failed(node, error, runtime)``: a ``BeforeNodeCallEvent`` hook raised; None lets the error
      fail the step, an update is the node's outcome instead (the run goes on by the machine's rules).
    """

    def admit(self, state: Any, pending: list[str], runtime: Any) -> dict[str, Any] | None: ...
    def cancelled(self, node: str, message: str, runtime: Any) -> dict[str, Any]: ...
    def hook_failed(self, node: str, error: Exception, runtime: Any) -> dict[str, Any] | None: ...


@dataclass(slots=True)
class Done:
    """The node finished with ``update``."""

    update: dict[str, Any]


@dataclass(slots=True)
class Cancelled:
    """A hook cancelled the node (``message`` says why); ``update`` is what the owner's rules record for it."""

    message: str
    update: dict[str, Any]


@dataclass(slots=True)
class Stopped:
    """The node (or a hook before it) stopped on ``interrupts``; ``progress`` is the work it kept."""

    interrupts: list[Interrupt]
    progress: Any = None


NodeOutcome = Done | Cancelled | Stopped
"""How one node call of a step ended."""


@dataclass(frozen=True)
class Pauses:
    """LangGraph's ``interrupt_before``/``interrupt_after``: nodes a run stops before or after, leaving the
    thread to be continued by ``invoke(None, ...)``. ``resumed``: this run continues from such a stop, so
    its first step is not stopped before again. ``drained()``: a drain was asked for (LangGraph's
    ``RunControl``), so the run stops before its next step whatever it is."""

    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    resumed: bool = False
    drained: Callable[[], bool] | None = None

    def stops_before(self, machine: Machine, pending: list[str]) -> bool:
        if self.drained is not None and self.drained():
            return True
        return bool(self.before) and any(machine.task_node(t) in self.before for t in pending)

    def stops_after(self, machine: Machine, ran: list[str]) -> bool:
        return bool(self.after) and any(machine.task_node(t) in self.after for t in ran)


class StepWatch(Protocol):
    """What a streamed run shows as it goes (a StateGraph's ``stream``), told by the runner as it happens: a
    step's tasks as it begins (``at``: where it begins, with the work it kept), each task's end, each step's
    result once applied, and each checkpoint as it is written. ``step`` is the step a task runs in."""

    def step_started(self, at: Position, runnable: list[str]) -> None: ...
    def task_done(self, task: str, step: int, returned: Any) -> None: ...
    def task_stopped(self, task: str, step: int, interrupts: list[Interrupt]) -> None: ...
    def task_failed(self, task: str, step: int, error: BaseException) -> None: ...
    async def step_applied(self, state: Any, writes: Writes, pending: list[str]) -> None: ...
    def committed(self, record: StoredCheckpoint, state: Any) -> None: ...


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What one run's nodes see besides the state: the same for every step of the run. ``watch``: who sees
    the run as it goes (a streamed run)."""

    thread_id: str
    invocation_state: dict[str, Any]
    runtime: Any
    prefix: str
    tracer: RunTracer | None
    pauses: Pauses | None = None
    watch: StepWatch | None = None
    limit: asyncio.Semaphore | None = None
    """At most this many of a step's nodes run at once (LangGraph's ``max_concurrency``), None: no limit."""
    step_timeout: float | None = None
    """Seconds a step may take (LangGraph's ``step_timeout``), None: no limit."""


SENT_TIMEOUT: ContextVar[dict[str, Any] | None] = ContextVar("statehitl_sent_timeout", default=None)
"""The limits a ``Send`` gave the task being called (``Send(timeout=)``, as stored), which its node's attempts
take over its own (``graph.node_guards.timed``); None: the node's own."""


class FinishedWhileCancelled(asyncio.CancelledError):
    """A sync node's call was cancelled, but a worker thread cannot be stopped: the call waited for the
    thread's end and is cancelled now, with what the node did (``future``: its return value or error), so
    its finished work is kept rather than run again."""

    def __init__(self, future: asyncio.Future[Any]) -> None:
        super().__init__()
        self.future = future


async def call_handler(spec: NodeSpec, args: tuple[Any, ...], inline: bool) -> Any:
    """Call a node's handler: awaited if async, else inline when it runs alone (unless the context keeps sync
    work off the loop, ``offload``), else in a worker thread."""
    if spec.is_async:
        return await spec.handler(*args)
    if may_run_inline(inline):
        return spec.handler(*args)
    return await in_thread(spec.handler, args)


async def in_thread(handler: Any, args: tuple[Any, ...]) -> Any:
    """``handler(*args)`` in a worker thread, in the caller's context. Cancelling the call cannot stop the
    thread, so it waits for the thread's end before it is cancelled (``FinishedWhileCancelled``): a node
    is never left running unseen while its run is recorded as stopped. In a run nothing can continue
    (``UNSEEN_THREADS``) the cancellation is the caller's at once, the thread left to end on its own."""
    call = functools.partial(contextvars.copy_context().run, handler, *args)
    future = asyncio.get_running_loop().run_in_executor(sync_pool(), call)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if UNSEEN_THREADS.get():
            raise
        while not future.done():  # cancelled again meanwhile: the thread still has to end first
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(future)
        raise FinishedWhileCancelled(future) from None


def say_acted(error: BaseException, cursor: Cursor, *, acted: bool) -> None:
    """Make a store's error that ended a run acting on answers (``acted``: its handlers were given them, and
    its claim recorded them) say so: a store's own message tells of the write it failed ("nothing was
    recorded as done"), but the action may have run, and the thread waits on a human's go-ahead before
    it runs again. Any other error is left as it is."""
    if not (acted and cursor.acting is not None and isinstance(error, StorageError)):
        return
    thread_id = cursor.thread_id
    error.args = (f"{error}; but this run had acted on the thread's answers before the write failed: the action "
                  f"may have run, so thread {thread_id!r} now waits for a human to check it by its idempotency key "
                  f"and allow a retry (statehitl threads retry {thread_id}); answering again or continuing will say "
                  "its outcome is unknown until then",)


def record_source(status: RecordStatus, fields: dict[str, Any]) -> str:
    """Why the checkpoint was written, as its record says."""
    if status == "interrupted":
        return "interrupt"
    if status == "failed":
        return "cancel" if fields.get("cancelled") else "error"
    return "step"


class NodeFailed(Exception):
    """A node's handler (or its hooks) raised ``error``: carries which node, out of the concurrent step, and
    (in a superstep) the updates of the nodes that finished beside it, kept for the step's retry."""

    def __init__(self, node: str, error: Exception, finished: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(node)
        self.node = node
        self.error = error
        self.finished = finished or {}


_KEPT = "__statehitl_progress__"


def keep_progress(error: BaseException, progress: Any) -> BaseException:
    """Mark ``error``, which a node raises, with the JSON work the node finished before it (a workflow's
    finished tasks): the failed step's checkpoint keeps it as the node's progress, so its retry does not
    do that work again (LangGraph's rule for a failed step's finished tasks). Returns ``error``."""
    setattr(error, _KEPT, progress)
    return error


def kept_progress(error: BaseException) -> Any:
    """What ``keep_progress`` marked ``error`` with, or None."""
    return getattr(error, _KEPT, None)


class StepFailed(Exception):
    """A step failed with ``error`` at ``nodes`` (the node that raised, or every node of the step when it
    failed outside them); ``position`` is where it started, to retry from."""

    def __init__(self, nodes: list[str], error: Exception, position: Position) -> None:
        super().__init__(", ".join(nodes))
        self.nodes = nodes
        self.error = error
        self.position = position

    def record(self) -> FailureRecord:
        return FailureRecord(nodes=self.nodes, type=type(self.error).__name__, message=str(self.error))
