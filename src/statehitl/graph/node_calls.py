"""How a StateGraph calls the functions users add as nodes, LangGraph's way and statehitl's.

A node function gets what its signature asks for: the state (as its schema's view, or the view of the
schema its first parameter is annotated with), a Send's argument instead when a Send made its task, and
by name ``config`` (LangGraph's RunnableConfig dict), ``writer`` (the custom stream), ``runtime`` or ``store``
(the graph's ``BaseStore``, ``compile(store=)``); a
second positional parameter with another name is statehitl's ``NodeContext``. While it runs, LangGraph's
free functions (``interrupt``, ``get_stream_writer``, ``get_config``) find it through a context variable,
which also reaches sync nodes run in worker threads. What a node streams goes to the stream it runs in
(``statehitl.stream_sink.current_scope``): its custom chunks and the messages of the chat models it calls; the
runner reports its tasks and updates, not the node's wrapper.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statehitl.control_flow import ParentCommand
from statehitl.errors import InterruptOutsideRunError
from statehitl.graph.caching import NodeCache
from statehitl.graph.code_cache import CodeCache
from statehitl.graph.node_guards import ErrorHandler, handled, heartbeat, timed, touch
from statehitl.graph.retries import Policies, retried, retried_async
from statehitl.graph.runtime_values import ExecutionInfo, RunControl, Runtime, ServerInfo
from statehitl.graph.state_kinds import StateKind
from statehitl.graph.task_paths import node_triggers_metadata, task_location
from statehitl.graph.traced_runs import ACTIVE
from statehitl.position import NodeContext
from statehitl.stream_sink import current_scope
from statehitl.timeout_policy import TimeoutPolicy

if TYPE_CHECKING:
    from statehitl.machine import Join
    from statehitl.store.base import BaseStore


StreamWriter = Callable[[Any], None]
"""What ``get_stream_writer()`` returns and a node's ``writer`` argument is: it sends one custom chunk."""

_BY_NAME = ("config", "writer", "runtime", "store")
"""Parameters a node gets by name, as in LangGraph."""


@dataclass
class RunScope:
    """What one run gives every node call besides the state: the config, the context, the store and the step
    count its managed values read (what it streams goes to the stream sink, ``current_scope``)."""

    config: dict[str, Any]
    context: Any = None
    """What the caller gave ``invoke(..., context=...)``: the run's ``Runtime.context`` (LangGraph 1's)."""
    control: RunControl | None = None
    """The run's drain switch (``invoke(..., control=)``), which ``Runtime.control`` hands to its nodes."""
    began: str = ""
    """The id of the checkpoint the run began from (``Runtime.execution_info.checkpoint_id``)."""
    store: BaseStore | None = None
    """The graph's long-term memory (``compile(store=)``), which its subgraphs' nodes share."""
    step_limit: int = 25
    """How many steps this invocation may take (``RemainingSteps`` counts down from it)."""
    first_step: int = 0
    """The step this invocation began at."""
    last_step: int | None = None
    """The step of the latest node call: the step whose conditional edges run next (None: none ran yet)."""
    namespace: tuple[str, ...] = ()
    """Where the run is: () for a thread's own graph, a subgraph's LangGraph namespace (``("node:<task id>",)``,
    ``("node",)`` for one that keeps its state); its nodes' configs carry it as ``checkpoint_ns``."""

    def remaining(self, step: int | None) -> int:
        """LangGraph's ``RemainingSteps`` for a node of ``step`` (a path at the start: one more than the first
        step's nodes see)."""
        return self.step_limit if step is None else self.step_limit - 1 - (step - self.first_step)


_RUN: ContextVar[RunScope | None] = ContextVar("statehitl_graph_run", default=None)
_CALL: ContextVar[NodeContext | None] = ContextVar("statehitl_graph_node_call", default=None)


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The running node's ``Runtime`` (``context_schema`` is only LangGraph's type hint)."""
    scope = _RUN.get()
    if scope is None:
        raise RuntimeError("get_runtime() can only be called inside a node of a running StateGraph")
    return node_runtime(scope, _CALL.get())


def node_runtime(scope: RunScope, ctx: NodeContext | None) -> Runtime[Any]:
    """The ``Runtime`` one node call gets: the run's context, writer and drain switch, where the call runs (its
    first attempt; ``_attempts`` numbers the others), and the server the config names, if any."""
    configurable = scope.config.get("configurable") or {}
    info = None
    if ctx is not None:
        info = ExecutionInfo(checkpoint_id=scope.began, checkpoint_ns=_own_namespace(ctx, scope.namespace),
                             task_id=task_key(ctx.step, ctx.node), thread_id=ctx.thread_id,
                             run_id=_text(scope.config.get("run_id")), node_attempt=1,
                             node_first_attempt_time=time.time())
    server = None
    if configurable.get("assistant_id") is not None or configurable.get("graph_id") is not None:
        server = ServerInfo(assistant_id=str(configurable.get("assistant_id", "")),
                            graph_id=str(configurable.get("graph_id", "")),
                            user=configurable.get("langgraph_auth_user"))
    return Runtime(context=scope.context, stream_writer=get_stream_writer(), heartbeat=heartbeat,
                   execution_info=info, server_info=server, control=scope.control, store=scope.store)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def get_store() -> BaseStore | None:
    """The graph's store (``compile(store=)``) for the node that calls it; None when the graph has none."""
    scope = _RUN.get()
    if scope is None:
        raise RuntimeError("get_store() can only be called inside a node of a running StateGraph")
    return scope.store


def nested_scope(labels: tuple[str, ...] = ()) -> RunScope:
    """The scope of a subgraph run inside the current run, at the current namespace and ``labels`` after it
    (LangGraph's ``("node:<task id>",)``, ``("node",)`` for a subgraph that keeps its state, a call's order
    after them for a node's later calls): the same config, context, store and step limit (its stream is the
    run's, at that namespace: ``subgraphs.streamed_as``)."""
    outer = _RUN.get()
    if outer is None:
        return RunScope({}, namespace=labels)
    return RunScope(outer.config, context=outer.context, store=outer.store, step_limit=outer.step_limit,
                    control=outer.control, began=outer.began, namespace=(*outer.namespace, *labels))


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


def interrupt(value: Any = None, *, response_schema: Any = None) -> Any:
    """Ask the human, LangGraph's way: returns the answer once the thread is resumed with one
    (``Command(resume=...)``), else stops the node. Several calls in one node are matched by their order,
    so a node that asked twice gets both answers back on the second resume; ``value`` must be JSON.
    ``response_schema``: a JSON schema (a dict) the interrupt carries for a form, or a type (a pydantic model,
    a TypedDict, a dataclass) whose schema it carries and which the answer is validated as and returned as.

    The same durable path as ``ctx.interrupt``: the answer is recorded once, audited and claimed.
    """
    ctx = _CALL.get()
    if ctx is None:
        raise InterruptOutsideRunError("interrupt() can only be called inside a node of a running StateGraph")
    ctx.asked += 1
    name = "interrupt" if ctx.asked == 1 else f"interrupt-{ctx.asked}"
    if response_schema is None or isinstance(response_schema, dict):
        return ctx.interrupt(name, reason=value, schema=response_schema)
    return ctx.interrupt(name, reason=value, response_type=response_schema)


def get_stream_writer() -> Callable[[Any], None]:
    """The writer of ``stream_mode="custom"`` chunks for the node that calls it (a no-op when not streaming):
    its chunks go to the stream the node runs in, also when it writes from another thread later. Each chunk is
    also progress for a ``TimeoutPolicy(idle_timeout=...)``."""
    stream = current_scope()
    write = _ignore if stream is None else stream.custom

    def write_chunk(chunk: Any) -> None:
        touch()
        write(chunk)

    return write_chunk


def get_config() -> dict[str, Any]:
    """The running node's config (``{"configurable": {"thread_id": ...}, ...}``), as LangGraph's."""
    scope = _RUN.get()
    if scope is None:
        raise RuntimeError("get_config() can only be called inside a node of a running StateGraph")
    ctx = _CALL.get()
    return scope.config if ctx is None else node_config(scope.config, ctx, None, scope.namespace)


def node_config(config: dict[str, Any], ctx: NodeContext, metadata: dict[str, Any] | None,
                namespace: tuple[str, ...] = ()) -> dict[str, Any]:
    """The run's config as one node call sees it, as LangGraph's: its ``metadata`` says which node and step,
    with what ``add_node(metadata=)`` gave the node, and its ``checkpoint_ns`` is the node call's own
    namespace (``node:<task id>``, after the namespace of the subgraph it runs in)."""
    name, own = ctx.node.partition(":")[0], _own_namespace(ctx, namespace)
    extra = {**(config.get("metadata") or {}), **(metadata or {}), "langgraph_node": name,
             "langgraph_step": ctx.step + 1, **task_location(name, ctx.node, sent=ctx.sent, metadata=metadata),
             "langgraph_checkpoint_ns": own}
    if namespace:
        extra["checkpoint_ns"] = "|".join(namespace)
    return {**config, "configurable": {**(config.get("configurable") or {}), "checkpoint_ns": own}, "metadata": extra}


def _own_namespace(ctx: NodeContext, namespace: tuple[str, ...]) -> str:
    """A node call's own namespace: ``node:<task id>``, after the namespace of the subgraph it runs in."""
    return "|".join((*namespace, f"{ctx.node.partition(':')[0]}:{task_key(ctx.step, ctx.node)}"))


def _traced(scope: RunScope | None) -> bool:
    """Whether the run is under LangChain callbacks: its config holds the run's child manager (``run_callbacks``)."""
    return bool(ACTIVE[0]) and scope is not None and scope.config.get("callbacks") is not None \
        and not isinstance(scope.config["callbacks"], list)


def _messages_watch(ctx: NodeContext, given: Any, metadata: dict[str, Any] | None,
                    kwargs: dict[str, Any] | None = None) -> Any:
    """What watches one node call (a context manager yielding the function its return value goes through): its
    chat models in a run streaming ``"messages"``, its own run in a run under LangChain callbacks
    (``node_runs``, which gives ``kwargs``' config its callbacks); None when nobody watches it."""
    stream = current_scope()
    scope = _RUN.get()
    if scope is not None and _traced(scope):
        from statehitl.graph.node_runs import traced_call

        config = node_config(scope.config, ctx, metadata, scope.namespace)
        return traced_call(scope.config["callbacks"], config, given, kwargs if kwargs is not None else {},
                           lambda own: None if stream is None else stream.watch_messages(own, given))
    if stream is None:
        return None
    if scope is None:
        return stream.watch_messages(node_config({}, ctx, metadata), given)
    return stream.watch_messages(node_config(scope.config, ctx, metadata, scope.namespace), given)


def _managed_now(kind: StateKind, step: int, scope: RunScope | None) -> dict[str, Any] | None:
    """The values of the state's managed keys for a node of ``step`` (and the step the paths after it see)."""
    if scope is None:
        return None
    scope.last_step = step
    return kind.managed_values(scope.remaining(step))


def task_key(step: int, task: str) -> str:
    """A task's id in snapshots and task events: the step it runs from, and its task (``node`` or ``node:i``)."""
    return f"{step}:{task}"


def task_input(handler: Callable[..., Any], state: Any, step: int) -> Any:
    """What the node run by ``handler`` in ``step`` is given of ``state`` (a task event's ``input``): its view
    of the state, managed values included, as ``node_handler`` and ``subgraph_handler`` mark it on their
    handlers; else the state itself."""
    shown: Callable[[Any, int], Any] | None = getattr(handler, "shown_input", None)
    return state if shown is None else shown(state, step)


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
    stars = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    named = tuple(p.name for p in params[1 if positional else 0:] if p.name in _BY_NAME and p.kind not in stars)
    # statehitl's NodeContext goes to a second positional parameter that needs a value (``fn(state, ctx)``);
    # one with a default (``lambda s, n=n: ...``) is the function's own. ``fn(*args)`` takes the state there.
    rest = [p for p in positional[1:] if p.name not in _BY_NAME and p.default is inspect.Parameter.empty]
    star = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    return _Signature(1 + len(rest[:1]) if positional else int(star), named, is_async)


_signature: CodeCache[_Signature] = CodeCache(_read_signature)


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine (an ``async def`` function, or an object whose ``__call__`` is)."""
    return _signature(fn).is_async


def node_handler(name: str, fn: Callable[..., Any], kind: StateKind, wants: Any = None, *,
                 metadata: dict[str, Any] | None = None, retry: Policies | None = None,
                 timeout: TimeoutPolicy | None = None, on_error: ErrorHandler | None = None,
                 cache: NodeCache | None = None, joins: Iterable[Join] = ()) -> Callable[..., Any]:
    """The handler the machine runs for ``fn``: always ``(state, ctx)``, sync or async like ``fn``.
    ``wants``: the schema the node reads the state through, when not the state's own; ``metadata``: what
    ``add_node(metadata=)`` gave, which the node's config carries (with LangGraph's ``langgraph_triggers``
    when the graph's waiting edges ``joins`` lead to the node); ``retry``: its retry policy; ``timeout``:
    each attempt's limits (an async ``fn`` only); ``on_error``: what runs instead once it failed for good;
    ``cache``: where its writes are cached (``add_node(cache_policy=)`` with ``compile(cache=)``)."""
    sig, metadata = _signature(fn), node_triggers_metadata(name, metadata, joins)
    if sig.positional == 0:  # a node that takes no state: called without it
        fn, sig = _stateless(fn, sig.is_async), _Signature(1, sig.named, sig.is_async)
    # the node reads the model itself, unless the run fills in some of its keys
    as_is = kind.kind == "pydantic" and kind.model is kind.schema and wants is None and not kind.managed
    target = timed(fn, timeout, name) if timeout is not None or sig.is_async else fn  # a Send may time an async one
    target = target if retry is None else _attempts(target, retry, sig.is_async)
    if on_error is not None:
        target = handled(target, on_error, node=name, is_async=sig.is_async, current=lambda _: _CALL.get(),
                         named=lambda param, ctx: _named(param, ctx, metadata))
    if cache is not None:
        target = cache.wrap(target, sig.is_async)

    two = sig.positional == 2
    named = sig.named
    managed = bool(kind.managed)

    def shown_input(state: Any, step: int) -> Any:
        scope = _RUN.get()
        values = kind.managed_values(scope.remaining(step)) if managed and scope is not None else None
        return state if as_is else kind.node_input(state, wants, values)

    def arguments(state: Any, ctx: NodeContext, scope: RunScope | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        values = _managed_now(kind, ctx.step, scope) if managed else None
        given = state if ctx.sent or as_is else kind.node_input(state, wants, values)
        args: tuple[Any, ...] = (given, ctx) if two else (given,)
        if not named:
            return args, {}
        scope = scope or RunScope({})
        kwargs = {param: node_config(scope.config, ctx, metadata, scope.namespace) if param == "config"
                  else get_stream_writer() if param == "writer"
                  else scope.store if param == "store"
                  else node_runtime(scope, ctx) for param in named}
        return args, kwargs

    if sig.is_async:

        async def run_async(state: Any, ctx: NodeContext) -> Any:
            token = _CALL.set(ctx)
            try:
                args, kwargs = arguments(state, ctx, _RUN.get())
                watch = _messages_watch(ctx, args[0], metadata, kwargs)
                if watch is None:
                    return await target(*args, **kwargs)
                with watch as done:
                    returned = await target(*args, **kwargs)
                    done(returned)
                return returned
            except ParentCommand as handed:  # a graph the node invoked sent this graph a Command: the node's
                return handed.command
            finally:
                _CALL.reset(token)

        run_async.__name__ = name
        run_async.shown_input = shown_input  # type: ignore[attr-defined]
        return run_async

    def run(state: Any, ctx: NodeContext) -> Any:
        token = _CALL.set(ctx)
        try:
            alone = not named and not two and not managed and current_scope() is None  # not streamed nor traced
            if alone and not (ACTIVE[0] and _traced(_RUN.get())):
                return target(state if ctx.sent or as_is else kind.node_input(state, wants))  # the call alone
            args, kwargs = arguments(state, ctx, _RUN.get())
            watch = _messages_watch(ctx, args[0], metadata, kwargs)
            if watch is None:
                return target(*args, **kwargs)
            with watch as done:
                returned = target(*args, **kwargs)
                done(returned)
            return returned
        except ParentCommand as handed:  # a graph the node invoked sent this graph a Command: the node's
            return handed.command
        finally:
            _CALL.reset(token)

    run.__name__ = name
    run.shown_input = shown_input  # type: ignore[attr-defined]
    return run


def guarded_node(handler: Callable[..., Any], on_error: ErrorHandler, name: str, kind: StateKind
                 ) -> Callable[..., Any]:
    """A machine handler ``(state, ctx)`` (a subgraph node's) that runs ``on_error`` once it failed for good."""
    return handled(handler, on_error, node=name, is_async=True, current=lambda args: args[1],
                   named=lambda param, ctx: _named(param, ctx, None), view=kind.node_input)


def _named(param: str, ctx: NodeContext | None, metadata: dict[str, Any] | None) -> Any:
    """What a node's ``config``, ``writer`` or ``runtime`` parameter gets in the call ``ctx`` (an error handler's
    too)."""
    scope = _RUN.get() or RunScope({})
    if param == "config":
        return scope.config if ctx is None else node_config(scope.config, ctx, metadata)
    if param == "writer":
        return get_stream_writer()
    return node_runtime(scope, ctx)


def _stateless(fn: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """``fn``, which takes no state, as a node function: the state it is given is left out of the call."""
    if is_async:

        async def without_state_async(state: Any, **named: Any) -> Any:
            return await fn(**named)

        return without_state_async

    def without_state(state: Any, **named: Any) -> Any:
        return fn(**named)

    return without_state


def _attempts(fn: Callable[..., Any], policies: Policies, is_async: bool) -> Callable[..., Any]:
    """``fn`` called again while ``policies`` say so; each attempt asks its interrupts afresh (their order
    and names restart), as a node that runs again does, and a ``runtime`` argument says which attempt it is."""

    def fresh(kwargs: dict[str, Any], attempt: list[float]) -> dict[str, Any]:
        ctx = _CALL.get()
        if ctx is not None:
            ctx.asked = ctx.invoked = 0
            ctx._scope, ctx.writes = None, None
        attempt[0] += 1
        runtime = kwargs.get("runtime")
        if isinstance(runtime, Runtime) and runtime.execution_info is not None:
            first = runtime.execution_info.node_first_attempt_time
            kwargs = {**kwargs, "runtime": runtime.patch_execution_info(node_attempt=int(attempt[0]),
                                                                         node_first_attempt_time=first)}
        return kwargs

    if is_async:

        async def attempt_async(*args: Any, **kwargs: Any) -> Any:
            attempt = [0.0]

            async def once() -> Any:
                return await fn(*args, **fresh(kwargs, attempt))

            return await retried_async(once, policies)

        return attempt_async

    def attempt(*args: Any, **kwargs: Any) -> Any:
        attempt = [0.0]

        def once() -> Any:
            return fn(*args, **fresh(kwargs, attempt))

        return retried(once, policies)

    return attempt


def route_handler(path: Callable[..., Any], kind: StateKind, wants: Any = None) -> Callable[[Any], Any]:
    """A conditional edge's path function as the machine calls it: on the state's view (``wants``: the view of
    the schema its first parameter is annotated with, when not the state's; the state's view has its managed keys
values), with ``config`` when it asks."""
    sig = _signature(path)
    if kind.kind == "pydantic" and kind.model is kind.schema and not sig.named and wants is None \
            and not kind.managed:
        return path  # a native router reads the model itself: nothing to adapt

    def route(state: Any) -> Any:
        scope = _RUN.get()
        managed = kind.managed_values(scope.remaining(scope.last_step)) if kind.managed and scope else None
        given = kind.node_input(state, wants, managed)
        if "config" in sig.named:
            scope = _RUN.get()
            return path(given, config=scope.config if scope is not None else {})
        return path(given)

    return route
