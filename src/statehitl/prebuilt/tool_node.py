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
import inspect
import typing
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from pydantic import ValidationError

from statehitl.errors import GraphInterrupt, ParentCommand
from statehitl.graph.node_calls import current_node
from statehitl.position import NodeContext
from statehitl.prebuilt.approvals import Approvals, ApprovedCall, idempotency_key
from statehitl.prebuilt.injected import Injections, injections_of

__all__ = ["ToolNode", "tools_condition"]

INVALID_TOOL = "Error: {name} is not a valid tool, try one of [{names}]."
TOOL_CALL_ERROR = "Error: {error}\n Please fix your mistakes."
INVOCATION_ERROR = ("Error invoking tool '{name}' with kwargs {args} with error:\n {error}\n"
                    " Please fix the error and try again.")

ErrorHandling = bool | str | Callable[..., str] | type[Exception] | tuple[type[Exception], ...] | None


class ToolInvocationError(Exception):
    """The model called a tool with arguments its schema refuses (LangGraph's name)."""

    def __init__(self, name: str, args: dict[str, Any], error: ValidationError, hidden: set[str]) -> None:
        shown = [e for e in error.errors() if not (e.get("loc") and e["loc"][0] in hidden)]
        text = "\n".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'Unknown error')}"
                         for e in shown)
        self.message = INVOCATION_ERROR.format(name=name, args=args, error=text)
        self.tool_name = name
        self.tool_kwargs = args
        super().__init__(self.message)


class ToolNode:
    """A node that runs the tool calls of the last AI message (LangGraph's ``ToolNode``; tools are langchain-core
    tools or plain functions). ``handle_tool_errors``: None (the default) answers only arguments the tool refuses,
    re-raising anything else; True answers every error with its repr; a string is the answer; a callable makes it
    from the exception (for the exception types its first parameter names); exception types: only those.
    ``approve_tools``: True or tool names whose calls wait for a human's ``Approve``/``Edit``/``Reject`` first;
    ``responders``: who may answer those."""

    def __init__(self, tools: Sequence[BaseTool | Callable[..., Any]], *, name: str = "tools",
                 tags: list[str] | None = None, handle_tool_errors: ErrorHandling = None,
                 messages_key: str = "messages", approve_tools: bool | Sequence[str] = False,
                 responders: list[str] | None = None) -> None:
        self.name = name
        self.tags = tags
        self.messages_key = messages_key
        self.handle_tool_errors = handle_tool_errors
        self.tools_by_name: dict[str, BaseTool] = {}
        for given in tools:
            made = given if isinstance(given, BaseTool) else as_tool(given)
            self.tools_by_name[made.name] = made
        self._injections = {name: injections_of(t) for name, t in self.tools_by_name.items()}
        self.approvals = Approvals.of(approve_tools, self.tools_by_name, responders)

    def __call__(self, input: Any, ctx: NodeContext, config: dict[str, Any], store: Any) -> Any:
        """The node's handler in a graph: approvals first (which may stop the node), then the calls."""
        calls, shape = self._calls(input)
        approved = self.approvals.decide(calls, ctx)
        return self._answer(approved, shape, input, config, store=store, ctx=ctx)

    def invoke(self, input: Any, config: dict[str, Any] | None = None, *, store: Any = None) -> Any:
        """Run the calls outside a graph (or inside a node of one): calls needing approval can only wait in a
        graph run, so here they are refused unless the node runs in one."""
        ctx = current_node()
        calls, shape = self._calls(input)
        approved = self.approvals.decide(calls, ctx)
        return self._answer(approved, shape, input, config or {}, store=store, ctx=ctx)

    def _calls(self, input: Any) -> tuple[list[ToolCall], Literal["list", "dict"]]:
        if isinstance(input, list):
            if input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
                return list(input), "list"
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

    def _answer(self, approved: list[ApprovedCall], shape: str, state: Any, config: dict[str, Any], *, store: Any,
                ctx: NodeContext | None) -> Any:
        def one(call: ApprovedCall) -> ToolMessage:
            if call.refusal is not None:
                return call.refusal
            return self._run_one(call.call, state, config, store, idempotency_key(ctx, call.call["id"] or ""))

        if len(approved) <= 1:
            messages = [one(c) for c in approved]
        else:
            with ThreadPoolExecutor(max_workers=len(approved)) as pool:
                futures = [pool.submit(contextvars.copy_context().run, one, c) for c in approved]
                messages = [f.result() for f in futures]
        return {self.messages_key: messages} if shape == "dict" else messages

    def _run_one(self, call: ToolCall, state: Any, config: dict[str, Any], store: Any, key: str) -> ToolMessage:
        tool = self.tools_by_name.get(call["name"])
        if tool is None:
            content = INVALID_TOOL.format(name=call["name"], names=", ".join(self.tools_by_name))
            return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")
        injections: Injections = self._injections[call["name"]]
        args = {**call["args"], **injections.values(state, store, key)}
        given = {**call, "args": args, "type": "tool_call"}
        try:
            try:
                return _as_message(_invoke(tool, given, config), call)
            except ValidationError as error:
                hidden = set(injections.state) | set(injections.store) | set(injections.idempotency_key)
                raise ToolInvocationError(call["name"], call["args"], error, hidden) from error
        except (GraphInterrupt, ParentCommand):
            raise
        except Exception as error:
            content = self._error_content(error)
            return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

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
        return TOOL_CALL_ERROR.format(error=repr(error))


def _invoke(tool: BaseTool, given: dict[str, Any], config: dict[str, Any]) -> Any:
    """A tool with only a coroutine runs on its own loop in this worker thread."""
    if getattr(tool, "func", True) is None and getattr(tool, "coroutine", None) is not None:
        return asyncio.run(tool.ainvoke(given, config))  # type: ignore[arg-type]
    return tool.invoke(given, config)  # type: ignore[arg-type]


def _as_message(result: Any, call: ToolCall) -> ToolMessage:
    """langchain-core makes a ToolMessage of whatever a tool called with a tool call returns, except an output that
    speaks for itself (``ToolOutputMixin``, e.g. LangGraph's ``Command``), which this node does not apply."""
    if isinstance(result, ToolMessage):
        return result
    raise TypeError(f"tool {call['name']!r} returned a {type(result).__name__}, not a message: statehitl's ToolNode "
                    "answers each call with a ToolMessage (a tool returning a Command is not supported)")


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
