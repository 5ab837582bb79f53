"""The LangChain half of ``stream_mode="messages"``: a callback handler that hands a chat model's token chunks
to the run's message stream, and the LangChain config a node runs under so that any chat model it calls
(``model.invoke(...)``, ``await model.ainvoke(...)``, ``model.stream(...)``) finds that handler. Imported only
when such a stream is asked for and langchain-core is installed.

A handler with ``tap_output_iter``/``tap_output_aiter`` is what LangChain takes for a streaming handler: a chat
model called with ``invoke`` then streams underneath, as under LangGraph, so its tokens arrive as they come.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.runnables.config import RunnableConfig, var_child_runnable_config

from statehitl.graph.node_guards import touch

T = TypeVar("T")

class MessageStream(Protocol):
    """Where the handler sends messages (``message_stream.MessageStream``)."""

    def emit(self, message: Any, metadata: dict[str, Any], namespace: tuple[str, ...], *, dedupe: bool = False
             ) -> None: ...


_NO_STREAM = frozenset({"nostream", "langsmith:nostream"})
"""Tags that keep a chat model's tokens out of the stream, as LangGraph reads them."""


class ChatModelTokens(BaseCallbackHandler):
    """Hands the tokens of each chat model run in one node call to ``stream``, with the run's metadata (the node's,
    and what the model adds: ``ls_provider``...); a model that did not stream gives its whole message at its end."""

    run_inline = True
    """Called where the model runs, in order, not on an executor."""

    def __init__(self, stream: MessageStream, namespace: tuple[str, ...]) -> None:
        self.stream = stream
        self.namespace = namespace
        self.runs: dict[UUID, dict[str, Any]] = {}

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[T]) -> AsyncIterator[T]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[T]) -> Iterator[T]:
        return output

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID,
                            tags: list[str] | None = None, metadata: dict[str, Any] | None = None,
                            **kwargs: Any) -> None:
        if not _NO_STREAM & set(tags or ()):
            user_tags = [tag for tag in tags or () if not tag.startswith("seq:step")]  # LangGraph's own dropped
            self.runs[run_id] = {**(metadata or {}), **({"tags": user_tags} if user_tags else {})}

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], *,
                         chunk: GenerationChunk | ChatGenerationChunk | None = None, run_id: UUID,
                         parent_run_id: UUID | None = None, tags: list[str] | None = None, **kwargs: Any) -> None:
        touch()  # a token is progress for the node's idle_timeout (refresh_on="auto"), as LangGraph counts it
        metadata = self.runs.get(run_id)
        if metadata is not None and isinstance(chunk, ChatGenerationChunk):
            self.stream.emit(chunk.message, metadata, self.namespace)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        metadata = self.runs.pop(run_id, None)
        if metadata is None or not response.generations or not response.generations[0]:
            return
        generation = response.generations[0][0]
        if isinstance(generation, ChatGeneration):
            self.stream.emit(generation.message, metadata, self.namespace, dedupe=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.runs.pop(run_id, None)


@contextlib.contextmanager
def node_context(config: dict[str, Any], stream: MessageStream, namespace: tuple[str, ...]) -> Iterator[None]:
    """Run a node call under a LangChain config whose callbacks include the stream's handler (and the caller's own
    callbacks, when its config lists some), and whose metadata is the node's."""
    own = config.get("callbacks")
    tokens = ChatModelTokens(stream, namespace)
    handlers: Any = [tokens, *(own if isinstance(own, list) else ())]
    if isinstance(own, BaseCallbackManager):  # the graph's run's child manager (a call with callbacks)
        handlers = own.copy()
        handlers.add_handler(tokens, inherit=True)
    token = var_child_runnable_config.set(cast(RunnableConfig, {**config, "callbacks": handlers}))
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def _ignored(value: Any) -> None:
    return None


@contextlib.contextmanager
def muted() -> Iterator[Callable[[Any], None]]:
    """Run a node call of a subgraph whose messages are not streamed (no ``subgraphs=True``) under its caller's
    LangChain config without the stream's handlers: the chat models it calls would otherwise be sent as the
    calling node's, where LangGraph sends nothing. Yields what takes its return (nothing to send)."""
    config = var_child_runnable_config.get() or {}
    callbacks = config.get("callbacks")
    handlers: list[Any] = callbacks.handlers if isinstance(callbacks, BaseCallbackManager) else \
        callbacks if isinstance(callbacks, list) else []
    ours = [h for h in handlers if isinstance(h, ChatModelTokens)]
    if not ours:
        yield _ignored
        return
    kept: Any = [handler for handler in handlers if not isinstance(handler, ChatModelTokens)]
    if isinstance(callbacks, BaseCallbackManager):  # (a call with callbacks: its run's manager, without ours)
        kept = callbacks.copy()
        for handler in ours:
            kept.remove_handler(handler)
    token = var_child_runnable_config.set(cast(RunnableConfig, {**config, "callbacks": kept}))
    try:
        yield _ignored
    finally:
        var_child_runnable_config.reset(token)


def streams_of() -> Iterator[tuple[MessageStream, tuple[str, ...]]]:
    """The message streams the running node call reaches (none unless its run streams ``"messages"``), each with
    the namespace it sends under: for ``push_message``, which sends without a chat model."""
    config = var_child_runnable_config.get() or {}
    callbacks = config.get("callbacks")  # the node's list, or, inside a tool or a chain it runs, their manager
    handlers = callbacks.handlers if isinstance(callbacks, BaseCallbackManager) else callbacks
    for handler in handlers if isinstance(handlers, list) else ():
        if isinstance(handler, ChatModelTokens):
            yield handler.stream, handler.namespace
