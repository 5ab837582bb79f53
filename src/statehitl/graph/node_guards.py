"""LangGraph 1.2's guards around a node's function: a time limit per attempt (``TimeoutPolicy``) and an error
handler that runs in its place once it has failed for good (``add_node(error_handler=)``).

Both keep statehitl's durability rules. A timed-out attempt is cancelled and raises ``NodeTimeoutError``, which
the node's retry policy may retry; past its retries the step has failed like any failed step, and
``invoke(None, config)`` retries it. An error handler's write is the node's step's write, routed only by the
handler's ``goto`` (``commands.HANDLED``). When the handler itself fails, the step fails and keeps, as the node's
progress, that the node failed and with what: the step's retry runs the handler again, not the node.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import timedelta
from typing import Any, Literal

from statehitl._sync import run_sync
from statehitl.commands import Handled
from statehitl.errors import GraphBubbleUp, NodeError, NodeTimeoutError
from statehitl.graph.code_cache import CodeCache
from statehitl.position import NodeContext
from statehitl.runner_parts import SENT_TIMEOUT, keep_progress
from statehitl.timeout_policy import TimeoutPolicy

DEFAULT_ERROR_HANDLER = "__default_error_handler__"
"""The node name of ``set_node_defaults(error_handler=)``'s handler (LangGraph's)."""


def handler_name(node: str) -> str:
    """The node name of ``add_node(node, ..., error_handler=)``'s handler (LangGraph's)."""
    return f"__error_handler__{node}"


def sync_timeout_refused(kind: str, name: str) -> ValueError:
    """The error for a timeout on a sync function (``kind`` "Task", "Entrypoint"): only an async one can be
    cancelled in-process, so the limit would not hold."""
    return ValueError(f"{kind} {name!r} has a timeout, but timeouts are only supported for async nodes: a sync "
                      "function cannot be cancelled in-process; make it `async def` or drop the timeout")


class _Clock:
    """When the running attempt last made progress (the loop's clock)."""

    def __init__(self, refresh_on: str, now: float) -> None:
        self.refresh_on = refresh_on
        self.last = now


_CLOCK: ContextVar[_Clock | None] = ContextVar("statehitl_node_clock", default=None)


def heartbeat() -> None:
    """Report progress of the running attempt (``Runtime.heartbeat``): its ``idle_timeout`` starts again.
    Outside a timed attempt it does nothing."""
    clock = _CLOCK.get()
    if clock is not None:
        clock.last = time.monotonic()


def touch() -> None:
    """A chunk written to the custom stream: progress for an ``idle_timeout`` that refreshes on it (``"auto"``)."""
    clock = _CLOCK.get()
    if clock is not None and clock.refresh_on == "auto":
        clock.last = time.monotonic()


def timed(fn: Callable[..., Awaitable[Any]], policy: TimeoutPolicy | None, node: str
          ) -> Callable[..., Awaitable[Any]]:
    """``fn`` (async) with each call cancelled past ``policy``'s limits (or those the ``Send`` that made the task
    gave it, ``SENT_TIMEOUT``), raising ``NodeTimeoutError``; a call with neither runs as it is."""

    async def attempt(*args: Any, **kwargs: Any) -> Any:
        sent = SENT_TIMEOUT.get()
        chosen = policy if sent is None else _sent_policy(sent)
        if chosen is None:
            return await fn(*args, **kwargs)
        run_limit, idle_limit = _float(chosen.run_timeout), _float(chosen.idle_timeout)
        clock = _Clock(chosen.refresh_on, time.monotonic())
        start = clock.last
        token, unsent = _CLOCK.set(clock), SENT_TIMEOUT.set(None)  # the Send's limits are this call's only
        try:
            task = asyncio.ensure_future(fn(*args, **kwargs))  # the task sees the clock (a copy of this context)
        finally:
            _CLOCK.reset(token)
            SENT_TIMEOUT.reset(unsent)
        while True:
            now = time.monotonic()
            run_left = None if run_limit is None else start + run_limit - now
            idle_left = None if idle_limit is None else clock.last + idle_limit - now
            left = min(x for x in (run_left, idle_left) if x is not None)
            if left <= 0:
                await _cancelled(task)
                kind: Literal["run", "idle"] = "run" if run_left is not None and run_left <= 0 else "idle"
                raise NodeTimeoutError(node, now - start, kind=kind, run_timeout=run_limit, idle_timeout=idle_limit)
            done, _ = await asyncio.wait({task}, timeout=left)
            if done:
                return task.result()

    return attempt


def _sent_policy(stored: dict[str, Any]) -> TimeoutPolicy | None:
    """A Send's limits as stored (``Send.stored_timeout``), as a policy."""
    return TimeoutPolicy.coerce(TimeoutPolicy(run_timeout=stored.get("run_timeout"),
                                              idle_timeout=stored.get("idle_timeout"),
                                              refresh_on=stored.get("refresh_on", "auto")))


def _float(value: float | timedelta | None) -> float | None:
    return None if value is None else float(value) if not isinstance(value, timedelta) else value.total_seconds()


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait until it has stopped (its own cleanup done)."""
    task.cancel()
    await asyncio.wait({task})


class ErrorHandler:
    """A node's error handler: its node name and the function (``fn(state, error: NodeError, config=...)``)."""

    __slots__ = ("fn", "name")

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name, self.fn = name, fn

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErrorHandler) and (self.name, self.fn) == (other.name, other.fn)

    def __hash__(self) -> int:
        return hash((self.name, self.fn))

    def __repr__(self) -> str:
        return f"ErrorHandler(name={self.name!r}, fn={self.fn!r})"


def handled(target: Callable[..., Any], handler: ErrorHandler, *, node: str, is_async: bool,
            named: Callable[[str, NodeContext | None], Any],
            current: Callable[[tuple[Any, ...]], NodeContext | None],
            view: Callable[[Any], Any] = lambda state: state) -> Callable[..., Any]:
    """``target`` whose failure (past its retries) runs ``handler`` instead, whose return is the node's write
    (``Handled``). Interrupts and other control flow go through untouched. ``named(param, ctx)`` gives the
    handler's ``config``/``writer``/``runtime`` parameters, as a node gets them; ``current(args)`` the node call
    ``target`` was called for; ``view(args[0])`` the state the handler gets."""
    call = _handler_call(handler.fn, named)
    if is_async:
        return _handled_async(target, handler, node=node, call=call, current=current, view=view)

    def guarded(*args: Any, **kwargs: Any) -> Any:
        ctx, failed = _kept_failure(current(args))
        if failed is None:
            try:
                return target(*args, **kwargs)
            except GraphBubbleUp:
                raise
            except Exception as error:
                failed = error
        try:
            returned = call(view(args[0]), NodeError(node, failed), ctx)
            if inspect.isawaitable(returned):
                returned = run_sync(_awaited(returned))
        except GraphBubbleUp:
            raise
        except Exception as error:
            raise keep_progress(error, _kept(failed)) from None
        return Handled(handler.name, returned)

    return guarded


def _handled_async(target: Callable[..., Any], handler: ErrorHandler, *, node: str,
                   call: Callable[[Any, NodeError, NodeContext | None], Any],
                   current: Callable[[tuple[Any, ...]], NodeContext | None],
                   view: Callable[[Any], Any]) -> Callable[..., Any]:
    """``handled`` of an async ``target``: the handler's return is awaited on the node's own loop."""

    async def guarded_async(*args: Any, **kwargs: Any) -> Any:
        ctx, failed = _kept_failure(current(args))
        if failed is None:
            try:
                return await target(*args, **kwargs)
            except GraphBubbleUp:
                raise
            except Exception as error:
                failed = error
        try:
            returned = call(view(args[0]), NodeError(node, failed), ctx)
            if inspect.isawaitable(returned):
                returned = await returned
        except GraphBubbleUp:
            raise
        except Exception as error:
            raise keep_progress(error, _kept(failed)) from None
        return Handled(handler.name, returned)

    return guarded_async


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


_FAILED = "failed before its error handler"


def _kept(error: BaseException) -> dict[str, Any]:
    """What the step keeps of a node's failure for its retry (JSON): the error's type and message."""
    return {"kind": _FAILED, "type": type(error).__name__, "message": str(error)}


def _kept_failure(ctx: NodeContext | None) -> tuple[NodeContext | None, BaseException | None]:
    """The node call, and the failure its step kept from before (a retry after the handler failed): the error
    as the record holds it, a ``RuntimeError`` naming the original type."""
    kept = None if ctx is None else ctx.progress
    if isinstance(kept, dict) and kept.get("kind") == _FAILED:
        return ctx, RuntimeError(f"{kept['type']}: {kept['message']}")
    return ctx, None


class _HandlerSignature:
    __slots__ = ("error", "named")

    def __init__(self, error: tuple[str, ...], named: tuple[str, ...]) -> None:
        self.error, self.named = error, named


def _read_handler(fn: Callable[..., Any]) -> _HandlerSignature:
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return _HandlerSignature((), ())
    error = tuple(p.name for p in params if p.annotation in (NodeError, "NodeError"))
    named = tuple(p.name for p in params if p.name in ("config", "writer", "runtime") and p.name not in error)
    return _HandlerSignature(error, named)


_handler_signature: CodeCache[_HandlerSignature] = CodeCache(_read_handler)


def _handler_call(fn: Callable[..., Any], named: Callable[[str, NodeContext | None], Any]
                  ) -> Callable[[Any, NodeError, NodeContext | None], Any]:
    sig = _handler_signature(fn)

    def call(state: Any, error: NodeError, ctx: NodeContext | None) -> Any:
        kwargs = {name: error for name in sig.error}
        kwargs.update({name: named(name, ctx) for name in sig.named})
        return fn(state, **kwargs)

    return call
