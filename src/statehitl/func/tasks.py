"""LangGraph's ``@task``: a step of a functional-API workflow whose result, once it finished, is kept.

A task runs inside its entrypoint's node call. Calling it returns a future at once (a thread's future in a
sync entrypoint, an asyncio one in an async entrypoint), so tasks started before any result is awaited run
side by side. Each call is named by its order in the node's run and the task's name (LangGraph's rule: a
call's identity is its position among the run's calls and its function), so when the entrypoint stops on
an interrupt and runs again on resume, the calls that had finished return their kept results without
running, and only the rest run. The results are kept as the node's progress in the thread's checkpoint:
JSON, checked as each task finishes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import sys
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from statehitl import interrupt_ids
from statehitl.errors import NotJSONError
from statehitl.func.schemas import value_types
from statehitl.func.task_cache import TaskCache, task_namespace
from statehitl.graph.caching import CachePolicy
from statehitl.graph.node_calls import enter_node, get_stream_writer, leave_node
from statehitl.graph.node_guards import sync_timeout_refused, timed
from statehitl.graph.retries import Policies, retried, retried_async
from statehitl.interrupt import InterruptContext, InterruptRaised
from statehitl.position import NodeContext
from statehitl.timeout_policy import TimeoutPolicy
from statehitl.values import ValueTypes, decode_value, encode_value

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache

_WORKERS = 64
"""At most this many task calls of one entrypoint run at once in threads."""

@dataclasses.dataclass(frozen=True)
class TaskEvent:
    """A task call's start (``kind="task"``) or end (``"task_result"``) on its way to ``stream_mode="tasks"``."""

    kind: str
    payload: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class TaskUpdate:
    """A finished task's result on its way to ``stream_mode="updates"`` as ``{name: result}``."""

    name: str
    result: Any
    cached: bool = False
    """The result came from the workflow's cache (the task did not run): LangGraph's ``"__metadata__"``."""


class TaskCalls:
    """The task calls of one run of an entrypoint's node: their order, their futures, what they finished.

    ``kept`` holds the results of calls that finished before the node last stopped in this step.
    """

    def __init__(self, ctx: NodeContext, cache: BaseCache | None = None) -> None:
        self.ctx = ctx
        self.cache = cache
        """The workflow's cache (``entrypoint(cache=)``), where tasks with a ``cache_policy`` keep their results."""
        self.kept: dict[str, Any] = _kept_results(ctx) if ctx.progress else {}
        self.done: dict[str, Any] = {}
        self.futures: list[Any] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def next_key(self, name: str) -> str:
        """The call's key: calls are counted per caller (the entrypoint, or the task that makes them,
        as LangGraph counts them), so a finished task whose own calls are not made again on a resume does not
        shift the keys of the calls after it."""
        caller = _CALLER.get()
        with self._lock:
            index = self._counts.get(caller, 0)
            self._counts[caller] = index + 1
        return f"{caller}{index}:{name}"

    def task_context(self, key: str) -> NodeContext:
        """The node call a task runs as: the entrypoint's, with interrupts of its own (named by the call's
        key), so each task's ``interrupt()`` calls are matched to their answers whatever ran before."""
        site = interrupt_ids.node(self.ctx.interrupts.prefix, self.ctx.step, self.ctx.node)
        outer = self.ctx.interrupts
        interrupts = InterruptContext(outer.responses, f"{interrupt_ids.nested(site)}task/{key}/", outer.thread,
                                      outer.digests)
        return dataclasses.replace(self.ctx, interrupts=interrupts, asked=0, invoked=0, _scope=None)

    def pool(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                # wide, as threads start only when needed: a task waiting on the tasks it called holds a
                # worker, so a pool as narrow as the cores could fill with waiters and stop
                self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=_WORKERS,
                                                                   thread_name_prefix="statehitl-task")
            return self._pool

    def _report(self, kind: str, payload: dict[str, Any]) -> None:
        """A ``stream_mode="tasks"`` event of a task call, as LangGraph's (its id ``step:key``): it travels with
        the custom chunks, whose order it shares, and the workflow's stream shows it as a task event."""
        get_stream_writer()(TaskEvent(kind, payload))

    def started(self, key: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._report("task", {"id": f"{self.ctx.step}:{key}", "name": name, "input": (args, kwargs),
                              "triggers": ("__pregel_push",)})

    def failed(self, key: str, name: str, error: BaseException) -> None:
        """A call that raised ends with its error; one that asked ends with nothing, as in LangGraph (the
        entrypoint's own end carries the interrupt)."""
        if not isinstance(error, InterruptRaised):
            self._report("task_result", {"id": f"{self.ctx.step}:{key}", "name": name, "error": repr(error),
                                         "result": {}, "interrupts": []})

    def finished(self, key: str, name: str, result: Any, known: ValueTypes, *, cached: bool = False) -> None:
        """A call returned ``result``: kept as JSON (the standard types and the classes the task's annotations
        name, ``known``, tagged), so a resume hands it back without running the task."""
        kept = encode_value(result, f"task {name!r}'s result (kept in the checkpoint so a resume does not run it "
                                    "again)", known, error=NotJSONError)
        with self._lock:
            self.done[key] = kept
        self._report("task_result", {"id": f"{self.ctx.step}:{key}", "name": name, "error": None,
                                     "result": {"__return__": result}, "interrupts": []})
        get_stream_writer()(TaskUpdate(name, result, cached))

    def progress(self) -> dict[str, Any]:
        """What the node keeps when it stops or fails (a ``WorkflowTasks``): every finished call's result."""
        from statehitl.progress import WorkflowTasks  # the record kinds load when a run first stops

        return WorkflowTasks(results={**self.kept, **self.done}).stored()

    def settle(self) -> None:
        """Wait for every task this run started in threads (whatever each returned or raised: the caller saw
        what it awaited)."""
        concurrent.futures.wait([f for f in list(self.futures) if isinstance(f, concurrent.futures.Future)])
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    async def asettle(self) -> None:
        """Wait for every task this run started (asyncio futures too)."""
        if self.futures or self._pool:
            await asyncio.to_thread(self.settle)
        pending = [f for f in self.futures if not isinstance(f, concurrent.futures.Future)]
        await asyncio.gather(*pending, return_exceptions=True)

    def stopped(self, stop: InterruptRaised) -> InterruptRaised:
        """The node's stop, once every task it started has settled: the interrupt that reached the entrypoint
        (LangGraph's: a task asking beside it, whose result nobody awaited yet, asks again on resume), with
        the results of the tasks that finished kept as its progress."""
        return InterruptRaised(list(stop.interrupts), progress=self.progress())


_CALLS: contextvars.ContextVar[TaskCalls | None] = contextvars.ContextVar("statehitl_task_calls", default=None)
_CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("statehitl_task_caller", default="")
"""The key of the task whose code is running, with a ``/`` (empty in the entrypoint's own code)."""


def enter_calls(calls: TaskCalls) -> contextvars.Token[TaskCalls | None]:
    return _CALLS.set(calls)


def leave_calls(token: contextvars.Token[TaskCalls | None]) -> None:
    _CALLS.reset(token)


class TaskFunction:
    """What ``@task`` makes: calling it inside an entrypoint starts the task and returns its future."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None, retry: Policies | None,
                 timeout: TimeoutPolicy | None = None, cache_policy: CachePolicy | None = None) -> None:
        self.fn = fn
        self.name: str = name or _name_of(fn)
        self.retry = retry
        if cache_policy is not None and not isinstance(cache_policy, CachePolicy):
            raise TypeError(f"task {self.name!r}: cache_policy must be a CachePolicy, got {cache_policy!r}")
        self.cache_policy = cache_policy
        self.is_async = inspect.iscoroutinefunction(fn)
        self.known = value_types(fn)
        """The classes the function's annotations name: its result is kept as them and read back into them."""
        if timeout is not None and not self.is_async:
            raise sync_timeout_refused("Task", self.name)
        self.timeout = timeout
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        calls = _CALLS.get()
        if calls is None:
            raise RuntimeError(f"task {self.name!r} was called outside an entrypoint: call tasks from a function "
                               "decorated with @entrypoint (or from another task)")
        key = calls.next_key(self.name)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if key in calls.kept:  # LangGraph's stream shows the kept call start, and no end
            calls.started(key, self.name, args, kwargs)
            return _ready(decode_value(calls.kept[key], self.known), loop)
        ctx = calls.task_context(key)
        future = self._start_async(calls, ctx, key, args, kwargs) if loop is not None \
            else self._start_sync(calls, ctx, key, args, kwargs)
        calls.futures.append(future)
        return future

    def _start_sync(self, calls: TaskCalls, ctx: NodeContext, key: str, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> concurrent.futures.Future[Any]:
        return calls.pool().submit(contextvars.copy_context().run, self._call_sync, calls, ctx, key, args, kwargs)

    def _start_async(self, calls: TaskCalls, ctx: NodeContext, key: str, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        if self.is_async:
            return asyncio.ensure_future(self._call_async(calls, ctx, key, args, kwargs))
        call = functools.partial(self._call_sync, calls, ctx, key, args, kwargs)
        return asyncio.wrap_future(calls.pool().submit(contextvars.copy_context().run, call), loop=loop)

    def _call_sync(self, calls: TaskCalls, ctx: NodeContext, key: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
        """One call, in a worker thread (in a copy of the caller's context): as the task's own node call."""
        token = enter_node(ctx)
        _CALLER.set(f"{key}/")
        calls.started(key, self.name, args, kwargs)
        cached = self._cached(calls)
        try:
            with self._traced(args, kwargs) as done:
                if self.is_async:
                    result = asyncio.run(self._attempts_async(args, kwargs) if cached is None else
                                         cached.acall(args, kwargs, lambda: self._attempts_async(args, kwargs)))
                elif cached is None:
                    result = self._attempts(args, kwargs)
                else:
                    result = cached.call(args, kwargs, lambda: self._attempts(args, kwargs))
                done(result)
        except BaseException as exc:
            calls.failed(key, self.name, exc)
            raise
        finally:
            leave_node(token)
        calls.finished(key, self.name, result, self.known, cached=cached is not None and cached.hit)
        return result

    async def _call_async(self, calls: TaskCalls, ctx: NodeContext, key: str, args: tuple[Any, ...],
                          kwargs: dict[str, Any]) -> Any:
        """One call of an async task, in its own asyncio task (a copy of the caller's context)."""
        token = enter_node(ctx)
        _CALLER.set(f"{key}/")
        calls.started(key, self.name, args, kwargs)
        cached = self._cached(calls)
        try:
            with self._traced(args, kwargs) as done:
                if cached is None:
                    result = await self._attempts_async(args, kwargs)
                else:
                    result = await cached.acall(args, kwargs, lambda: self._attempts_async(args, kwargs))
                done(result)
        except BaseException as exc:
            calls.failed(key, self.name, exc)
            raise
        finally:
            leave_node(token)
        calls.finished(key, self.name, result, self.known, cached=cached is not None and cached.hit)
        return result

    def _cached(self, calls: TaskCalls) -> TaskCache | None:
        """The task's cache in this run: its ``cache_policy`` on its workflow's cache, when it has both."""
        if self.cache_policy is None or calls.cache is None:
            return None
        return TaskCache(self.name, task_namespace(self.fn, self.name), self.cache_policy, calls.cache, self.known)

    async def aclear_cache(self, cache: BaseCache) -> None:
        """Forget every result of this task that ``cache`` holds (LangGraph's ``task.clear_cache(cache)``)."""
        await cache.aclear([task_namespace(self.fn, self.name)])

    def clear_cache(self, cache: BaseCache) -> None:
        """Forget every result of this task that ``cache`` holds."""
        cache.clear([task_namespace(self.fn, self.name)])

    def _traced(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AbstractContextManager[Callable[[Any], None]]:
        """The call's own run when its entrypoint runs under LangChain callbacks (LangChain's current config then
        holds its node run's child manager, ``node_runs``), else nothing to do."""
        langchain_config = sys.modules.get("langchain_core.runnables.config")  # set only once LangChain is loaded
        current = None if langchain_config is None else langchain_config.var_child_runnable_config.get()
        callbacks = None if current is None else current.get("callbacks")
        if current is None or callbacks is None or isinstance(callbacks, list):
            return contextlib.nullcontext(_ignored)
        from statehitl.graph.node_runs import task_run

        return task_run(current, self.name, _arguments(self.fn, args, kwargs))

    def _attempts(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.retry is None:
            return self.fn(*args, **kwargs)
        return retried(lambda: self.fn(*args, **kwargs), self.retry)

    async def _attempts_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        fn = self.fn if self.timeout is None else timed(self.fn, self.timeout, self.name)  # each attempt timed
        call: Callable[[], Awaitable[Any]] = lambda: fn(*args, **kwargs)  # noqa: E731
        if self.retry is None:
            return await call()
        return await retried_async(call, self.retry)

    def __repr__(self) -> str:
        return f"<task {self.name!r}>"


def _ignored(_: Any) -> None:
    return None


def _arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments by parameter name, defaults filled in (a task run's input, as LangGraph traces it)."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):  # a signature Python cannot read, or a call it does not fit: as given
        return {"args": list(args), **kwargs}
    bound.apply_defaults()
    return dict(bound.arguments)


def _name_of(fn: Callable[..., Any]) -> str:
    """A task's name when not given: its function's (a ``functools.partial``'s function's, a callable object's
    class's), as LangGraph names it."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _ready(value: Any, loop: asyncio.AbstractEventLoop | None) -> Any:
    """A kept result, as the future a call returns."""
    if loop is not None:
        done: asyncio.Future[Any] = loop.create_future()
        done.set_result(value)
        return done
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.set_result(value)
    return future


def task(__func_or_none__: Callable[..., Any] | None = None, *, name: str | None = None,
         retry_policy: Policies | None = None, retry: Policies | None = None, cache_policy: CachePolicy | None = None,
         timeout: float | timedelta | TimeoutPolicy | None = None) -> Any:
    """LangGraph's ``@task`` (``@task`` or ``@task(name=, retry_policy=, timeout=)``): a function called inside
    an ``@entrypoint`` as a step whose finished result is kept, so a resumed workflow does not run it again.
    Calling it returns a future: ``.result()`` in a sync entrypoint, ``await`` in an async one. ``timeout``
    (an async function's only, as ``add_node(timeout=)``): each attempt past it is cancelled and raises
    ``NodeTimeoutError``, which the retry policy may retry; a limit not above 0 is refused here.
    ``cache_policy``: with ``entrypoint(cache=)``, a call with the arguments of an earlier one (in any thread)
    returns that call's result without running (``statehitl.func.task_cache``)."""
    policy = retry_policy if retry_policy is not None else retry
    limits = TimeoutPolicy.coerce(timeout)

    def decorate(fn: Callable[..., Any]) -> TaskFunction:
        return TaskFunction(fn, name=name, retry=policy, timeout=limits, cache_policy=cache_policy)

    return decorate if __func_or_none__ is None else decorate(__func_or_none__)


def _kept_results(ctx: NodeContext) -> dict[str, Any]:
    """The results of the task calls that finished before the node last stopped in this step (its
    ``WorkflowTasks``)."""
    from statehitl.progress import WorkflowTasks

    return dict(WorkflowTasks.load(ctx.progress, f"what entrypoint node {ctx.node!r} kept of its tasks").results)
