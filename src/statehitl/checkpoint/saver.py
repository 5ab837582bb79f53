"""LangGraph's saver API on every statehitl checkpointer, read side: ``get_tuple``, ``list``, ``get`` and their
async twins, as LangGraph code that reads a checkpointer directly calls them.

The checkpoints read are those ``get_state_history`` shows (``graph.history``'s views over the records: the
same ids, configs, metadata and parent configs), so a config from either names the same checkpoint. No graph
is needed: a checkpoint's ``channel_values`` are its record's stored values, read back through statehitl's
tagged JSON (a class is rebuilt only when it is registered, ``statehitl.values.register``; else the value is
shown as stored). Writes (``put``, ``put_writes``) called directly are refused: statehitl's runs write their
own records; a subclass overriding them is handed each of its runs' checkpoints (``saver_hooks``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, overload

from statehitl._sync import iterate_sync, run_sync
from statehitl.checkpoint.base import Checkpoint, CheckpointMetadata, CheckpointTuple, PendingWrite
from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.reading import ThreadReader
from statehitl.checkpoint.records import CheckpointRecord
from statehitl.checkpoint.saver_hooks import pending_put, pending_writes
from statehitl.errors import CheckpointCorruptError, CheckpointNotFoundError
from statehitl.values import decode_value

if TYPE_CHECKING:
    from statehitl.graph.history import View, ViewKey

__all__ = ["GraphValues", "SaverReads", "SaverWriteRefused"]


class GraphValues(Protocol):
    """How a graph reads its stored channels, which a saver learns from the graphs compiled on it: the values as
    the graph holds them (``loaded``: its classes known), and the channels after a run's stored input is applied
    through its reducers to the stored channels before it (``applied``; None: a new thread's)."""

    def loaded(self, stored: dict[str, Any]) -> dict[str, Any]: ...

    def applied(self, stored: dict[str, Any] | None, update: dict[str, Any]) -> dict[str, Any]: ...

_VERSION = 4
"""LangGraph's checkpoint format version (``Checkpoint["v"]``)."""
_GOTO = "__goto__"
_ERROR, _INTERRUPT = "__error__", "__interrupt__"


class SaverWriteRefused(NotImplementedError):
    """A LangGraph saver write (``put``, ``put_writes``) called on a statehitl checkpointer, which writes its
    own records as runs go (one binding answer, the claims and the audit depend on them)."""


class SaverReads(ThreadReader):
    """The read side of LangGraph's ``BaseCheckpointSaver`` over a thread's records."""

    _graph_values: dict[str, GraphValues]

    def learn_values(self, fingerprint: str, values: GraphValues) -> None:
        """How the graph of machine ``fingerprint`` reads its channels (``compile(checkpointer=...)`` tells its
        saver). A thread of a graph this saver was not told of (read in another process) is read without it:
        values through the tagged JSON alone, and a run's first-step checkpoint with its input written over the
        channels (``docs/langgraph.md``)."""
        self._known_graphs()[fingerprint] = values

    def _known_graphs(self) -> dict[str, GraphValues]:
        return vars(self).setdefault("_graph_values", {})  # type: ignore[no-any-return]

    async def aget_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``), or the thread's current one; None when the
        thread has no checkpoint, or none of that id."""
        thread, checkpoint_id = _address(config)
        from statehitl.graph.history import parse_view, view_at  # the graph package imports this one's engine

        head = await self.head(thread)
        if head is None:
            return None
        if checkpoint_id is None:
            view = await view_at(None, head.record, self._shape_of(thread), self._whole_of(thread))
            return await self._tuple(view, {view.record.seq: view.record}, None)
        try:
            wanted = str(parse_view(thread, checkpoint_id))
        except CheckpointNotFoundError:
            return None
        async for found in self._thread_tuples(thread, only=wanted):
            return found
        return None

    def get_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the thread's current one; see ``aget_tuple``."""
        return run_sync(self.aget_tuple(config))

    async def alist(self, config: Mapping[str, Any] | None, *, filter: Mapping[str, Any] | None = None,
                    before: Mapping[str, Any] | None = None, limit: int | None = None
                    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, as ``get_state_history`` shows them: the thread's (every thread's, one
        thread after another by id, for a config without ``thread_id``), only the one ``config``'s
        ``checkpoint_id`` names if it names one, those made before ``before``'s checkpoint, those whose
        metadata holds ``filter``'s items, at most ``limit``."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be None or a count of checkpoints, not {limit!r}")
        threads = [_address(config)[0]] if config and "thread_id" in config.get("configurable", {}) else \
            sorted(entry.thread_id for entry in await self.threads())
        only = None if not config else config.get("configurable", {}).get("checkpoint_id")
        count = 0
        for thread in threads:
            if limit is not None and count >= limit:
                return
            async for found in self._thread_tuples(thread, only=only, before=before, filter=filter):
                yield found
                count += 1
                if limit is not None and count >= limit:
                    return

    def list(self, config: Mapping[str, Any] | None, *, filter: Mapping[str, Any] | None = None,
             before: Mapping[str, Any] | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first; see ``alist``."""
        return iterate_sync(self.alist(config, filter=filter, before=before, limit=limit))

    async def aget(self, config: Mapping[str, Any]) -> Checkpoint | None:
        """The checkpoint (LangGraph's dict) ``config`` names, or the thread's current one; None if none."""
        found = await self.aget_tuple(config)
        return None if found is None else found.checkpoint

    @overload
    def get(self, config: Mapping[str, Any]) -> Checkpoint | None: ...

    @overload
    def get(self, config: str, checkpoint_id: str | int) -> Coroutine[Any, Any, CheckpointRecord]: ...

    def get(self, config: Mapping[str, Any] | str, checkpoint_id: str | int | None = None
            ) -> Checkpoint | Coroutine[Any, Any, CheckpointRecord] | None:
        """Given a LangGraph config, its checkpoint as LangGraph's ``get`` returns it (see ``aget``). Given a
        thread id and a checkpoint id (statehitl's own call, awaited), that record (``checkpoint_record``)."""
        if isinstance(config, Mapping):
            if checkpoint_id is not None:
                raise TypeError("get(config) takes the checkpoint id in the config; get(thread_id, checkpoint_id) "
                                "is statehitl's record read")
            return run_sync(self.aget(config))
        if checkpoint_id is None:
            raise TypeError("get(thread_id, checkpoint_id) needs the checkpoint id; for the thread's current "
                            "checkpoint pass a config: get({'configurable': {'thread_id': ...}})")
        return self.checkpoint_record(config, checkpoint_id)

    async def begun_checkpoints(self, record: CheckpointRecord) -> Sequence[CheckpointTuple]:
        """The checkpoints a run's first record shows before its own (the run's input, the input applied),
        as ``get_tuple`` will show them once ``record`` is stored: a saver subclass's ``put`` is handed them
        first, as LangGraph's loop hands it those it writes (``saver_hooks``)."""
        from statehitl.graph.history import parent_key, record_views

        if record.start is None or not record.start.shown:
            return []
        records = {record.seq: record}
        views = record_views(record, record, parent_key(record))[:-1]
        return [await self._tuple(view, records, None) for view in views]

    # -- writes are statehitl's own, or a subclass's override passing them on (saver_hooks) ---------

    def put(self, config: Mapping[str, Any], checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Store the run's checkpoint a subclass's ``put`` override was handed (``super().put(...)``): the
        config naming it. Called directly, refused: see ``SaverWriteRefused``."""
        pending = pending_put(checkpoint)
        if pending is None:
            raise _refused("put")
        return pending.run_from_thread()

    async def aput(self, config: Mapping[str, Any], checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Store the run's checkpoint a subclass's ``aput`` override was handed (``super().aput(...)``): the
        config naming it. Called directly, refused: see ``SaverWriteRefused``."""
        pending = pending_put(checkpoint)
        if pending is None:
            raise _refused("aput")
        return await pending.run()

    def put_writes(self, config: Mapping[str, Any], writes: Any, task_id: str, task_path: str = "") -> None:
        """Acknowledge a run's task writes a subclass's override was handed (they are stored in the checkpoint
        that follows). Called directly, refused: see ``SaverWriteRefused``."""
        if not pending_writes(writes):
            raise _refused("put_writes")

    async def aput_writes(self, config: Mapping[str, Any], writes: Any, task_id: str, task_path: str = "") -> None:
        """``put_writes``, awaited."""
        if not pending_writes(writes):
            raise _refused("aput_writes")

    def get_next_version(self, current: Any, channel: Any = None) -> Any:
        """LangGraph's next channel version after ``current`` (None: a channel's first). statehitl keeps no
        channel versions; a run asks a subclass that overrides this for the versions of the channels a step
        wrote, handed to its ``put``."""
        if current is None:
            return 1
        if isinstance(current, int):
            return current + 1
        raise TypeError(f"get_next_version counts int versions, got {current!r}")

    # -- building the tuples --------------------------------------------------------------------------

    async def _thread_tuples(self, thread: str, *, only: str | None, before: Mapping[str, Any] | None = None,
                             filter: Mapping[str, Any] | None = None) -> AsyncIterator[CheckpointTuple]:
        """The thread's checkpoints newest first, from one read of its records (as ``get_state_history``
        reads a whole history), each with the writes of the step that ran from it."""
        from statehitl.graph.history import (
            StepResults,
            checkpoint_order,
            history_views,
            parse_view,
            results_of,
            step_results,
        )

        wanted = None if only is None else _view_or_none(thread, only)
        if only is not None and wanted is None:
            return
        ceiling = None if before is None else before.get("configurable", {}).get("checkpoint_id")
        below = None if ceiling is None else checkpoint_order(parse_view(thread, ceiling))
        records = {r.seq: r for r in await self.history(thread)}
        results: StepResults = {}
        for view in history_views(records.values()):
            done = step_results(view)
            if done is not None:
                results[done[0]] = done[1:]
            if (wanted is not None and view.id != wanted) or \
                    (below is not None and checkpoint_order(view.id) >= below):
                continue
            if filter and any(_metadata(view).get(k) != v for k, v in filter.items()):
                continue
            yield await self._tuple(view, records, results_of(results, view))

    async def _tuple(self, view: View, records: dict[int, CheckpointRecord],
                     ran: dict[str, dict[str, Any]] | None) -> CheckpointTuple:
        """``view`` as LangGraph's tuple; ``records``: the thread's records read so far (more read as needed);
        ``ran``: what the tasks of the step that ran from it wrote, when a later checkpoint says."""
        thread = view.record.thread_id
        checkpoint: Checkpoint = {
            "v": _VERSION, "id": tagged(thread, view.id),
            "ts": datetime.fromtimestamp(view.created_at, UTC).isoformat(),
            "channel_values": await self._values(view, records), "channel_versions": {}, "versions_seen": {},
            "updated_channels": _updated(view, await self._record(view.key.seq, records)),
        }
        parent = None if view.parent is None else _config(thread, str(view.parent))
        return CheckpointTuple(_config(thread, view.id), checkpoint, _metadata(view), parent,
                               _pending_writes(view, ran))

    async def _values(self, view: View, records: dict[int, CheckpointRecord]) -> dict[str, Any]:
        """The channels of ``view``: its record's for a record's own checkpoint; for a run's input checkpoint,
        the state before the run with the input in ``__start__``; for its first step, that input applied."""
        from statehitl.graph.history import BEFORE, MAIN, parent_key

        graph = self._known_graphs().get(view.record.fingerprint)
        if view.key.part == MAIN:
            return _decoded(view.record.values) if graph is None else graph.loaded(view.record.values)
        start = view.record.start
        assert start is not None, "a derived checkpoint belongs to a run's first record"
        before = await self._values_at(parent_key(view.record), records)
        if view.key.part == BEFORE:
            return {**before, "__start__": _decoded(start.update)}
        if start.kind == "fork":
            return before
        parent = parent_key(view.record)
        if graph is not None and (parent is None or parent.part == MAIN):
            stored = None if parent is None else (await self._record(parent.seq, records)).values
            return graph.applied(stored, start.update)
        return {**before, **{k: v for k, v in _decoded(start.update).items() if k != _GOTO}}

    async def _values_at(self, key: ViewKey | None, records: dict[int, CheckpointRecord]) -> dict[str, Any]:
        """The channels of the checkpoint a stored reference names (None: before the thread's first)."""
        from statehitl.graph.history import MAIN, record_views

        if key is None:
            return {}
        record = await self._record(key.seq, records)
        if key.part == MAIN:
            graph = self._known_graphs().get(record.fingerprint)
            return _decoded(record.values) if graph is None else graph.loaded(record.values)
        views = record_views(record, record, None)
        return await self._values(next((v for v in views if v.key.part == key.part), views[-1]), records)

    async def _record(self, seq: int, records: dict[int, CheckpointRecord]) -> CheckpointRecord:
        """Record ``seq`` of the thread whose records read so far are ``records`` (read whole if not yet)."""
        record = records.get(seq)
        if record is None:
            record = records[seq] = await self.checkpoint_record(_thread_of(records), seq)
        return record

    def _shape_of(self, thread: str) -> Any:
        async def shape(seq: int) -> CheckpointRecord | None:
            return await self.stored(thread, seq)
        return shape

    def _whole_of(self, thread: str) -> Any:
        async def whole(seq: int) -> CheckpointRecord | None:
            try:
                return await self.checkpoint_record(thread, seq)
            except CheckpointNotFoundError:
                return None
        return whole


def _address(config: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """The thread (``str()``-ed, as LangGraph takes any value) and checkpoint id a config names; a clear error
    for a config without a thread, or naming a subgraph's namespace."""
    configurable = (config or {}).get("configurable") or {}
    if "thread_id" not in configurable:
        raise ValueError(f"a checkpointer read needs config['configurable']['thread_id'], got {config!r}")
    if configurable.get("checkpoint_ns"):
        raise ValueError(f"checkpoint_ns {configurable['checkpoint_ns']!r}: statehitl's saver reads the top-level "
                         "graph's checkpoints; read a subgraph's with graph.get_state(config) or "
                         "graph.get_state_history(config)")
    found = configurable.get("checkpoint_id")
    return str(configurable["thread_id"]), None if found is None else str(found)


def _view_or_none(thread: str, checkpoint_id: str) -> str | None:
    from statehitl.graph.history import parse_view

    try:
        return str(parse_view(thread, checkpoint_id))
    except CheckpointNotFoundError:
        return None


def _thread_of(records: dict[int, CheckpointRecord]) -> str:
    return next(iter(records.values())).thread_id


def _config(thread: str, view_id: str) -> dict[str, Any]:
    """LangGraph's config of a checkpoint, as ``get_state_history`` gives it (an id tagged with its thread)."""
    return {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": tagged(thread, view_id)}}


def _metadata(view: View) -> CheckpointMetadata:
    from statehitl.graph.history import view_metadata

    return view_metadata(view)  # type: ignore[return-value]  # LangGraph's TypedDict, with the run's keys


def _updated(view: View, root: CheckpointRecord) -> list[str]:
    """The channels the step that made ``view`` wrote (LangGraph's ``updated_channels``); ``root``: the record
    whose id ``view`` has (the first of those restating it)."""
    from statehitl.graph.history import BEFORE, MAIN

    if view.key.part == BEFORE:
        return ["__start__"]
    start = root.start
    applied = start is not None and start.kind != "fork" and (view.key.part != MAIN or root.step == start.step)
    if view.key.part != MAIN and not applied:
        return []  # a replay's fork checkpoint: nothing written
    writes = [start.update] if applied and start is not None else list(root.writes.values())
    return sorted({channel for update in writes for channel in update if channel != _GOTO})


def _pending_writes(view: View, ran: dict[str, dict[str, Any]] | None) -> list[PendingWrite]:
    """The writes kept on ``view`` for the step that runs from it: what its finished tasks wrote (``ran``, or
    for a step that stopped those that finished), the error that stopped it, the interrupts it asks."""
    task = f"{view.step}:{{}}".format
    written = dict(view.completed) if view.own else {}
    for name, update in (ran or {}).items():
        written.setdefault(name, update)
    writes: list[PendingWrite] = [(task(name), channel, _decoded_one(value))
                                           for name, update in written.items()
                                           for channel, value in update.items() if channel != _GOTO]
    error = view.record.error if view.own else None
    if error is not None:
        writes.extend((task(node), _ERROR, f"{error.type}({error.message!r})") for node in error.nodes)
    asked: dict[str, list[Any]] = {}
    for record in view.interrupts:
        asked.setdefault(record.node, []).append(record.to_interrupt())
    writes.extend((task(node), _INTERRUPT, interrupts) for node, interrupts in asked.items())
    return writes


def _decoded(values: Mapping[str, Any]) -> dict[str, Any]:
    return {channel: _decoded_one(value) for channel, value in values.items()}


def _decoded_one(value: Any) -> Any:
    """A stored value read back through the tagged JSON; a value of a class this process has not registered
    is shown as stored (its tagged JSON) rather than refused: a saver has no graph to say what it may be."""
    try:
        return decode_value(value)
    except CheckpointCorruptError:
        return value


def _refused(call: str) -> SaverWriteRefused:
    return SaverWriteRefused(
        f"{call}() is LangGraph's saver write, which statehitl's checkpointers do not take: a statehitl run writes "
        "its own records (one binding answer per interrupt, claims and the audit depend on them). Write a "
        "thread's state with graph.update_state(config, values, as_node=...)")
