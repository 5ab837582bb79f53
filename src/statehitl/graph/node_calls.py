"""How a StateGraph calls the functions users add as nodes, LangGraph's way and statehitl's.

A node function gets what its signature asks for: the state (as its schema's view, or the view of the
schema its first parameter is annotated with), a Send's argument instead when a Send made its task, and
by name ``config`` (LangGraph's RunnableConfig dict), ``writer`` (the custom stream), ``runtime`` or ``store``
(the graph's ``BaseStore``, ``compile(store=)``); a
second positional parameter with another name is statehitl's ``NodeContext``. While it runs, LangGraph's
free functions (``interrupt``, ``get_stream_writer``, ``get_config``) find it through a context variable,
which also reaches sync nodes run in worker threads.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from statehitl.errors import InterruptOutsideRunError
from statehitl.graph.caching import CachedWrites, NodeCache
from statehitl.graph.code_cache import CodeCache
from statehitl.graph.retries import Policies, retried, retried_async
from statehitl.graph.state_kinds import StateKind
from statehitl.interrupt import InterruptRaised
from statehitl.position import NodeContext

if TYPE_CHECKING:
    from statehitl.graph.message_stream import MessageStream
    from statehitl.store.base import BaseStore

__all__ = [
    "RunScope",
    "Runtime",
    "StreamWriter",
    "current_node",
    "current_run",
    "enter_node",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "interrupt",
    "leave_node",
    "nested_scope",
    "node_handler",
    "report_update",
    "reset_run",
    "route_handler",
    "set_run",
]

StreamWriter = Callable[[Any], None]
"""What ``get_stream_writer()`` returns and a node's ``writer`` argument is: it sends one custom chunk."""

_BY_NAME = ("config", "writer", "runtime", "store")
"""Parameters a node gets by name, as in LangGraph."""


@dataclass
class RunScope:
    """What one run gives every node call besides the state: the config, and where custom chunks go."""

    config: dict[str, Any]
    write: Callable[[Any], None] | None = None
    updated: Callable[[str, Any], None] | None = None
    """Called with each node's return value as it finishes (``stream_mode="updates"``), when streaming."""
    tasks: Callable[[str, int, dict[str, Any]], None] | None = None
    """Called with ``("task", step, payload)`` as a node starts and ``("task_result", step, payload)`` as it
    ends (``stream_mode="tasks"``/``"debug"``), when streaming them."""
    context: Any = None
    """What the caller gave ``invoke(..., context=...)``: the run's ``Runtime.context`` (LangGraph 1's)."""
    namespace: tuple[str, ...] = ()
    """Where this run is: ``()`` for the graph invoked, ``("node:step", ...)`` for a subgraph inside it."""
    sink: Callable[[tuple[str, ...], str, Any], None] | None = None
    """Where subgraphs send their chunks, ``sink(namespace, mode, chunk)``: set by ``stream(subgraphs=True)``."""
    store: BaseStore | None = None
    """The graph's long-term memory (``compile(store=)``), which its subgraphs' nodes share."""
    messages: MessageStream | None = None
    """Where the messages of chat models called in nodes go (``stream_mode="messages"``), when streamed."""
    step_limit: int = 25
    """How many steps this invocation may take (``RemainingSteps`` counts down from it)."""
    first_step: int = 0
    """The step this invocation began at."""
    last_step: int | None = None
    """The step of the latest node call: the step whose conditional edges run next (None: none ran yet)."""

    def remaining(self, step: int | None) -> int:
        """LangGraph's ``RemainingSteps`` for a node of ``step`` (a path at the start: one more than the first
        step's nodes see)."""
        return self.step_limit if step is None else self.step_limit - 1 - (step - self.first_step)


_RUN: ContextVar[RunScope | None] = ContextVar("statehitl_graph_run", default=None)
_CALL: ContextVar[NodeContext | None] = ContextVar("statehitl_graph_node_call", default=None)

C = TypeVar("C")


@dataclass(frozen=True)
class Runtime(Generic[C]):
    """LangGraph's ``Runtime``, what a node's ``runtime`` parameter gets: the run's ``context`` (what
    ``invoke(..., context=...)`` gave), its ``stream_writer`` and the graph's ``store`` (None without one)."""

    context: C | None = None
    stream_writer: Callable[[Any], None] = field(default=lambda _: None)
    store: BaseStore | None = None
    previous: Any = None


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The running node's ``Runtime`` (``context_schema`` is only LangGraph's type hint)."""
    scope = _RUN.get()
    if scope is None:
        raise RuntimeError("get_runtime() can only be called inside a node of a running StateGraph")
    return Runtime(scope.context, scope.write or _ignore, scope.store)


def get_store() -> BaseStore | None:
    """The graph's store (``compile(store=)``) for the node that calls it; None when the graph has none."""
    scope = _RUN.get()
    if scope is None:
        raise RuntimeError("get_store() can only be called inside a node of a running StateGraph")
    return scope.store


def nested_scope(label: str, shown: Callable[[str, Any], Any]) -> RunScope:
    """The scope of a subgraph run labelled ``label`` inside the current run: the same config and custom
    stream; its nodes' updates, ``shown(node, returned)``, go to ``stream(subgraphs=True)`` under its
    namespace, and never as the parent's own."""
    outer = _RUN.get()
    if outer is None:
        return RunScope({})
    if outer.sink is None:
        return RunScope(outer.config, outer.write, context=outer.context, store=outer.store,
                        step_limit=outer.step_limit)
    namespace, sink = (*outer.namespace, label), outer.sink
    return RunScope(outer.config, lambda chunk: sink(namespace, "custom", chunk),
                    lambda node, returned: sink(namespace, "updates", {node: shown(node, returned)}),
                    context=outer.context, namespace=namespace, sink=sink, store=outer.store, messages=outer.messages,
                    step_limit=outer.step_limit)


def set_run(scope: RunScope) -> Any:
    """Make ``scope`` the current run's (returns the token to reset it with)."""
    return _RUN.set(scope)


def reset_run(token: Any) -> None:
    _RUN.reset(token)


def current_run() -> RunScope | None:
    """The scope of the run the caller is in, if any."""
    return _RUN.get()


def enter_node(ctx: NodeContext) -> Any:
    """Run the caller's code as node call ``ctx`` (a functional-API task runs as its own call inside its
    entrypoint's node, with interrupts of its own); returns the token to leave it with."""
    return _CALL.set(ctx)


def leave_node(token: Any) -> None:
    _CALL.reset(token)


def current_node() -> NodeContext | None:
    """The node call the caller runs in, if any (a graph invoked there runs as its subgraph)."""
    return _CALL.get()


def interrupt(value: Any = None) -> Any:
    """Ask the human, LangGraph's way: returns the answer once the thread is resumed with one
    (``Command(resume=...)``), else stops the node. Several calls in one node are matched by their order,
    so a node that asked twice gets both answers back on the second resume; ``value`` must be JSON.

    The same durable path as ``ctx.interrupt``: the answer is recorded once, audited and claimed.
    """
    ctx = _CALL.get()
    if ctx is None:
        raise InterruptOutsideRunError("interrupt() can only be called inside a node of a running StateGraph")
    ctx.asked += 1
    return ctx.interrupt("interrupt" if ctx.asked == 1 else f"interrupt-{ctx.asked}", reason=value)


def get_stream_writer() -> Callable[[Any], None]:
    """The writer of ``stream_mode="custom"`` chunks for the node that calls it (a no-op when not streaming)."""
    scope = _RUN.get()
    if scope is None or scope.write is None:
        return _ignore
    return scope.write


def get_config() -> dict[str, Any]:
    """The running node's config (``{"configurable": {"thread_id": ...}, ...}``), as LangGraph's."""
    scope = _RUN.get()
    if scope is None:
        raise RuntimeError("get_config() can only be called inside a node of a running StateGraph")
    ctx = _CALL.get()
    return scope.config if ctx is None else node_config(scope.config, ctx, None)


def node_config(config: dict[str, Any], ctx: NodeContext, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The run's config as one node call sees it: its ``metadata`` says which node and step, as LangGraph's
    does, with what ``add_node(metadata=)`` gave the node."""
    extra = {**(config.get("metadata") or {}), **(metadata or {}), "langgraph_node": ctx.node.partition(":")[0],
             "langgraph_step": ctx.step + 1}
    return {**config, "metadata": extra}


def report_update(node: str, returned: Any) -> Any:
    """Hand what ``node`` returned to a ``stream_mode="updates"`` reader, as soon as the node finished."""
    scope = _RUN.get()
    if scope is not None and scope.updated is not None:
        scope.updated(node, returned)
    return returned


@contextlib.contextmanager
def _reported_task(report: Callable[[str, int, dict[str, Any]], None], name: str, ctx: NodeContext,
                   given: Any) -> Iterator[list[Any]]:
    """LangGraph's task events around one node call: what it was given, then what it returned (its
    ``result``, to be appended to the yielded list), the interrupts it stopped on, or its error."""
    task_id = task_key(ctx.step, ctx.node)
    report("task", ctx.step + 1, {"id": task_id, "name": name, "input": given,
                                  "triggers": ("__pregel_push",) if ctx.sent else (f"branch:to:{name}",)})
    result: list[Any] = []
    outcome: dict[str, Any] = {"id": task_id, "name": name, "error": None, "result": None, "interrupts": []}
    try:
        yield result
    except InterruptRaised as stop:
        outcome["result"] = {}
        outcome["interrupts"] = [{"value": i.reason, "id": i.id, "response_schema": i.response_schema}
                                 for i in stop.interrupts]
        raise
    except Exception as exc:
        outcome["error"] = repr(exc)
        raise
    else:
        outcome["result"] = result[0] if result[0] is not None else {}
    finally:
        if not (result and isinstance(result[0], CachedWrites)):  # LangGraph reports no result for a cache hit
            report("task_result", ctx.step + 1, outcome)


@contextlib.contextmanager
def _watched(scope: RunScope, name: str, ctx: NodeContext, given: Any, metadata: dict[str, Any] | None
             ) -> Iterator[Callable[[Any], Any]]:
    """What watches one node call of a streamed run: its task events (``"tasks"``/``"debug"``) and the messages
    its chat models stream and it returns (``"messages"``). Yields the function its return value goes through."""
    with contextlib.ExitStack() as watching:
        results = None if scope.tasks is None else watching.enter_context(
            _reported_task(scope.tasks, name, ctx, given))
        messages = None if scope.messages is None else watching.enter_context(
            scope.messages.node(node_config(scope.config, ctx, metadata), given, scope.namespace))

        def done(returned: Any) -> Any:
            if messages is not None:
                messages(returned)
            if results is not None:
                results.append(returned)
            return returned

        yield done


def _managed_now(kind: StateKind, step: int, scope: RunScope | None) -> dict[str, Any] | None:
    """The values of the state's managed keys for a node of ``step`` (and the step the paths after it see)."""
    if scope is None:
        return None
    scope.last_step = step
    return kind.managed_values(scope.remaining(step))


def task_key(step: int, task: str) -> str:
    """A task's id in snapshots and task events: the step it runs from, and its task (``node`` or ``node:i``)."""
    return f"{step}:{task}"


def _ignore(_: Any) -> None:
    return None


@dataclass(frozen=True)
class _Signature:
    """How a function is called: with the state and, when ``positional`` is 2, the ``NodeContext``; and the
    parameters it takes by name (``config``, ``writer``, ...); whether it is a coroutine function."""

    positional: int
    named: tuple[str, ...]
    is_async: bool


def _read_signature(fn: Callable[..., Any]) -> _Signature:
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return _Signature(1, (), is_async)
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p for p in params if p.kind in kinds]
    named = tuple(p.name for p in params[1:] if p.name in _BY_NAME and p.kind is not inspect.Parameter.VAR_KEYWORD)
    # statehitl's NodeContext goes to a second positional parameter that needs a value (``fn(state, ctx)``);
    # one with a default (``lambda s, n=n: ...``) is the function's own
    rest = [p for p in positional[1:] if p.name not in _BY_NAME and p.default is inspect.Parameter.empty]
    return _Signature(1 + len(rest[:1]) if positional else 0, named, is_async)


_signature: CodeCache[_Signature] = CodeCache(_read_signature)


def node_handler(name: str, fn: Callable[..., Any], kind: StateKind, wants: Any = None,
                 metadata: dict[str, Any] | None = None, retry: Policies | None = None, *,
                 cache: NodeCache | None = None) -> Callable[..., Any]:
    """The handler the machine runs for ``fn``: always ``(state, ctx)``, sync or async like ``fn``.
    ``wants``: the schema the node reads the state through, when not the state's own; ``metadata``: what
    ``add_node(metadata=)`` gave, which the node's config carries; ``retry``: its retry policy; ``cache``: where
    its writes are cached (``add_node(cache_policy=)`` with ``compile(cache=)``)."""
    sig = _signature(fn)
    if sig.positional == 0:
        raise TypeError(f"node {name!r}: {fn!r} takes no argument; a node takes the state")
    # the node reads the model itself, unless the run fills in some of its keys
    as_is = kind.kind == "pydantic" and kind.model is kind.schema and wants is None and not kind.managed
    target = fn if retry is None else _attempts(fn, retry, sig.is_async)
    if cache is not None:
        target = cache.wrap(target, sig.is_async)

    two = sig.positional == 2
    named = sig.named
    managed = bool(kind.managed)

    def arguments(state: Any, ctx: NodeContext, scope: RunScope | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        values = _managed_now(kind, ctx.step, scope) if managed else None
        given = state if ctx.sent or as_is else kind.node_input(state, wants, values)
        args: tuple[Any, ...] = (given, ctx) if two else (given,)
        if not named:
            return args, {}
        scope = scope or RunScope({})
        kwargs = {param: node_config(scope.config, ctx, metadata) if param == "config"
                  else (scope.write or _ignore) if param == "writer"
                  else scope.store if param == "store"
                  else Runtime(scope.context, scope.write or _ignore, scope.store) for param in named}
        return args, kwargs

    if sig.is_async:

        async def run_async(state: Any, ctx: NodeContext) -> Any:
            token = _CALL.set(ctx)
            try:
                scope = _RUN.get()
                args, kwargs = arguments(state, ctx, scope)
                if scope is None:
                    return await target(*args, **kwargs)
                if scope.tasks is None and scope.messages is None:
                    returned = await target(*args, **kwargs)
                else:
                    with _watched(scope, name, ctx, args[0], metadata) as done:
                        returned = done(await target(*args, **kwargs))
                if scope.updated is not None:
                    scope.updated(name, returned)
                return returned
            finally:
                _CALL.reset(token)

        run_async.__name__ = name
        return run_async

    def run(state: Any, ctx: NodeContext) -> Any:
        token = _CALL.set(ctx)
        try:
            scope = _RUN.get()
            if scope is None or (scope.tasks is None and scope.updated is None and scope.messages is None):
                if not named and not two and not managed:  # not streamed: the call alone
                    return target(state if ctx.sent or as_is else kind.node_input(state, wants))
                args, kwargs = arguments(state, ctx, scope)
                return target(*args, **kwargs)
            args, kwargs = arguments(state, ctx, scope)
            if scope.tasks is None and scope.messages is None:
                returned = target(*args, **kwargs)
            else:
                with _watched(scope, name, ctx, args[0], metadata) as done:
                    returned = done(target(*args, **kwargs))
            if scope.updated is not None:
                scope.updated(name, returned)
            return returned
        finally:
            _CALL.reset(token)

    run.__name__ = name
    return run


def _attempts(fn: Callable[..., Any], policies: Policies, is_async: bool) -> Callable[..., Any]:
    """``fn`` called again while ``policies`` say so; each attempt asks its interrupts afresh (their order
    and names restart), as a node that runs again does."""

    def fresh() -> None:
        ctx = _CALL.get()
        if ctx is not None:
            ctx.asked = ctx.invoked = 0
            ctx._scope = None

    if is_async:

        async def attempt_async(*args: Any, **kwargs: Any) -> Any:
            async def once() -> Any:
                fresh()
                return await fn(*args, **kwargs)

            return await retried_async(once, policies)

        return attempt_async

    def attempt(*args: Any, **kwargs: Any) -> Any:
        def once() -> Any:
            fresh()
            return fn(*args, **kwargs)

        return retried(once, policies)

    return attempt


def route_handler(path: Callable[..., Any], kind: StateKind) -> Callable[[Any], Any]:
    """A conditional edge's path function as the machine calls it: on the state's view, with ``config`` when
    it asks for it."""
    sig = _signature(path)
    if kind.kind == "pydantic" and kind.model is kind.schema and not sig.named and not kind.managed:
        return path  # a native router reads the model itself: nothing to adapt

    def route(state: Any) -> Any:
        scope = _RUN.get()
        managed = kind.managed_values(scope.remaining(scope.last_step)) if kind.managed and scope else None
        given = kind.node_input(state, None, managed)
        if "config" in sig.named:
            scope = _RUN.get()
            return path(given, config=scope.config if scope is not None else {})
        return path(given)

    return route
