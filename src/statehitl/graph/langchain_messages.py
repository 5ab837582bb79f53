"""LangChain's messages, for a state's message channels: imported only where langchain-core is installed
(the ``statehitl[langchain]`` extra), never by ``import statehitl``.

Messages are stored in langchain-core's own dict form (``message_to_dict``: ``{"type": ..., "data": ...}``)
and read back with ``messages_from_dict``, which builds only its fixed set of message classes (human, ai,
system, chat, function, tool, remove and their chunks) and refuses any other type: loading a checkpoint
never constructs a class because the data names it.

Elsewhere a value may be (a ``Send``'s argument, an ``Any`` channel, an answer) a message is stored as the model it
is: the message classes are registered (``statehitl.values.register``), the closed table a tagged value is read back
by, so LangGraph's ``Send("tools", {"state": {"messages": [...]}})`` is stored as it is there.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    BaseMessageChunk,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    message_chunk_to_message,
    message_to_dict,
    messages_from_dict,
)

from statehitl.values import register

for _message_class in (AIMessage, ChatMessage, FunctionMessage, HumanMessage, RemoveMessage, SystemMessage,
                       ToolMessage):
    register(_message_class)


def is_message(value: Any) -> bool:
    return isinstance(value, BaseMessage)


def is_remove(value: Any) -> bool:
    return isinstance(value, RemoveMessage)


def remove(message_id: str) -> Any:
    return RemoveMessage(id=message_id)


def loaded(stored: dict[str, Any]) -> Any:
    """The message a stored ``{"type": ..., "data": ...}`` holds (``ValueError`` for a type outside the set)."""
    return messages_from_dict([stored])[0]


def dumped(message: Any) -> dict[str, Any]:
    """A message in langchain-core's dict form."""
    return message_to_dict(message)


def coerce(given: Any) -> Any:
    """A message as add_messages holds it: a LangChain message (a chunk made whole), from a message, a role/content
    dict, a ``(role, content)`` pair or a text, as LangGraph's ``add_messages`` converts them."""
    if isinstance(given, BaseMessageChunk):
        return message_chunk_to_message(given)
    if isinstance(given, BaseMessage):
        return given
    (message,) = convert_to_messages([given])
    return message_chunk_to_message(message) if isinstance(message, BaseMessageChunk) else message


def openai_format(messages: list[Any]) -> list[Any]:
    """``add_messages(format="langchain-openai")``: the messages with their content in OpenAI's format."""
    return list(convert_to_messages(convert_to_openai_messages(messages)))
