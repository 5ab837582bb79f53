"""What ``stream()`` yields besides updates and values: LangGraph's task, checkpoint, debug and message chunks,
and the sender that keeps every chunk in order when sync nodes send them from worker threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from statehitl.checkpoint.records import CheckpointRecord
from statehitl.event_stream import Emit
from statehitl.graph.graph_state import GraphState
from statehitl.graph.history import BEFORE, View, ViewKey, parent_key, record_views
from statehitl.graph.node_calls import current_node
from statehitl.graph.snapshots import SnapshotReader

__all__ = ["STREAM_MODES", "MessageChunk", "RunOrigin", "Send", "StreamMode", "checkpoint_events",
           "message_events", "ordered_sender", "task_events"]

StreamMode = Literal["updates", "values", "custom", "tasks", "checkpoints", "debug", "messages"]
STREAM_MODES = ("updates", "values", "custom", "tasks", "checkpoints", "debug", "messages")
Send = Callable[..., None]
"""``send(mode, chunk, namespace=())``: one chunk to the reader, if it asked for ``mode``."""


@dataclass(frozen=True)
class MessageChunk:
    """A piece of the text an agent's model streamed in a node (``stream_mode="messages"``): what LangGraph's
    ``AIMessageChunk`` is to a user reading ``.content``."""

    content: str
    type: str = "AIMessageChunk"


def ordered_sender(emit: Emit, modes: Sequence[str], paired: bool, subgraphs: bool) -> Send:
    """The ``send`` of one streamed run, called on the run's loop. A chunk from a sync node in a worker thread
    goes through the loop, and so does any chunk sent while such chunks wait there, so the reader gets them in
    the order they were sent. ``paired``: chunks are ``(mode, chunk)``; ``subgraphs``: prefixed with their
    namespace."""
    loop, home = asyncio.get_running_loop(), threading.get_ident()
    queued, lock = [0], threading.Lock()

    def deliver(item: Any) -> None:
        with lock:
            queued[0] -= 1
        emit(item)

    def send(mode: str, chunk: Any, namespace: tuple[str, ...] = ()) -> None:
        if mode not in modes:
            return
        item = (mode, chunk) if paired else chunk
        item = (namespace, *item) if subgraphs and paired else (namespace, item) if subgraphs else item
        if threading.get_ident() == home and not queued[0]:
            emit(item)
            return
        with lock:
            queued[0] += 1
        if threading.get_ident() == home:
            loop.call_soon(deliver, item)
        else:
            loop.call_soon_threadsafe(deliver, item)

    return send


def task_events(schema: GraphState, send: Send) -> Callable[[str, int, dict[str, Any]], None]:
    """Where the nodes' task events go: ``stream_mode="tasks"`` and ``"debug"``."""

    def task_event(kind: str, step: int, payload: dict[str, Any]) -> None:
        if payload.get("result"):
            payload = {**payload, "result": schema.shown_update(payload["name"], payload["result"]) or {}}
        send("tasks", payload)
        send("debug", {"step": step, "timestamp": datetime.now(UTC).isoformat(), "type": kind, "payload": payload})

    return task_event


def message_events(send: Send) -> Callable[[str], None]:
    """Where the text of an agent running in a node goes: ``stream_mode="messages"``, as LangGraph's
    ``(message chunk, metadata)`` pairs."""

    def message_event(text: str) -> None:
        node = current_node()
        where = {} if node is None else {"langgraph_node": node.node.partition(":")[0],
                                         "langgraph_step": node.step + 1, "thread_id": node.thread_id}
        send("messages", (MessageChunk(text), where))

    return message_event


@dataclass
class RunOrigin:
    """Where a streamed run began, for the checkpoints it shows before its own: the state before its input
    (or the checkpoint it forks), the state its first step runs on, and the record it follows (its number,
    the key it is shown under, its step and tasks: a record with the same step and tasks restates it)."""

    before: Any
    begin: Any
    parent: tuple[int, ViewKey, int, list[str]] | None


def checkpoint_events(reader: SnapshotReader, send: Send, origin: RunOrigin, beginning: CheckpointRecord | None
                      ) -> Callable[[CheckpointRecord, Any], None]:
    """Where the run's checkpoints go: ``stream_mode="checkpoints"`` and ``"debug"``. How the run began (its
    input's and first step's checkpoints, or a replay's fork, which its first record will show: ``beginning``,
    that record as far as it is known before the run) goes out at once, before any node runs, as LangGraph
    sends them; then each checkpoint as it is written. A record that restates the checkpoint before it (a
    step that stopped on interrupts) is no new checkpoint, as in LangGraph."""
    parent = origin.parent
    if beginning is not None:
        shown_parent = parent[1] if parent is not None else parent_key(beginning)
        for view in record_views(beginning, beginning, shown_parent)[:-1]:
            shown = origin.before if view.key.part == BEFORE or view.source == "fork" else origin.begin
            _send_checkpoint(reader, send, view, shown)

    def checkpoint_event(record: CheckpointRecord, state: Any) -> None:
        nonlocal parent
        if parent is not None and record.start is None and record.parent_view is None and \
                record.parent_seq == parent[0] and record.step == parent[2] and record.pending == parent[3]:
            parent = (record.seq, parent[1], record.step, record.pending)
            return
        shown_parent = parent[1] if parent is not None and record.parent_seq == parent[0] else parent_key(record)
        views = record_views(record, record, shown_parent)
        if beginning is not None and record.start is not None:  # its beginning went out before the run
            start = record.start
            views = [] if record.step == start.step and record.pending == start.pending else views[-1:]
        for view in views:
            _send_checkpoint(reader, send, view, state)
        parent = (record.seq, ViewKey(record.seq), record.step, record.pending)

    return checkpoint_event


def _send_checkpoint(reader: SnapshotReader, send: Send, view: View, state: Any) -> None:
    snapshot = reader.snapshot(view, state)
    payload = {
        "config": snapshot.config,
        "parent_config": snapshot.parent_config,
        "values": reader.shown_values(state, view.pending, view.completed),  # a dict, for a pydantic state too
        "metadata": snapshot.metadata,
        "next": list(snapshot.next),
        "tasks": [{"id": t.id, "name": t.name, "interrupts": t.interrupts, "state": t.state}
                  for t in snapshot.tasks if t.result is None],
    }
    send("checkpoints", payload)
    send("debug", {"step": view.step, "timestamp": datetime.fromtimestamp(view.created_at, UTC).isoformat(),
                   "type": "checkpoint", "payload": payload})
