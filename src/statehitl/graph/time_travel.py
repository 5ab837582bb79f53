"""One thread's checkpoints for one compiled graph: reading any of them, their states, and where a run from
one of them (a replay, a fork, new input on a past checkpoint) begins.

``graph.history`` says which checkpoints the records show; this reads the records it needs (each once per
call), loads the states (a derived checkpoint's from its parent's, LangGraph's input checkpoint being the
state before the run's input), and builds the position a run from a past checkpoint starts at: a branch of
its own (``RunStart(kind="fork")``), whose interrupts are asked afresh.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from pydantic import ValidationError

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.record_parts import RunStart
from statehitl.checkpoint.records import CheckpointRecord, StoredCheckpoint
from statehitl.checkpoint.step_writes import resolve_writes
from statehitl.errors import CheckpointNotFoundError
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.history import (
    BEFORE,
    MAIN,
    PART_NAMES,
    View,
    ViewKey,
    history_views,
    parent_key,
    record_views,
    restates,
    shown_key,
    view_at,
)
from statehitl.graph.state_kinds import ROOT
from statehitl.machine import Machine
from statehitl.position import Position
from statehitl.run_start import start_position
from statehitl.supersteps import plan_start, schedule_of, stored_schedule


class ThreadViews:
    """Reads the checkpoints of ``thread`` on ``checkpointer`` for the graph ``machine`` whose state is
    ``schema``."""

    def __init__(self, checkpointer: Checkpointer, machine: Machine, schema: StateGraphSchema, thread: str) -> None:
        self.checkpointer = checkpointer
        self.machine = machine
        self.schema = schema
        self.thread = thread
        self._records: dict[int, CheckpointRecord | None] = {}
        self._shapes: dict[int, CheckpointRecord | None] = {}
        self._head: CheckpointRecord | None = None
        """The thread's newest record, whole, once a call read it: its branch's records are cut from it."""
        self._head_stored: StoredCheckpoint | None = None

    async def read(self, seq: int) -> CheckpointRecord | None:
        """Checkpoint ``seq`` whole, or None where the number is a claim's (or nothing's). A record on the
        branch of the current checkpoint (``at``/``newest`` read it) is cut from its channels, which only grew
        since (``_from_head``); any other is rebuilt from its chain."""
        if seq not in self._records:
            found = await self._from_head(seq)
            if found is None:
                try:
                    found = await self.checkpointer.checkpoint_record(self.thread, seq)
                except CheckpointNotFoundError:
                    found = None
            self._records[seq] = found
        return self._records[seq]

    async def _from_head(self, seq: int) -> CheckpointRecord | None:
        """Checkpoint ``seq`` whole without its chain, when it is an ancestor of the current checkpoint and no
        record after it, up to the current one, restarted an append-only channel: each such channel is then a
        prefix of the current one, and the record holds its other channels whole. None when that does not hold."""
        head = self._head
        if head is None or seq >= head.seq:
            return None
        restarted: set[str] = set()
        walk: CheckpointRecord | None = head
        while walk is not None and walk.seq > seq and walk.parent_seq is not None:
            stored = walk if walk is not head else await self._stored_head(head)  # the head is held whole
            if isinstance(stored, StoredCheckpoint) and stored.base_seq is not None:
                # a piece from item 0 on a record with a base: the channel was replaced there (an Overwrite), or
                # its base held no items; either way it is not known to extend what the older record holds
                restarted |= {c for c, piece in stored.appends.items() if piece.start == 0}
            walk = await self.shape(walk.parent_seq)
        if walk is None or walk.seq != seq or not isinstance(walk, StoredCheckpoint):
            return None
        if restarted & set(walk.appends):
            return None  # a channel was restarted on the way: it is not a prefix of the current one any more
        values = dict(walk.values)
        for channel, piece in walk.appends.items():
            current = head.values.get(channel)
            if not isinstance(current, list):
                return None
            values[channel] = current[:piece.start + len(piece.items)]
        fields = {name: getattr(walk, name) for name in CheckpointRecord.model_fields}
        fields["values"] = values
        fields["writes"] = resolve_writes(walk.writes, values, walk.value_writes)
        return CheckpointRecord.model_construct(**fields)

    async def _stored_head(self, head: CheckpointRecord) -> CheckpointRecord:
        """The current checkpoint as stored (its pieces say whether its step replaced a channel), read once."""
        if isinstance(head, StoredCheckpoint):
            return head
        if self._head_stored is None or self._head_stored.seq != head.seq:
            self._head_stored = await self.checkpointer.stored(self.thread, head.seq)
        return self._head_stored or head

    async def newest(self, head: Head) -> AsyncGenerator[View, None]:
        """The thread's checkpoints, newest first, read record by record from its newest down (every branch, as
        ``history``), so that a page of them costs the records it shows, not the thread's length."""
        self._head = head.record
        self._records[head.record.seq] = head.record
        waiting: dict[int, CheckpointRecord] = {}  # a record restated by newer ones -> the newest of those
        followed: set[ViewKey] = set()  # the checkpoints a newer record follows
        for seq in range(head.record.seq, -1, -1):
            record = await self.shape(seq)
            if record is None:
                continue  # a claim's number
            if (own_parent := parent_key(record)) is not None:
                followed.add(own_parent)
            content = waiting.pop(seq, record)
            parent = None
            if record.parent_seq is not None and record.start is None and record.parent_view is None:
                parent = await self.shape(record.parent_seq)
            if parent is not None and restates(record, parent):
                waiting[parent.seq] = content  # shown when the walk reaches the checkpoint it restates
                continue
            ref = parent_key(record)
            if ref is not None and ref.part == MAIN:
                ref = await shown_key(ref, self.shape)
            if content.seq != head.record.seq:
                content = await self.read(content.seq) or content
            for view in reversed(record_views(record, content, ref, followed=ViewKey(seq) in followed)):
                yield view

    async def shape(self, seq: int) -> CheckpointRecord | None:
        """Checkpoint ``seq`` as stored (where it stands, not its whole state): one read, no chain."""
        if seq in self._records:
            return self._records[seq]
        if seq not in self._shapes:
            self._shapes[seq] = await self.checkpointer.stored(self.thread, seq)
        return self._shapes[seq]

    async def at(self, key: ViewKey | None, head: Head) -> View:
        """The checkpoint ``key`` names, or (None) the thread's current one."""
        self._head = head.record
        self._records[head.record.seq] = head.record
        return await view_at(key, head.record, self.shape, self.read)

    async def history(self) -> list[View]:
        """Every checkpoint of the thread, newest first."""
        return history_views(await self.records())

    async def records(self) -> list[CheckpointRecord]:
        """Every record of the thread, whole (each read once, and kept for this reader's later reads)."""
        records = await self.checkpointer.history(self.thread)
        self._records.update((r.seq, r) for r in records)
        return records

    async def state(self, view: View) -> Any:
        """The state ``view`` shows: its record's, or for a run's beginning, derived from the checkpoint
        before it (the input applied to it, for the run's first step)."""
        if view.key.part == MAIN:
            return self.schema.load(view.record.values)
        root = view.record
        start = root.start
        assert start is not None, "a derived checkpoint belongs to a run's first record"
        before = await self.state_at(parent_key(root))
        if view.key.part == BEFORE or start.kind == "fork":
            return before
        return self.applied(before, start.update)

    def applied(self, state: Any, update: dict[str, Any]) -> Any:
        """``state`` with a stored input ``update`` applied (by the writer ``input``)."""
        return self.schema.apply(state, [("input", self.schema.load_update("input", update))])

    async def state_at(self, key: ViewKey | None) -> Any:
        """The state of the checkpoint a stored reference names (None: before the thread's first)."""
        if key is None:
            return self._empty()
        record = await self.read(key.seq)
        if record is None:
            raise CheckpointNotFoundError(f"thread {self.thread!r} has no checkpoint {key}")
        if key.part == MAIN:
            return self.schema.load(record.values)
        views = record_views(record, record, None)
        return await self.state(next((v for v in views if v.key.part == key.part), views[-1]))

    def _empty(self) -> Any:
        return self.empty(self.schema)

    @staticmethod
    def empty(schema: StateGraphSchema) -> Any:
        """A thread's state before its first input: every channel unwritten."""
        try:
            return schema.initial(None)
        except (ValidationError, ValueError, TypeError):  # a model whose fields need values: shown without them
            return schema.model.model_construct()

    async def fork(self, view: View, state: Any, *, more: dict[str, Any] | None = None) -> Position:
        """Where a run from the past checkpoint ``view`` (with ``state``) begins: a new branch after it, one
        step on, whose tasks are those ``view`` had left (its finished ones kept, its interrupts asked
        afresh), or with ``more`` (new input) applied first, a new run from there."""
        head = await self.checkpointer.head(self.thread, view.record.seq)
        assert head is not None
        self.checkpointer.ensure_free(head, None)
        if view.key.part != MAIN:  # a run's beginning: the branch follows that checkpoint, not its record's own
            head.cursor.store_whole()
        parent_view = PART_NAMES.get(view.key.part)
        if view.key.part == BEFORE:  # a replay of a run's input: that input again, on a branch of its own
            assert view.record.start is not None
            update = view.record.start.update
            state = self.applied(state, update)
            pending, schedule = await plan_start(self.machine, state)
            step = view.step + 2
            start = RunStart(kind="replay", update=update, pending=pending, schedule=stored_schedule(schedule),
                             step=step)
            return start_position(head, self.thread, state, pending, schedule=schedule, step=step, start=start,
                                  parent_view=parent_view)
        if more is not None:
            update = self.schema.input_update(more)
            state = self.schema.apply(state, [("input", update)])
            pending, schedule = await plan_start(self.machine, state)
            step = view.step + 2
            start = RunStart(kind="input", update=self.schema.dump_input(update), pending=pending,
                             schedule=stored_schedule(schedule), step=step)
            return start_position(head, self.thread, state, pending, schedule=schedule, step=step, start=start,
                                  parent_view=parent_view)
        pending = list(view.pending)
        step = view.step + 1
        start = RunStart(kind="fork", pending=pending, schedule=view.schedule, step=step, completed=view.completed)
        kept = schedule_of(view.schedule, f"checkpoint {view.id} of thread {self.thread!r}")
        return start_position(head, self.thread, state, pending, schedule=kept, step=step, start=start,
                              parent_view=parent_view, completed=view.completed)




class SchemaValues:
    """A graph's reading of stored channels, for its saver's reads (``checkpoint.saver.GraphValues``): the values
    as the graph holds them (its value types known), and a run's input applied through its reducers."""

    def __init__(self, schema: StateGraphSchema) -> None:
        self.schema = schema

    def loaded(self, stored: dict[str, Any]) -> dict[str, Any]:
        return self._values(self.schema.load(stored))

    def applied(self, stored: dict[str, Any] | None, update: dict[str, Any]) -> dict[str, Any]:
        state = ThreadViews.empty(self.schema) if stored is None else self.schema.load(stored)
        return self._values(self.schema.apply(state, [("input", self.schema.load_update("input", update))]))

    def _values(self, state: Any) -> dict[str, Any]:
        values = self.schema.kind.values(state)
        return values if isinstance(values, dict) else {ROOT: values}  # a root state's value, under its channel
