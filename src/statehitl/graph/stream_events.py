"""The checkpoints a streamed run shows (``stream_mode="checkpoints"``, and ``"debug"``), and the message
chunk of ``stream_mode="messages"``: LangGraph's shapes, derived from statehitl's records.

LangGraph shows a checkpoint as its loop reaches it: the input checkpoint before the input's ``values``
chunk, the checkpoint a run's first step runs on (or the one a resume or a replay goes on from) after it,
and each step's checkpoint after that step's ``values`` chunk, before the next step's tasks. statehitl's
records are fewer (``graph.history``): a run's first record also shows how the run began, and a record
that restates the checkpoint before it (a step that stopped on interrupts) is no new checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statehitl.checkpoint.records import CheckpointRecord
from statehitl.graph.history import BEFORE, View, ViewKey, parent_key, record_views
from statehitl.graph.snapshots import SnapshotReader

Put = Callable[..., None]
"""``put(mode, chunk, step=..., at=...)``: one chunk into the run's sink (``StreamSink.put`` at a namespace)."""


@dataclass(frozen=True)
class MessageChunk:
    """A piece of the text an agent's model streamed in a node (``stream_mode="messages"``): what LangGraph's
    ``AIMessageChunk`` is to a user reading ``.content``."""

    content: str
    type: str = "AIMessageChunk"


@dataclass
class RunOrigin:
    """Where a streamed run began, for the checkpoints it shows before its own: the state before its input
    (or the checkpoint it forks), the state its first step runs on, the record it follows (its number, the
    key it is shown under, its step and tasks: a record with the same step and tasks restates it), and the
    checkpoint it goes on from when it begins none of its own (a resume: ``current``)."""

    before: Any
    begin: Any
    parent: tuple[int, ViewKey, int, list[str]] | None
    current: View | None = None


class CheckpointEvents:
    """The checkpoints of one run as it writes them. How the run began (its input's and first step's
    checkpoints, or a replay's fork, which its first record will show: ``beginning``, that record as far as
    it is known before the run) goes out before any node runs, around the run's first ``values`` chunk
    (``before_values``, ``after_values``), as LangGraph sends them; then each checkpoint as it is written."""

    def __init__(self, reader: SnapshotReader, put: Put, origin: RunOrigin, beginning: CheckpointRecord | None
                 ) -> None:
        self.reader = reader
        self.put = put
        self.origin = origin
        self.beginning = beginning
        self.parent = origin.parent
        self._opening = [] if beginning is None else record_views(beginning, beginning, self._first_parent())[:-1]

    def _first_parent(self) -> ViewKey | None:
        assert self.beginning is not None
        return self.parent[1] if self.parent is not None else parent_key(self.beginning)

    def before_values(self) -> None:
        """The input checkpoint of a run that begins with one (LangGraph's step -1, before its input's values)."""
        while self._opening and self._opening[0].key.part == BEFORE:
            self._show(self._opening.pop(0), self.origin.before)

    def after_values(self) -> None:
        """The checkpoint the run's first step runs on: its first-step or fork checkpoint, or the checkpoint a
        resume goes on from."""
        for view in self._opening:
            self._show(view, self.origin.before if view.source == "fork" else self.origin.begin)
        self._opening = []
        if self.beginning is None and self.origin.current is not None:
            self._show(self.origin.current, self.origin.begin)

    def committed(self, record: CheckpointRecord, state: Any) -> None:
        """A checkpoint the run wrote (``state``: what it holds)."""
        parent, beginning = self.parent, self.beginning
        if parent is not None and record.start is None and record.parent_view is None and \
                record.parent_seq == parent[0] and record.step == parent[2] and record.pending == parent[3]:
            self.parent = (record.seq, parent[1], record.step, record.pending)  # it restates the one before
            return
        shown_parent = parent[1] if parent is not None and record.parent_seq == parent[0] else parent_key(record)
        views = record_views(record, record, shown_parent)
        if beginning is not None and record.start is not None:  # its beginning went out before the run
            start = record.start
            views = [] if record.step == start.step and record.pending == start.pending else views[-1:]
        for view in views:
            self._show(view, state)
        self.parent = (record.seq, ViewKey(record.seq), record.step, record.pending)

    def _show(self, view: View, state: Any) -> None:
        reader = self.reader
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
        self.put("checkpoints", payload, step=view.step, at=view.created_at)
