"""``stream_mode="messages"`` for LangChain chat models, as LangGraph streams them: the token chunks of every
chat model a node calls, and the messages a node returns that were not streamed already (each message once,
by id), as ``(message, metadata)`` pairs whose metadata says which node and step.

Messages the node was given are known already and never sent again. Chat models are found through
LangChain's own config context (``langchain_stream``), so this only runs where langchain-core is installed;
a subgraph's messages are sent only with ``subgraphs=True``, under its namespace, as LangGraph does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel

from statehitl.commands import Command
from statehitl.graph.message_forms import langchain


def _values(found: Any) -> list[Any]:
    """The top-level values of a state or update (a dict, a pydantic model, a dataclass)."""
    if isinstance(found, dict):
        return list(found.values())
    if isinstance(found, BaseModel):
        return [getattr(found, name) for name in type(found).model_fields]
    if dataclasses.is_dataclass(found) and not isinstance(found, type):
        return [getattr(found, f.name) for f in dataclasses.fields(found)]
    return []


def _messages_in(found: Any, is_message: Callable[[Any], bool]) -> Iterator[Any]:
    """The messages among a value's top-level values and their lists; a Command's update's; a list of Commands'."""
    if isinstance(found, Command):
        yield from _messages_in(found.update, is_message)
        return
    if isinstance(found, list) and any(isinstance(v, Command) for v in found):
        for value in found:
            yield from _messages_in(value, is_message)
        return
    for value in [found] if is_message(found) else _values(found):
        if is_message(value):
            yield value
        elif isinstance(value, list | tuple):
            yield from (item for item in value if is_message(item))


class MessageStream:
    """One streamed run's messages: ``send("messages", (message, metadata), namespace)`` for each."""

    def __init__(self, send: Callable[..., None], is_message: Callable[[Any], bool]) -> None:
        self.send = send
        self.is_message = is_message
        self.seen: set[str] = set()
        self._lock = threading.Lock()

    def emit(self, message: Any, metadata: dict[str, Any], namespace: tuple[str, ...], *, dedupe: bool = False
             ) -> None:
        with self._lock:
            if dedupe and message.id in self.seen:
                return
            if message.id is None:
                message.id = str(uuid.uuid4())  # in place: the state then holds the id the reader saw
            self.seen.add(message.id)
        self.send("messages", (message, metadata), namespace)

    @contextlib.contextmanager
    def node(self, config: dict[str, Any], given: Any, namespace: tuple[str, ...]
             ) -> Iterator[Callable[[Any], None]]:
        """Around one node call: what it was given counts as seen, the chat models it calls stream here, and
        the function yielded takes what it returned (its messages not streamed yet are sent whole)."""
        from statehitl.graph.langchain_stream import node_context

        self.given(given)
        # LangGraph tags the runs of a streamed graph as its own (a chat model's metadata overrides it)
        metadata = {"ls_integration": "langgraph", **(config.get("metadata") or {})}
        config = {**config, "metadata": metadata}
        with node_context(config, self, namespace):
            yield lambda value: self.returned(value, metadata, namespace)

    def given(self, value: Any) -> None:
        """The messages a node was given are known: never sent again."""
        with self._lock:
            self.seen.update(m.id for m in _messages_in(value, self.is_message) if m.id is not None)

    def returned(self, value: Any, metadata: dict[str, Any], namespace: tuple[str, ...]) -> None:
        """Send the messages a node returned that were not sent yet."""
        for message in _messages_in(value, self.is_message):
            self.emit(message, metadata, namespace, dedupe=True)


def message_stream(send: Callable[..., None]) -> MessageStream | None:
    """The message stream of a run that streams ``"messages"``; None without langchain-core (plain dict messages
    are not streamed, as LangGraph streams only LangChain's)."""
    bridge = langchain()
    return None if bridge is None else MessageStream(send, bridge.is_message)
