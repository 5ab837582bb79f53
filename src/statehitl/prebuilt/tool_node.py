"""``ToolNode`` and ``tools_condition``: LangGraph's prebuilt node that runs the tool calls of the last AI message,
and the edge that routes to it.

The node runs every call of the last ``AIMessage`` in parallel (worker threads, each in a copy of the caller's
context, so ``get_config()`` and the run's stream reach the tools), and answers each with a ``ToolMessage``, in the
order of the calls. A call to an unknown tool is answered with an error message; a tool that raises is answered or
re-raised as ``handle_tool_errors`` says. ``approve_tools`` adds what LangGraph leaves to its users: the human
approves, edits or rejects each listed call before it runs (``statehitl.prebuilt.approvals``).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_core.tools import tool as as_tool
from pydantic import ValidationError

from statehitl.errors import GraphBubbleUp
from statehitl.graph.node_calls import current_node, get_runtime
from statehitl.position import NodeContext
from statehitl.prebuilt.approvals import Approvals, ApprovedCall, idempotency_key
from statehitl.prebuilt.injected import InjectedState, InjectedStore, injections_of
from statehitl.prebuilt.tool_calls import (
    AsyncToolCallWrapper,
    ToolCallRequest,
    ToolCallWithContext,
    ToolCallWrapper,
    ToolRuntime,
    no_writer,
)
from statehitl.prebuilt.tool_outputs import InputShape, combined, normalized

__all__ = ["INVALID_TOOL_NAME_ERROR_TEMPLATE", "TOOL_CALL_ERROR_TEMPLATE", "TOOL_INVOCATION_ERROR_TEMPLATE",
           "InjectedState", "InjectedStore", "ToolCallRequest", "ToolCallWithContext", "ToolInvocationError",
           "ToolNode", "ToolRuntime", "tools_condition"]

INVALID_TOOL_NAME_ERROR_TEMPLATE = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
TOOL_INVOCATION_ERROR_TEMPLATE = ("Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
                                  " {error}\n Please fix the error and try again.")

ErrorHandling = bool | str | Callable[..., str] | type[Exception] | tuple[type[Exception], ...] | None


class ToolInvocationError(ToolException):
    """The model called a tool with arguments its schema refuses (LangGraph's name)."""

    def __init__(self, tool_name: str, source: ValidationError, tool_kwargs: dict[str, Any],
                 filtered_errors: list[Any] | None = None) -> None:
        """``filtered_errors``: the errors the model can fix (those of injected arguments left out); None: all."""
        shown = source.errors() if filtered_errors is None else filtered_errors
        text = "\n".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'Unknown error')}"
                         for e in shown)
        self.message = TOOL_INVOCATION_ERROR_TEMPLATE.format(tool_name=tool_name, tool_kwargs=tool_kwargs, error=text)
        self.tool_name = tool_name
        self.tool_kwargs = tool_kwargs
        self.source = source
        self.filtered_errors = filtered_errors
        super().__init__(self.message)


class ToolNode:
    """A node that runs the tool calls of the last AI message (LangGraph's ``ToolNode``; tools are langchain-core
    tools or plain functions). ``handle_tool_errors``: None (the default) answers only arguments the tool refuses,
    re-raising anything else; True answers every error with its repr; a string is the answer; a callable makes it
    from the exception (for the exception types its first parameter names); exception types: only those.
    ``wrap_tool_call(request, execute)`` (``awrap_tool_call``, awaited) wraps each call that runs: it may change the
    request, run it as often as it likes, or answer without running it. ``approve_tools``: True or tool names whose
    calls wait for a human's ``Approve``/``Edit``/``Reject`` first (before any wrapper sees them); ``responders``:
    who may answer those."""

    def __init__(self, tools: Sequence[BaseTool | Callable[..., Any]], *, name: str = "tools",
                 tags: list[str] | None = None, handle_tool_errors: ErrorHandling = None,
                 messages_key: str = "messages", wrap_tool_call: ToolCallWrapper | None = None,
                 awrap_tool_call: AsyncToolCallWrapper | None = None, approve_tools: bool | Sequence[str] = False,
                 responders: list[str] | None = None) -> None:
        self.name = name
        self.tags = tags
        self.messages_key = messages_key
        self.handle_tool_errors = handle_tool_errors
        self.wrap_tool_call = wrap_tool_call
        self.awrap_tool_call = awrap_tool_call
        self.tools_by_name: dict[str, BaseTool] = {}
        for given in tools:
            made = given if isinstance(given, BaseTool) else as_tool(given)
            self.tools_by_name[made.name] = made
        self._injections = {name: injections_of(t) for name, t in self.tools_by_name.items()}
        self.approvals = Approvals.of(approve_tools, self.tools_by_name, responders)

    def __call__(self, input: Any, ctx: NodeContext, *, config: dict[str, Any], store: Any, runtime: Any) -> Any:
        """The node's handler in a graph: approvals first (which may stop the node), then the calls."""
        calls, shape = self._calls(input)
        approved = self.approvals.decide(calls, ctx)
        return self._answer(approved, shape, _state_of(input), config, run=_Run(ctx, store, runtime))

    def invoke(self, input: Any, config: dict[str, Any] | None = None, *, store: Any = None) -> Any:
        """Run the calls outside a graph (or inside a node of one): calls needing approval can only wait in a
        graph run, so here they are refused unless the node runs in one."""
        ctx = current_node()
        calls, shape = self._calls(input)
        approved = self.approvals.decide(calls, ctx)
        runtime = get_runtime() if ctx is not None else None
        return self._answer(approved, shape, _state_of(input), config or {}, run=_Run(ctx, store, runtime))

    async def ainvoke(self, input: Any, config: dict[str, Any] | None = None, *, store: Any = None) -> Any:
        """``invoke`` from async code: the calls run in worker threads (a coroutine tool on a loop of its own)."""
        context = contextvars.copy_context()
        return await asyncio.to_thread(context.run, functools.partial(self.invoke, input, config, store=store))

    def _calls(self, input: Any) -> tuple[list[ToolCall], InputShape]:
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [input["tool_call"]], "tool_calls"
        if isinstance(input, list):
            if input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
                return list(input), "tool_calls"
            messages, shape = input, "list"
        elif isinstance(input, dict):
            messages, shape = input.get(self.messages_key) or [], "dict"
        else:
            messages, shape = getattr(input, self.messages_key, None) or [], "dict"
        if not messages:
            raise ValueError(f"No message found in input (ToolNode reads {self.messages_key!r})")
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None:
            raise ValueError("No AIMessage found in input")
        return list(last.tool_calls), shape  # type: ignore[return-value]

    def _answer(self, approved: list[ApprovedCall], shape: InputShape, state: Any, config: dict[str, Any], *,
                run: _Run) -> Any:
        def one(call: ApprovedCall) -> Any:
            if call.refusal is not None:
                return call.refusal
            return self._run_one(call.call, shape, self._runtime(call.call, state, config, run))

        if len(approved) <= 1:
            outputs = [one(c) for c in approved]
        else:
            with ThreadPoolExecutor(max_workers=len(approved)) as pool:
                futures = [pool.submit(contextvars.copy_context().run, one, c) for c in approved]
                outputs = [f.result() for f in futures]
        return combined(outputs, shape, self.messages_key)

    def _runtime(self, call: ToolCall, state: Any, config: dict[str, Any], run: _Run) -> ToolRuntime[Any, Any]:
        given = run.runtime
        return ToolRuntime(state=state, context=getattr(given, "context", None), config=config,
                           stream_writer=getattr(given, "stream_writer", no_writer), tool_call_id=call["id"],
                           store=run.store if run.store is not None else getattr(given, "store", None),
                           tools=list(self.tools_by_name.values()),
                           execution_info=getattr(given, "execution_info", None),
                           server_info=getattr(given, "server_info", None),
                           idempotency_key=idempotency_key(run.ctx, call["id"] or ""))

    def _run_one(self, call: ToolCall, shape: InputShape, runtime: ToolRuntime[Any, Any]) -> Any:
        request = ToolCallRequest(tool_call=call, tool=self.tools_by_name.get(call["name"]), state=runtime.state,
                                  runtime=runtime)
        if self.wrap_tool_call is None and self.awrap_tool_call is None:
            return self._execute(request, shape)
        try:
            return self._wrapped(request, shape)
        except GraphBubbleUp:  # an interrupt, a parent Command, a drain: control flow, never a tool error
            raise
        except Exception as error:  # what the wrapper raised: answered as handle_tool_errors says
            if self.handle_tool_errors is False:
                raise
            return _error_message(self._error_content(error), call)

    def _wrapped(self, request: ToolCallRequest, shape: InputShape) -> Any:
        """The call through the wrapper (``wrap_tool_call``, else ``awrap_tool_call`` on a loop of its own)."""
        if self.wrap_tool_call is not None:
            return self.wrap_tool_call(request, lambda req: self._execute(req, shape))
        awrap = self.awrap_tool_call
        if awrap is None:
            return self._execute(request, shape)
        return _run_async(lambda: self._awrapped(awrap, request, shape))

    async def _awrapped(self, awrap: AsyncToolCallWrapper, request: ToolCallRequest, shape: InputShape) -> Any:
        async def execute(req: ToolCallRequest) -> Any:
            return self._execute(req, shape)

        return await awrap(request, execute)

    def _execute(self, request: ToolCallRequest, shape: InputShape) -> Any:
        """One run of a call as ``request`` has it: an unknown tool answered with an error, the injected arguments
        added (any the model set dropped), the tool's answer checked."""
        call, tool = request.tool_call, request.tool
        if tool is None:
            content = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(requested_tool=call["name"],
                                                             available_tools=", ".join(self.tools_by_name))
            return _error_message(content, call)
        injections = self._injections.get(call["name"]) or injections_of(tool)
        model_args = {k: v for k, v in call["args"].items() if k not in injections.hidden}
        args = {**model_args, **injections.values(request.state, request.runtime, self.messages_key)}
        given = {**call, "args": args, "type": "tool_call"}
        try:
            try:
                response = _invoke(tool, given, request.runtime.config)
            except ValidationError as error:
                shown = [e for e in error.errors() if not (e.get("loc") and e["loc"][0] in injections.hidden)]
                raise ToolInvocationError(call["name"], error, call["args"], shown) from error
            return normalized(response, call, shape, self.messages_key)
        except GraphBubbleUp:  # an interrupt, a parent Command, a drain: control flow, never a tool error
            raise
        except Exception as error:
            return _error_message(self._error_content(error), call)

    def _error_content(self, error: Exception) -> str:
        flag = self.handle_tool_errors
        if flag is None:
            if isinstance(error, ToolInvocationError):
                return error.message
            raise error
        if flag is False or not isinstance(error, _handled_types(flag)):
            raise error
        if isinstance(flag, str):
            return flag
        if callable(flag) and not isinstance(flag, type):
            return str(flag(error))
        return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(error))


@dataclass(frozen=True)
class _Run:
    """Where a node call runs: its node context (None outside a graph), the store and the node's runtime."""

    ctx: NodeContext | None
    store: Any
    runtime: Any


def _state_of(input: Any) -> Any:
    """The state a tool is given: a Send's carried state, else the node's input."""
    if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
        return input["state"]
    return input


def _error_message(content: str, call: ToolCall) -> ToolMessage:
    return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")


def _invoke(tool: BaseTool, given: dict[str, Any], config: dict[str, Any]) -> Any:
    """A tool with only a coroutine runs on a loop of its own."""
    if getattr(tool, "func", True) is None and getattr(tool, "coroutine", None) is not None:
        return _run_async(lambda: tool.ainvoke(given, config))  # type: ignore[arg-type]
    return tool.invoke(given, config)  # type: ignore[arg-type]


def _run_async(make: Callable[[], Any]) -> Any:
    """Run the coroutine ``make`` returns to its end from sync code: on a loop of its own in this thread, or, where
    this thread runs a loop already (a lone call run inline by an async run), in a worker thread (with this
    context, so the run's config and stream reach it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, lambda: asyncio.run(make())).result()


def _handled_types(flag: ErrorHandling) -> tuple[type[Exception], ...]:
    if isinstance(flag, type) and issubclass(flag, Exception):
        return (flag,)
    if isinstance(flag, tuple):
        return flag
    if callable(flag):
        params = list(inspect.signature(flag).parameters.values())
        hints = typing.get_type_hints(flag) if params else {}
        hint = hints.get(params[0].name) if params else None
        named = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, _UnionType) else (hint,)
        found = tuple(t for t in named if isinstance(t, type) and issubclass(t, Exception))
        return found or (Exception,)
    return (Exception,)


_UnionType = type(int | str)


def tools_condition(state: list[AnyMessage] | dict[str, Any] | Any,
                    messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """``"tools"`` when the last message is an AI message with tool calls, else the end (LangGraph's)."""
    if isinstance(state, list):
        messages = state
    elif isinstance(state, dict):
        messages = state.get(messages_key) or []
    else:
        messages = getattr(state, messages_key, None) or []
    if not messages:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    last = messages[-1]
    return "tools" if getattr(last, "tool_calls", None) else "__end__"
