"""LangGraph's ``@entrypoint``: a workflow that is a one-node StateGraph on statehitl's runner.

The entrypoint's function is the node; its tasks run inside it (``statehitl.func.tasks``). The thread's
state has three channels: ``input`` (what the run was given), ``output`` (what the function returned, the
workflow's value as LangGraph shows it) and ``saved`` (what the next run of the thread gets as
``previous``). So a workflow has every promise a graph has: the resume claims the thread before the
function runs again, one binding answer per interrupt, the audit, the stores.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, cast

from statehitl._sync import iterate_sync, run_sync
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import AuditEntry
from statehitl.commands import Command
from statehitl.errors import GraphValidationError, NotJSONError
from statehitl.func.schemas import context_jsonschema, input_jsonschema, output_jsonschema, value_types
from statehitl.func.tasks import TaskCalls, TaskEvent, TaskUpdate, enter_calls, leave_calls
from statehitl.graph.builder import StateGraph
from statehitl.graph.caching import CachePolicy
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.graph.node_calls import current_run, get_stream_writer, node_config
from statehitl.graph.node_guards import sync_timeout_refused
from statehitl.graph.retries import Policies
from statehitl.graph.runtime_values import Runtime
from statehitl.interrupt import InterruptRaised
from statehitl.position import NodeContext
from statehitl.runner_parts import keep_progress
from statehitl.stream_sink import StreamMode
from statehitl.timeout_policy import TimeoutPolicy
from statehitl.values import decode_value, encode_value

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache

T = TypeVar("T")
S = TypeVar("S")
V = TypeVar("V")

_INJECTED = ("previous", "config", "writer", "runtime", "store")


class WorkflowState(TypedDict, total=False):
    """A workflow thread's channels: the run's input, the function's value, and what ``previous`` reads."""

    input: Any
    output: Any
    saved: Any


def _ignore(_: Any) -> None:
    return None


class _Body:
    """How the entrypoint's function is called: its input first, then what it asks for by name."""

    def __init__(self, fn: Callable[..., Any], *, keeps_previous: bool, cache: BaseCache | None = None) -> None:
        self.fn = fn
        self.cache = cache
        """Where its tasks with a ``cache_policy`` keep their results (``entrypoint(cache=)``)."""
        self.name = getattr(fn, "__name__", "entrypoint")
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise NotImplementedError(f"entrypoint {self.name!r} is a generator; an entrypoint returns its value "
                                      "(stream chunks with its writer)")
        self.keeps_previous = keeps_previous
        """With a checkpointer, ``previous`` is the thread's last value; without one, always None (LangGraph's)."""
        self.is_async = inspect.iscoroutinefunction(fn)
        self.known = value_types(fn)
        """The classes the function's annotations name: its input, value and saved value are stored as them."""
        params = list(inspect.signature(fn).parameters.values())
        if not params or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD):
            raise GraphValidationError(f"entrypoint {self.name!r}: the function must take its input as its first "
                                       "positional parameter")
        self.named = tuple(p.name for p in params[1:] if p.name in _INJECTED)

    def arguments(self, state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        scope = current_run()
        write = get_stream_writer()
        config = node_config(scope.config if scope is not None else {}, ctx, None)
        previous = self.loaded(state.get("saved")) if self.keeps_previous else None
        store = scope.store if scope is not None else None
        given = {"previous": previous, "config": config, "writer": write, "store": store,
                 "runtime": Runtime(context=scope.context if scope is not None else None, stream_writer=write,
                                    store=store, previous=previous)}
        return {name: given[name] for name in self.named}

    def finish(self, returned: Any) -> dict[str, Any]:
        if isinstance(returned, entrypoint.final):
            value, saved = returned.value, returned.save
        else:
            value = saved = returned
        return {"output": self.stored(value, f"entrypoint {self.name!r}'s return value"),
                "saved": self.stored(saved, f"entrypoint {self.name!r}'s saved value (entrypoint.final(save=))")}

    def stored(self, value: Any, where: str) -> Any:
        """``value`` as the thread keeps it: JSON, with the standard types and the classes the function's
        annotations name tagged (``statehitl.values``); anything else is ``NotJSONError`` naming ``where``."""
        return encode_value(value, where, self.known, error=NotJSONError)

    def loaded(self, data: Any) -> Any:
        """What ``stored`` was given, from what it returned."""
        return decode_value(data, self.known)

    def node(self) -> Callable[..., Any]:
        """The node the machine runs: the function with its tasks' bookkeeping around it. A sync function runs
        in a worker thread (its tasks in threads of their own), so the run's loop streams while it works (the
        run's stream takes chunks from any thread, in order)."""
        body = self

        async def run(state: dict[str, Any], ctx: NodeContext) -> Any:
            calls = TaskCalls(ctx, body.cache)
            token = enter_calls(calls)
            try:
                kwargs = body.arguments(state, ctx)
                given = body.loaded(state.get("input"))
                if body.is_async:
                    returned = await body.fn(given, **kwargs)
                else:
                    returned = await asyncio.to_thread(body.fn, given, **kwargs)
            except InterruptRaised as stop:
                await calls.asettle()
                raise calls.stopped(stop) from None
            except Exception as exc:
                await calls.asettle()
                if calls.done or calls.kept:  # kept for the step's retry (invoke(None)); a retry_policy's next
                    keep_progress(exc, calls.progress())  # attempt in this run runs them again, as LangGraph's
                raise
            finally:
                leave_calls(token)
            await calls.asettle()
            return body.finish(returned)

        run.__name__ = self.name
        return run


class Workflow:
    """What ``@entrypoint`` makes: LangGraph's ``Pregel`` of a workflow (``invoke``, ``stream``, ``get_state``,
    ...), over a one-node StateGraph. Its value is what the function returned (or ``entrypoint.final``'s
    ``value``)."""

    def __init__(self, body: _Body, graph: CompiledStateGraph[Any], context_schema: Any = None) -> None:
        self._body = body
        self.context_schema = context_schema
        self.graph = graph
        graph.traced_output = lambda values: _value(values, body)  # a tracer sees the workflow's value
        self.name = body.name
        self.checkpointer = graph.checkpointer

    def invoke(self, input: Any, config: dict[str, Any] | str | None = None, **options: Any) -> Any:
        """Run the workflow on ``input`` (or resume it: ``Command(resume=...)``, or ``None``); see ``ainvoke``."""
        return run_sync(self.ainvoke(input, config, **options))

    async def ainvoke(self, input: Any, config: dict[str, Any] | str | None = None, **options: Any) -> Any:
        """Run the workflow and return its value; a run that stopped on interrupts returns the thread's value (a
        dict) with ``"__interrupt__"``, as LangGraph's does. Options are the graph's (``context=``, ...)."""
        result = await self.graph.ainvoke(self._graph_input(input), config, **options)
        return _value(result, self._body)

    def stream(self, input: Any, config: dict[str, Any] | str | None = None, **options: Any) -> Iterator[Any]:
        """Run as ``invoke`` does, yielding chunks as they happen; see ``astream``."""
        return iterate_sync(self.astream(input, config, **options))

    async def astream(self, input: Any, config: dict[str, Any] | str | None = None, *,
                      stream_mode: str | Sequence[str] = "updates", subgraphs: bool = False,
                      **options: Any) -> AsyncIterator[Any]:
        """LangGraph's workflow stream: ``"updates"`` gives ``{task: result}`` as each task finishes and
        ``{entrypoint: value}`` at the end (``{"__interrupt__": ...}`` on a stop), ``"values"`` the value,
        ``"custom"`` what the function and its tasks write, ``"tasks"`` each call's start and end; a list of
        modes yields ``(mode, chunk)``; ``subgraphs=True`` prefixes each with the workflow's namespace, ``()``
        (its tasks are its own, as in LangGraph)."""
        modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
        shown_elsewhere = [m for m in modes if m in ("debug", "checkpoints")]
        if shown_elsewhere:
            raise ValueError(f"a workflow streams {list(_WORKFLOW_MODES)}, not {shown_elsewhere}: its checkpoints "
                             "are those of get_state_history(config)")
        inner = cast("list[StreamMode]", list(dict.fromkeys([*modes, "custom"])))
        first_values = True
        async for mode, chunk in self.graph.astream(self._graph_input(input), config, stream_mode=inner, **options):
            if mode == "values" and first_values:  # the thread's value as the run starts: LangGraph shows it on a
                first_values = False  # resume only (new input goes to the function, not the value)
                if not _resuming(input) or "values" not in modes:
                    continue
                chunk = {"output": chunk.get("output") if isinstance(chunk, dict) else None}
            shown = self._shown(mode, chunk, modes)
            if shown is None:
                continue
            item = shown if not isinstance(stream_mode, str) else shown[1]
            yield item if not subgraphs else ((), *item) if not isinstance(stream_mode, str) else ((), item)

    def astream_events(self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2",
                       **options: Any) -> AsyncIterator[dict[str, Any]]:
        """LangChain's event stream of a run (needs langchain-core), as a compiled graph's."""
        from statehitl.graph.run_events import stream_events

        return stream_events(self, input, config, version=version, **options)

    def astream_log(self, input: Any, config: dict[str, Any] | None = None, **options: Any) -> AsyncIterator[Any]:
        """LangChain's run log of a run (needs langchain-core), as a compiled graph's."""
        from statehitl.graph.run_events import stream_log

        return stream_log(self, input, config, **options)

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The workflow's name (the function's, or ``entrypoint(name=)``), as the graph joins a suffix."""
        return self.graph.get_name(suffix, name=name)

    def _graph_input(self, input: Any) -> Any:
        """What the graph is given: a resume as it is; new input as the ``input`` channel, stored as ``stored``
        keeps it (the function sees the same value when it runs again on a resume, in any process)."""
        if _resuming(input):
            return input
        return {"input": self._body.stored(input, f"entrypoint {self.name!r}'s input")}

    def _shown(self, mode: str, chunk: Any, modes: list[str]) -> tuple[str, Any] | None:
        if mode == "custom" and isinstance(chunk, TaskUpdate):
            if "updates" not in modes:
                return None
            return "updates", {chunk.name: chunk.result, **({"__metadata__": {"cached": True}} if chunk.cached else {})}
        if mode == "custom" and isinstance(chunk, TaskEvent):
            return ("tasks", chunk.payload) if "tasks" in modes else None
        if mode not in modes:
            return None
        if mode == "tasks" and isinstance(chunk, dict):
            return mode, _entrypoint_event(chunk)
        if mode == "updates" and isinstance(chunk, dict) and self.name in chunk:
            return mode, {self.name: self._body.loaded((chunk[self.name] or {}).get("output"))}
        if mode == "values" and isinstance(chunk, dict):
            if "__interrupt__" in chunk:
                return mode, _value(chunk, self._body)
            return (mode, self._body.loaded(chunk["output"])) if "output" in chunk else None
        return mode, chunk

    def get_state(self, config: dict[str, Any] | str, **options: Any) -> Any:
        """The thread's current checkpoint, its ``values`` the workflow's value (LangGraph's)."""
        return _snapshot(self.graph.get_state(config, **options), self._body)

    async def aget_state(self, config: dict[str, Any] | str, **options: Any) -> Any:
        return _snapshot(await self.graph.aget_state(config, **options), self._body)

    def get_state_history(self, config: dict[str, Any] | str, **options: Any) -> Iterator[Any]:
        """The thread's checkpoints, newest first, each with the workflow's value as ``values``."""
        return (_snapshot(s, self._body) for s in self.graph.get_state_history(config, **options))

    async def aget_state_history(self, config: dict[str, Any] | str, **options: Any) -> AsyncIterator[Any]:
        async for snapshot in self.graph.aget_state_history(config, **options):
            yield _snapshot(snapshot, self._body)

    def update_state(self, config: dict[str, Any] | str, values: Any, as_node: str | None = None) -> Any:
        """Write ``values`` as the workflow's value (and the next run's ``previous``), as if it had returned it;
        on a thread never run too (LangGraph's way to give a workflow's first run a ``previous``)."""
        return run_sync(self.aupdate_state(config, values, as_node))

    async def aupdate_state(self, config: dict[str, Any] | str, values: Any, as_node: str | None = None) -> Any:
        update = self._body.finish(values)  # checked before anything is written
        current = await self.graph.aget_state(config)
        if current is None or current.checkpoint_id is None:  # a thread never run: LangGraph's first checkpoint
            await self.graph.ainvoke({}, config, interrupt_before=[self.name])  # holds the value; here a run
            # stopped before the function, which the update then finishes
        return await self.graph.aupdate_state(config, update, as_node or self.name)

    def get_input_jsonschema(self, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON schema of the workflow's input: its function's first parameter's type."""
        return input_jsonschema(self._body.fn)

    def get_output_jsonschema(self, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON schema of the workflow's value: its function's return type (``entrypoint.final[V, S]``: V)."""
        return output_jsonschema(self._body.fn, entrypoint.final)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """The JSON schema of ``invoke(..., context=)``: the entrypoint's ``context_schema`` (None without one)."""
        return context_jsonschema(self.context_schema)

    def audit(self, thread_id: str) -> list[AuditEntry]:
        """The thread's answers to its interrupts, who gave them and by which door (statehitl's audit trail)."""
        return self.graph.audit(thread_id)

    async def aaudit(self, thread_id: str) -> list[AuditEntry]:
        return await self.graph.aaudit(thread_id)

    def get_graph(self, config: dict[str, Any] | None = None, *, xray: bool = False) -> Any:
        """The workflow drawn as LangGraph draws an entrypoint (``__start__`` to its one node, a conditional edge
        on to ``__end__``) when ``langchain-core`` is installed, else its graph's machine (``draw_mermaid()``)."""
        from statehitl.graph.drawing import workflow_graph  # drawing is not running

        try:
            return workflow_graph(self.name, self._body.fn)
        except ImportError:  # no langchain-core: the machine draws itself
            return self.graph.get_graph(config, xray=xray)

    async def aget_graph(self, config: dict[str, Any] | None = None, *, xray: bool = False) -> Any:
        """``get_graph`` from async code (drawing does no I/O)."""
        return self.get_graph(config, xray=xray)

    def __repr__(self) -> str:
        return f"<Workflow {self.name!r}>"


_WORKFLOW_MODES = ("updates", "values", "custom", "tasks", "messages")


def _entrypoint_event(event: dict[str, Any]) -> dict[str, Any]:
    """The entrypoint's own task event as LangGraph shows it: its input, and its value as ``__end__``."""
    if "input" in event:
        given = event["input"]
        return {**event, "input": given.get("input") if isinstance(given, dict) else given,
                "triggers": ("__start__",)}
    result = event.get("result")
    return {**event, "result": {"__end__": result["output"]} if isinstance(result, dict) and "output" in result
            else result}


def _resuming(input: Any) -> bool:
    return input is None or isinstance(input, Command)


def _value(result: Any, body: _Body) -> Any:
    if not isinstance(result, dict):
        return result
    output = body.loaded(result.get("output"))
    asked = result.get("__interrupt__")
    if not asked:
        return output
    return {**(output if isinstance(output, dict) else {}), "__interrupt__": asked}


def _snapshot(snapshot: Any, body: _Body) -> Any:
    if snapshot is None:
        return None
    values = snapshot.values
    if not isinstance(values, dict) or not values:  # a thread never run: LangGraph's empty snapshot, {}
        return snapshot
    return snapshot._replace(values=body.loaded(values.get("output")))


class entrypoint(Generic[T]):
    """LangGraph's ``@entrypoint(checkpointer=...)``: the decorated function is a workflow whose tasks'
    results are kept, which stops on ``interrupt()`` and goes on with ``Command(resume=...)``. The function
    takes its input, and by name ``previous`` (the thread's last value, or ``entrypoint.final``'s ``save``),
    ``config``, ``writer`` and ``runtime``."""

    @dataclasses.dataclass(frozen=True)
    class final(Generic[V, S]):
        """Return ``value`` to the caller and keep ``save`` as the next run's ``previous``."""

        value: V
        save: S

    def __init__(self, checkpointer: Checkpointer | None = None, store: Any = None, cache: BaseCache | None = None,
                 context_schema: Any = None, cache_policy: CachePolicy | None = None, *,
                 retry_policy: Policies | None = None, config_schema: Any = None, name: str | None = None,
                 step_limit: int = 25, timeout: float | timedelta | TimeoutPolicy | None = None) -> None:
        self.retry_policy = retry_policy
        self.timeout = TimeoutPolicy.coerce(timeout)
        """Each attempt of the workflow's function (an async one's only), as ``add_node(timeout=)``."""
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        """Where tasks with a ``cache_policy`` keep their results, and the workflow's own when it has one."""
        self.cache_policy = cache_policy
        """The workflow's own caching: a call with an input (and ``previous``) it ran on returns that value."""
        self.context_schema = context_schema
        self.name = name
        self.step_limit = step_limit

    def __call__(self, fn: Callable[..., Any]) -> Workflow:
        body = _Body(fn, keeps_previous=self.checkpointer is not None, cache=self.cache)
        if self.name:
            body.name = self.name
        if self.timeout is not None and not body.is_async:
            raise sync_timeout_refused("Entrypoint", body.name)
        builder: StateGraph[Any] = StateGraph(WorkflowState)
        builder.add_node(body.name, body.node(), retry_policy=self.retry_policy, timeout=self.timeout,
                         cache_policy=self.cache_policy)
        builder.set_entry_point(body.name)
        builder.set_finish_point(body.name)
        graph = builder.compile(self.checkpointer, step_limit=self.step_limit, name=body.name, store=self.store,
                                cache=self.cache)
        return Workflow(body, graph, self.context_schema)
