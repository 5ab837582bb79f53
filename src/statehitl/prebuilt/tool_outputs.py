"""What a tool may return to ``ToolNode`` and what the node returns to the graph, by LangGraph's rules.

A tool answers its call with a ``ToolMessage`` (langchain-core makes one of any plain value), a ``Command`` (state
updates and a ``goto``, for this graph or, ``graph=Command.PARENT``, the graph above), or a list of those. Each call
must be answered by exactly one ``ToolMessage`` bound to its id (a Command to this graph carries it in its update),
else the model's history would hold a call with no answer. The node returns the messages as an update, or, once any
call returned a Command, a list mixing the Commands with message updates (the graph applies each);
parent Commands that only ``Send`` are merged into one.
"""

from __future__ import annotations

import json
from copy import deepcopy
from dataclasses import replace
from typing import Any, Literal

from langchain_core.messages import RemoveMessage, ToolCall, ToolMessage, convert_to_messages
from langchain_core.messages.tool import ToolOutputMixin

from statehitl.commands import Command, Send
from statehitl.graph.message import REMOVE_ALL_MESSAGES

InputShape = Literal["list", "dict", "tool_calls"]
"""How the node was given its calls: messages as the state, a state with a messages key, or the calls themselves."""


def _commands_answer_tools() -> None:
    """Make statehitl's ``Command`` a langchain-core ``ToolOutputMixin``, as LangGraph's is, so a tool's Command
    reaches the node as it was returned rather than as its text in a ``ToolMessage``. Done here, when the prebuilt
    tools are loaded, not where ``Command`` is defined: ``import statehitl`` never loads langchain-core."""
    if not issubclass(Command, ToolOutputMixin):
        Command.__bases__ = (*Command.__bases__, ToolOutputMixin)


_commands_answer_tools()

_BLOCK_TYPES = {"text", "image_url", "image", "json", "search_result", "custom_tool_call_output", "document", "file"}


def content_of(output: Any) -> Any:
    """A tool message's content: text and content blocks as they are, anything else as JSON (non-ASCII kept)."""
    if isinstance(output, str) or (isinstance(output, list) and all(
            isinstance(x, dict) and x.get("type") in _BLOCK_TYPES for x in output)):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


def normalized(response: Any, call: ToolCall, shape: InputShape, messages_key: str) -> Any:
    """The tool's answer, checked: a ToolMessage, a Command, or a list of those with one message bound to the
    call."""
    if isinstance(response, Command):
        return _command(response, call, shape, messages_key, need_answer=True)
    if isinstance(response, ToolMessage):
        response.content = content_of(response.content)
        return response
    if isinstance(response, list):
        if not all(isinstance(r, Command | ToolMessage) for r in response):
            raise TypeError(f"Tool {call['name']} returned a list with invalid element types: expected all Command "
                            "or ToolMessage")
        return _listed(response, call, shape, messages_key)
    raise TypeError(f"Tool {call['name']} returned unexpected type: {type(response)}")


def _answers(item: Any, call_id: str | None, messages_key: str) -> int:
    if isinstance(item, ToolMessage):
        return int(item.tool_call_id == call_id)
    if isinstance(item.update, dict):
        return sum(1 for m in item.update.get(messages_key, [])
                   if isinstance(m, ToolMessage) and m.tool_call_id == call_id)
    return 0


def _listed(response: list[Any], call: ToolCall, shape: InputShape, messages_key: str) -> list[Any]:
    count = sum(_answers(item, call["id"], messages_key) for item in response)
    if count != 1:
        raise ValueError(f"Tool {call['name']} returned a list with {count} messages bound to tool_call_id "
                         f"{call['id']!r}; expected exactly one terminating ToolMessage.")
    out: list[Any] = []
    for item in response:
        if isinstance(item, Command):
            out.append(_command(item, call, shape, messages_key, need_answer=False))
        else:
            item.content = content_of(item.content)
            out.append(item)
    return out


def _command(command: Command[Any], call: ToolCall, shape: InputShape, messages_key: str, *,
             need_answer: bool) -> Command[Any]:
    """A tool's Command, its messages made message objects, the answer to the call named after the tool."""
    if isinstance(command.update, dict):
        if shape not in ("dict", "tool_calls"):
            raise ValueError(f"Tools can provide a dict in Command.update only when using dict with '{messages_key}' "
                             f"key as ToolNode input, got: {command.update} for tool '{call['name']}'")
        command = deepcopy(command)
        update: dict[str, Any] = command.update
        messages = convert_to_messages(update.get(messages_key, []))
        if messages_key in update:
            update[messages_key] = messages
    elif isinstance(command.update, list):
        if shape != "list":
            raise ValueError("Tools can provide a list of messages in Command.update only when using list of "
                             f"messages as ToolNode input, got: {command.update} for tool '{call['name']}'")
        command = replace(command, update=convert_to_messages(command.update))
        messages = command.update
    else:
        return command
    if [(type(m), m.id) for m in messages] == [(RemoveMessage, REMOVE_ALL_MESSAGES)]:
        return command
    answered = False
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id == call["id"]:
            message.name = call["name"]
            answered = True
    if need_answer and command.graph is None and not answered:
        raise ValueError(f"Expected to have a matching ToolMessage in Command.update for tool '{call['name']}', "
                         f"got: {messages}. Every tool call (LLM requesting to call a tool) in the message history "
                         "MUST have a corresponding ToolMessage.")
    return command


def combined(outputs: list[Any], shape: InputShape, messages_key: str) -> Any:
    """The node's return: the messages as an update while no tool returned a Command; else each Command and each
    message as an update of its own, in the calls' order, with the parent Commands that only send merged."""
    flat: list[Any] = []
    for output in outputs:
        flat.extend(output if isinstance(output, list) else [output])
    if not any(isinstance(o, Command) for o in flat):
        return flat if shape == "list" else {messages_key: flat}
    out: list[Any] = []
    sends: list[Send] = []
    for output in flat:
        if isinstance(output, Command):
            goto = output.goto
            if output.graph == Command.PARENT and isinstance(goto, list) and all(isinstance(s, Send) for s in goto):
                sends.extend(goto)
            else:
                out.append(output)
        else:
            out.append([output] if shape == "list" else {messages_key: [output]})
    if sends:
        out.append(Command(graph=Command.PARENT, goto=sends))
    return out
