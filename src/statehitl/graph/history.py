"""A thread's checkpoints as LangGraph numbers and shows them, derived from statehitl's records.

LangGraph writes a checkpoint for a run's input (``source="input"``, step -1 on a new thread), one for the
state its first step runs on (``"loop"``, step 0), one for each step, one for a replay's start
(``"fork"``), and keeps the interrupts of a step that stopped as pending writes on the checkpoint before
that step. statehitl writes fewer records and derives the rest, so they cost no write:

- a run's first record carries how it began (``RunStart``): it shows the input checkpoint (the state
  before the input) and the first-step checkpoint (the input applied), or a replay's fork checkpoint,
  before its own (not for a run with ``durability="exit"``, which LangGraph saves only where it stops);
- a record that says how the step of the checkpoint before it stopped (an interrupt, a failure, the same
  step asked again after a resume: same step, same tasks, no ``start``) *restates* that checkpoint: it is
  shown as that checkpoint, under its id, with what it says now.

A shown checkpoint is a ``View``: which record's content it shows, and which part of its record it is
(``ViewKey``). Ids are the record's (``000000000005``) for its own checkpoint, with ``.1`` for the input
checkpoint and ``.2`` for the first-step or fork checkpoint before it; ``checkpoint_order`` sorts them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from statehitl.checkpoint.checkpoint_ids import untag
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import CheckpointRecord, RecordStatus, ViewPart
from statehitl.checkpoint.step_writes import resolve_writes
from statehitl.errors import CheckpointNotFoundError

MAIN, BEFORE, BEGIN = 0, 1, 2
"""The parts of a record: its own checkpoint, the state before its run's input, its run's first step (or a
replay's fork)."""
_PARTS = {"input": BEFORE, "loop": BEGIN, "fork": BEGIN}
PART_NAMES: dict[int, ViewPart] = {BEFORE: "input", BEGIN: "loop"}
"""How a record names which of its parent record's checkpoints it follows (``parent_view``)."""
_SOURCES = {"update": "update", "input": "input", "fork": "fork"}
"""LangGraph's ``metadata["source"]`` for a record's ``source``; every other step is a ``"loop"``."""
_ROOM = 1e-6
"""How far before its record a derived checkpoint's ``created_at`` is (the engine leaves room for two)."""


@dataclass(frozen=True, slots=True)
class ViewKey:
    """Which shown checkpoint: part ``part`` of record ``seq``."""

    seq: int
    part: int = MAIN

    def __str__(self) -> str:
        return f"{self.seq:012d}" if self.part == MAIN else f"{self.seq:012d}.{self.part}"


def parse_view(thread_id: str, checkpoint_id: str | int) -> ViewKey:
    """The ``ViewKey`` a checkpoint id of ``thread_id`` names (bare, or tagged with its thread as configs carry
    it: ``checkpoint_ids``); ``CheckpointNotFoundError`` for one that names none, or another thread's."""
    text = untag(thread_id, str(checkpoint_id))  # a config's id says its thread: not another's
    seq_text, dot, part_text = text.partition(".")
    try:
        seq = int(seq_text)
        part = int(part_text) if dot else MAIN
    except ValueError:
        raise CheckpointNotFoundError(f"{checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}") from None
    if seq < 0 or part not in (MAIN, BEFORE, BEGIN):
        raise CheckpointNotFoundError(f"{checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}")
    return ViewKey(seq, part)


def checkpoint_order(checkpoint: str | ViewKey) -> tuple[int, int]:
    """A sort key of checkpoints (bare ids, or keys) in the order they were made."""
    key = checkpoint if isinstance(checkpoint, ViewKey) else parse_view("", checkpoint)
    return key.seq, {BEFORE: 0, BEGIN: 1, MAIN: 2}[key.part]


@dataclass(slots=True)
class View:
    """One checkpoint as LangGraph shows it. ``record`` is the record that shows it: for a record's own
    checkpoint the newest record restating it (whose content it shows), for a run's beginning the run's
    first record (its ``start``); ``parent`` the checkpoint before it, as shown."""

    key: ViewKey
    record: CheckpointRecord
    step: int
    source: str
    status: RecordStatus
    pending: list[str]
    schedule: dict[str, Any]
    completed: dict[str, dict[str, Any]]
    interrupts: list[InterruptRecord]
    created_at: float
    parent: ViewKey | None
    made_by: dict[str, dict[str, Any]] | None = None
    """For a record's own checkpoint, the writes of the step that made it (its first record's: a record
    restating it holds what its own step wrote since)."""

    @property
    def id(self) -> str:
        return str(self.key)

    @property
    def own(self) -> bool:
        """Whether this is a record's own checkpoint (not one derived from how its run began)."""
        return self.key.part == MAIN


def step_results(view: View) -> tuple[str, int, dict[str, dict[str, Any]]] | None:
    """What the tasks of the checkpoint before ``view`` wrote, as LangGraph shows them on that checkpoint's
    tasks (``task.result``): ``(its id, the step they ran in, writes by task)``. A record's own checkpoint holds
    the writes of the step that made it; the first checkpoint after a run's input, the input as ``__start__``
    wrote it."""
    if view.parent is None:
        return None
    start = view.record.start
    if view.parent.part == BEFORE and view.parent.seq == view.key.seq and start is not None:
        return str(view.parent), view.step - 1, {"__start__": start.update}
    if view.own:
        return str(view.parent), view.step - 1, view.record.writes if view.made_by is None else view.made_by
    return None


def view_metadata(view: View) -> dict[str, Any]:
    """LangGraph's ``metadata`` of a checkpoint: its ``source`` and ``step`` (``parents`` empty: a top-level
    checkpoint), then the keys its run's config gave (``CheckpointRecord.metadata``)."""
    metadata: dict[str, Any] = {"source": view.source, "step": view.step, "parents": {}}
    for key, value in view.record.metadata.items():
        metadata.setdefault(key, value)
    return metadata


StepResults = dict[str, tuple[int, dict[str, dict[str, Any]]]]
"""By checkpoint id, what ``step_results`` found its tasks wrote: the step they ran in, the writes by task."""


def results_of(results: StepResults, view: View) -> dict[str, dict[str, Any]] | None:
    """What the tasks of ``view`` wrote, when a later checkpoint said so (taken from ``results``) and they ran
    in its step (a run with ``durability="exit"`` skips checkpoints: its record's writes are its last step's)."""
    ran = results.pop(view.id, None)
    return ran[1] if ran is not None and ran[0] == view.step else None


def restates(record: CheckpointRecord, parent: CheckpointRecord) -> bool:
    """Whether ``record`` says how the step of ``parent``, the checkpoint before it, stopped (or stands now):
    the same step and tasks, and not the start of a run of its own."""
    return (record.start is None and record.parent_view is None and record.parent_seq == parent.seq
            and record.step == parent.step and record.pending == parent.pending)


def unrun_input(record: CheckpointRecord) -> bool:
    """Whether ``record`` is an input that ``update_state(..., as_node="__input__")`` wrote and no run has applied
    yet. LangGraph writes only the input checkpoint for it; the checkpoint with the input applied is the first
    of the run that applies it, so until a run follows the record (or a ``__start__`` update replaces the
    input), only its input checkpoint is shown."""
    start = record.start
    return (record.source == "update" and start is not None and start.kind == "input" and record.step == start.step
            and record.pending == start.pending)


def parent_key(record: CheckpointRecord) -> ViewKey | None:
    """The checkpoint ``record`` (or, for a run's first record, its run) follows, as stored."""
    if record.parent_seq is None or record.parent_view == "root":
        return None
    return ViewKey(record.parent_seq, _PARTS[record.parent_view] if record.parent_view else MAIN)


def record_views(root: CheckpointRecord, content: CheckpointRecord, parent: ViewKey | None, *,
                 derive: bool = True, followed: bool = True) -> list[View]:
    """The checkpoints a record shows, oldest first: its run's beginning (when ``root`` began one), then its
    own, with what ``content`` (the newest record restating ``root``, or ``root`` itself) says. ``parent``:
    the shown checkpoint ``root`` follows (its own parent's key, resolved to what shows it). ``derive=False``:
    not the run's beginning, which is derived from the record before it (``prune`` deleted that one).
    ``followed=False``: no record follows its own checkpoint, which an ``unrun_input`` then does not show."""
    views: list[View] = []
    start = root.start if derive and (root.start is None or root.start.shown) else None
    when = root.created_at
    main_source = _SOURCES.get(root.source, "loop")
    if start is not None:
        applies = start.kind != "fork"  # the run begins by applying an input (a replay: the same one again)
        if applies:
            views.append(View(ViewKey(root.seq, BEFORE), root, start.step - 1,
                              "input" if start.kind == "input" else "fork", "executing", ["__start__"], {}, {}, [],
                              when - 2 * _ROOM, parent))
            parent = views[-1].key
        begun = "loop" if applies else "fork"
        if root.step == start.step and root.pending == start.pending:
            main_source = begun  # the run stopped in its first step: that checkpoint is the record's own
        else:
            views.append(View(ViewKey(root.seq, BEGIN), root, start.step, begun, "executing", list(start.pending),
                              dict(start.schedule), dict(start.completed), [], when - _ROOM, parent))
            parent = views[-1].key
        if not followed and views and unrun_input(root):
            return views
    views.append(View(ViewKey(root.seq), content, content.step, main_source, content.status, list(content.pending),
                      dict(content.schedule), dict(content.completed), list(content.interrupts), when, parent,
                      None if content.seq == root.seq else _made_by(root, content)))
    return views


def _made_by(root: CheckpointRecord, content: CheckpointRecord) -> dict[str, dict[str, Any]]:
    """The writes of the step that made ``root``, a checkpoint ``content`` restates: read as stored (a page of
    history reads ``root`` so), a write to an append-only channel names the items it added, found in the
    channels ``content`` holds whole (the same checkpoint's)."""
    return resolve_writes(root.writes, content.values, getattr(root, "value_writes", None))


Read = Callable[[int], Awaitable[CheckpointRecord | None]]
"""Reads checkpoint ``seq`` of the thread (None: a claim's number, or nothing)."""


async def view_at(key: ViewKey | None, head: CheckpointRecord, shape: Read, whole: Read) -> View:
    """The checkpoint ``key`` names (None: the thread's current one, whose newest record is ``head``).

    A record's own checkpoint shows the newest record restating it (read forward from it), and is named by
    its first (read back along the parents). ``shape`` reads a record as stored (where it stands), ``whole``
    with its state: only the record whose content is shown is read whole."""
    if key is None:
        content = head
        root = await _root(head, shape)
    else:
        found = await shape(key.seq)
        if found is None:
            raise CheckpointNotFoundError(f"thread {head.thread_id!r} has no checkpoint {key}")
        root = await _root(found, shape) if key.part == MAIN else found
        newest = await _newest_restating(root, head, shape)
        content = head if newest.seq == head.seq else await whole(newest.seq) or newest
    parent = await shown_key(parent_key(root), shape)
    views = record_views(root, content, parent, followed=key is not None or root.seq != head.seq)
    wanted = MAIN if key is None else key.part
    for view in views:
        if view.key.part == wanted:
            return view
    if wanted != BEFORE:  # the run stopped in its first step (its first-step checkpoint is the record's own), or
        return views[-1]  # the thread's current checkpoint is an input no run has applied
    raise CheckpointNotFoundError(f"thread {head.thread_id!r} has no checkpoint {key}")


async def _root(record: CheckpointRecord, read: Read) -> CheckpointRecord:
    """The first of the records restating one another that ``record`` ends: whose id the checkpoint has."""
    while record.parent_seq is not None and record.start is None and record.parent_view is None:
        parent = await read(record.parent_seq)
        if parent is None or not restates(record, parent):
            break
        record = parent
    return record


async def _newest_restating(root: CheckpointRecord, head: CheckpointRecord, read: Read) -> CheckpointRecord:
    """The newest record restating ``root`` (itself if none): the records after it, claims skipped, while
    each restates the one before."""
    current, seq = root, root.seq
    while seq < head.seq:
        seq += 1
        found = head if seq == head.seq else await read(seq)
        if found is None:  # a claim (not a checkpoint) takes a number between them
            continue
        if not restates(found, current):
            break
        current = found
    return current


async def shown_key(key: ViewKey | None, read: Read) -> ViewKey | None:
    """The key a stored parent reference is shown under: a record's own checkpoint by its first record."""
    if key is None or key.part != MAIN:
        return key
    found = await read(key.seq)
    return key if found is None else ViewKey((await _root(found, read)).seq)


def history_views(records: Iterable[CheckpointRecord]) -> list[View]:
    """Every checkpoint of a thread whose records (every one, each whole) are ``records``, newest first."""
    by_seq = {r.seq: r for r in records}
    followed = {key for r in by_seq.values() if (key := parent_key(r)) is not None}
    root_of: dict[int, int] = {}
    newest: dict[int, CheckpointRecord] = {}
    for seq in sorted(by_seq):
        record = by_seq[seq]
        parent = by_seq.get(record.parent_seq) if record.parent_seq is not None else None
        root = root_of[parent.seq] if parent is not None and restates(record, parent) else seq
        root_of[seq] = root
        newest[root] = record
    shown: list[View] = []
    for root_seq in sorted(newest, reverse=True):
        first = by_seq[root_seq]
        ref = parent_key(first)
        if ref is not None and ref.part == MAIN:
            ref = ViewKey(root_of.get(ref.seq, ref.seq))
        pruned = ref is not None and ref.seq not in by_seq
        shown.extend(reversed(record_views(first, newest[root_seq], None if pruned else ref, derive=not pruned,
                                           followed=ViewKey(root_seq) in followed)))
    return shown
