"""LangGraph's ``langgraph.graph.message``: ``add_messages``, ``MessagesState``, ``RemoveMessage`` and
``REMOVE_ALL_MESSAGES``.

A channel annotated ``Annotated[list, add_messages]`` holds a conversation: each write appends its messages,
except that a message with the id of one already held replaces it, and a ``RemoveMessage(id=...)`` removes
one (``REMOVE_ALL_MESSAGES`` as the id: all before it). Every message gets an id. With langchain-core
installed (``statehitl[langchain]``) messages are LangChain's, converted as LangGraph converts them (a
``{"role": "user", ...}`` dict becomes a ``HumanMessage``); without it they are plain dicts with ``role``,
``content`` and ``id``. Either way they are stored as JSON (``message_forms``), never pickled. ``push_message``
(``message_push``) hands a message to the stream and the channel before the node returns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict  # pydantic (a tool's InjectedState schema) needs it before 3.12

from statehitl.graph.message_forms import (
    REMOVE_ALL_MESSAGES,
    RemoveMessage,
    coerce_all,
    id_of,
    is_remove,
    langchain,
    needs_langchain,
)
from statehitl.graph.message_push import push_message

__all__ = ["REMOVE_ALL_MESSAGES", "MessagesState", "RemoveMessage", "add_messages", "push_message"]

Messages = Any
"""What a message channel takes: one message or a list of them (messages, role/content dicts, pairs, texts)."""

Format = Literal["langchain-openai"] | None


def _merged(left: Messages, right: Messages, format: Format) -> list[Any]:
    held, written = coerce_all(left), coerce_all(right)
    clear = [at for at, message in enumerate(written) if is_remove(message) and id_of(message) == REMOVE_ALL_MESSAGES]
    if clear:
        return written[clear[-1] + 1:]
    merged = list(held)
    where = {id_of(m): at for at, m in enumerate(merged)}
    removed: set[str | None] = set()
    for message in written:
        at = where.get(id_of(message))
        if is_remove(message):
            if at is None:
                raise ValueError("Attempting to delete a message with an ID that doesn't exist: "
                                 f"RemoveMessage(id={id_of(message)!r}) names none the channel holds")
            removed.add(id_of(message))
        elif at is not None:
            removed.discard(id_of(message))
            merged[at] = message
        else:
            where[id_of(message)] = len(merged)
            merged.append(message)
    kept = [m for m in merged if id_of(m) not in removed]
    return _formatted(kept, format)


def _formatted(messages: list[Any], format: Format) -> list[Any]:
    if format is None:
        return messages
    if format != "langchain-openai":
        raise ValueError(f"add_messages(format={format!r}): the formats are 'langchain-openai' and None")
    bridge = langchain()
    if bridge is None:
        raise ImportError(needs_langchain("add_messages(format='langchain-openai')"))
    return list(bridge.openai_format(messages))


def _reducer(format: Format) -> Callable[[Messages, Messages], list[Any]]:
    def merge(left: Messages, right: Messages) -> list[Any]:
        return _merged(left, right, format)

    merge.merges_messages = True  # type: ignore[attr-defined]  # what marks a message channel (message_forms)
    merge.__name__ = merge.__qualname__ = "add_messages"
    return merge


@functools.cache
def _format_reducer(format: Format) -> Callable[[Messages, Messages], list[Any]]:
    return _reducer(format)


def add_messages(left: Messages = None, right: Messages = None, *, format: Format = None) -> Any:
    """Merge ``right`` into ``left`` by message id: new messages are appended, one with a held id replaces it,
    ``RemoveMessage(id=...)`` removes it (an id no message has is a ``ValueError``). Messages without an id get
    one. ``add_messages(format="langchain-openai")`` (no messages) is the reducer that also puts their content
    in OpenAI's format (needs langchain-core)."""
    if left is not None and right is not None:
        return _merged(left, right, format)
    if left is not None or right is not None:
        given = "left" if left is not None else "right"
        raise ValueError(f"add_messages needs both left and right messages, got only {given}")
    return _format_reducer(format)


add_messages.merges_messages = True  # type: ignore[attr-defined]


class MessagesState(TypedDict):
    """A state with one channel, ``messages``, merged by ``add_messages``; subclass it to add channels."""

    messages: Annotated[list[Any], add_messages]
