"""A LangGraph user's saver subclass, honoured by statehitl's runs: when a subclass of a statehitl checkpointer
overrides LangGraph's saver methods (``get_tuple``/``aget_tuple``, ``put``/``aput``, ``put_writes``/
``aput_writes``, ``get_next_version``), a graph's run calls them where LangGraph's loop does.

- Read: before a run reads its thread, it calls the override with the run's config; its errors stop the run
  and its delays are awaited. The run goes on from the thread's records (one binding answer per interrupt and
  the claims rest on them), not from what the override returns.
- Write: each checkpoint the run commits is handed to ``aput`` (or ``put``, in a worker thread) as LangGraph's
  ``(config, checkpoint, metadata, new_versions)``, a run's first record after the checkpoints it shows before its
  own (the input's, then the input applied: ``get_state_history``'s), as LangGraph's loop writes them; the record
  is stored when the override calls ``super().aput(...)``/``super().put(...)``, so an override that raises before
  that stores nothing (the thread is unchanged) and one that sleeps delays the write. An override that returns
  without calling ``super()`` is ``SaverWriteSkipped``: statehitl's runs need their records stored. Before it, the
  writes of the step that made the checkpoint go to ``aput_writes``/``put_writes`` task by task (stored inside the
  record itself: ``super()`` acknowledges them), none for a ``durability="exit"`` run, as on LangGraph; they are
  handed over when the step's checkpoint is committed, not as each task finishes. ``get_next_version`` names the
  versions of the channels the step wrote.
- A run cancelled mid-step records where it stood (``ThreadRun.cancelled``) through the same ``aput``, which is
  awaited to its end before the cancellation propagates.

Which methods a class overrides is worked out once per class; a checkpointer none of whose saver methods are
overridden takes none of these paths (``overrides_of`` is None).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.serde.jsonplus import JsonPlusSerializer
from statehitl.errors import CheckpointCorruptError
from statehitl.values import decode_value

if TYPE_CHECKING:
    from statehitl.checkpoint.chain import StateCodec

__all__ = ["PendingPut", "SaverOverrides", "SaverWriteSkipped", "channel_values", "check_checkpointer_serde",
           "overrides_of", "pending_put", "pending_writes", "put_through", "read_through"]

T = TypeVar("T")

_PAIRS = {"read": ("get_tuple", "aget_tuple"), "put": ("put", "aput"), "writes": ("put_writes", "aput_writes")}
_VERSION = 4
"""LangGraph's checkpoint format version (``Checkpoint["v"]``)."""
_SOURCES = {"update": "update", "input": "input", "fork": "fork"}


class SaverWriteSkipped(RuntimeError):
    """A saver subclass's ``put``/``aput`` returned without calling ``super()``: the run's checkpoint was not
    stored, and statehitl's runs cannot go on without it (they resume, claim and audit from their records)."""


@dataclass(frozen=True, slots=True)
class SaverOverrides:
    """The LangGraph saver methods a checkpointer class overrides, by name (the async one when a class
    overrides both), None where it overrides neither of a pair; ``version``: it overrides
    ``get_next_version``."""

    read: str | None
    put: str | None
    writes: str | None
    version: bool


_FOUND: dict[tuple[type, type], SaverOverrides | None] = {}


def overrides_of(cls: type, base: type) -> SaverOverrides | None:
    """What ``cls`` overrides of ``base``'s saver methods; None if nothing (the plain path). Worked out once
    per class."""
    try:
        return _FOUND[cls, base]
    except KeyError:
        found = _FOUND[cls, base] = _overrides(cls, base)
        return found


def _overrides(cls: type, base: type) -> SaverOverrides | None:
    def chosen(sync: str, asynchronous: str) -> str | None:
        for name in (asynchronous, sync):
            if getattr(cls, name) is not getattr(base, name):
                return name
        return None

    found = SaverOverrides(**{job: chosen(*names) for job, names in _PAIRS.items()},
                           version=cls.get_next_version is not base.get_next_version)  # type: ignore[attr-defined]
    return None if found == SaverOverrides(None, None, None, False) else found


@dataclass(slots=True)
class PendingPut:
    """A checkpoint handed to a saver's ``aput``/``put``: ``store`` writes its record, once, when the
    override calls ``super()`` (``checkpoint`` is the dict handed over, matched by identity)."""

    checkpoint: Mapping[str, Any]
    config: dict[str, Any]
    store: Callable[[], Awaitable[Any]] | None
    loop: asyncio.AbstractEventLoop
    stored: tuple[Any] | None = None

    async def run(self) -> dict[str, Any]:
        if self.stored is None and self.store is not None:
            self.stored = (await self.store(),)
        return self.config

    def run_from_thread(self) -> dict[str, Any]:
        """``run`` for a sync ``put`` override (run in a worker thread): on the run's loop, waited for."""
        return asyncio.run_coroutine_threadsafe(self.run(), self.loop).result()


@dataclass(slots=True)
class _PendingWrites:
    writes: list[tuple[str, Any]]
    acknowledged: list[bool] = field(default_factory=list)


_PUTTING: ContextVar[PendingPut | None] = ContextVar("statehitl_saver_put", default=None)
_WRITING: ContextVar[_PendingWrites | None] = ContextVar("statehitl_saver_writes", default=None)


def pending_put(checkpoint: Any) -> PendingPut | None:
    """The run's checkpoint ``checkpoint`` is, while a saver override is handed it; else None (a direct call)."""
    pending = _PUTTING.get()
    return pending if pending is not None and pending.checkpoint is checkpoint else None


def pending_writes(writes: Any) -> bool:
    """Whether ``writes`` are a run's task writes handed to a saver override (its ``super()`` acknowledges
    them: they are stored in the checkpoint that follows); False for a direct call."""
    pending = _WRITING.get()
    if pending is None or pending.writes is not writes:
        return False
    pending.acknowledged.append(True)
    return True


def check_checkpointer_serde(serde: Any) -> None:
    """A checkpointer's ``serde=`` (LangGraph's saver option): None or a plain ``JsonPlusSerializer`` (the tagged
    JSON statehitl stores anyway); any other serializer is refused, since a checkpoint's values are stored as
    statehitl's JSON, in pieces a step appends to (``docs/langgraph.md``, deliberate differences)."""
    if serde is None or type(serde) is JsonPlusSerializer:
        return
    raise TypeError(
        f"serde={type(serde).__name__}(...): statehitl's checkpointers store values as their own tagged JSON "
        "(never pickled; classes rebuilt only when registered with statehitl.values.register), so they take no "
        "other serializer; drop serde=, or register the classes your state holds")


async def read_through(saver: Any, overrides: SaverOverrides, config: Mapping[str, Any]) -> None:
    """Call the saver's read override with a run's ``config`` before the run reads its thread."""
    if overrides.read is not None:
        await _call(saver, overrides.read, dict(config))


def channel_values(record: Any, state: Any, codec: StateCodec) -> dict[str, Any]:
    """The channels of checkpoint ``record`` (of ``state``) as a saver's ``put`` is handed them: read back
    through the tagged JSON, append-only channels whole."""
    values = {channel: _decoded(value) for channel, value in record.values.items()}
    for channel in codec.append_channels:
        values[channel] = [_decoded(item) for item in codec.dump_items(state, channel, 0)]
    return values


async def put_through(saver: Any, overrides: SaverOverrides, *, record: Any, channel_values: dict[str, Any],
                      parent: str | None, begun: Sequence[Any], store: Callable[[], Awaitable[T]]) -> T:
    """Hand the checkpoint ``record`` (holding ``channel_values``, following view ``parent``) to the saver's
    overrides, storing it through ``store`` when the put override calls ``super()``; what ``store`` returned.
    ``begun``: the checkpoints (tuples) a run's first record shows before its own, handed over first (nothing
    of theirs to store: the record holds them), with the input's writes after the input's checkpoint."""
    thread = record.thread_id
    config = _config(thread, parent)
    for shown in begun:
        await _hand_over(saver, overrides, shown.parent_config or config, shown.checkpoint, shown.metadata, store=None)
        config = shown.config
        if shown.metadata.get("source") == "input" and record.start is not None:
            await _hand_writes(saver, overrides, config, {"__start__": record.start.update}, shown.metadata["step"])
    if record.start is None or record.start.shown:  # a durability="exit" run saves no task writes
        await _hand_writes(saver, overrides, config, record.writes, record.step - 1)
    checkpoint = {"v": _VERSION, "id": tagged(thread, f"{record.seq:012d}"),
                  "ts": datetime.fromtimestamp(record.created_at, UTC).isoformat(),
                  "channel_values": channel_values, "channel_versions": {}, "versions_seen": {},
                  "updated_channels": sorted({channel for update in record.writes.values() for channel in update})}
    if overrides.put is None:
        _versions(saver, overrides, checkpoint)
        return await store()
    metadata = {"source": _SOURCES.get(record.source, "loop"), "step": record.step, "parents": {},
                **record.metadata}
    return await _hand_over(saver, overrides, config, checkpoint, metadata, store=store)  # type: ignore[no-any-return]


async def _hand_over(saver: Any, overrides: SaverOverrides, config: dict[str, Any], checkpoint: Any,
                     metadata: Any, *, store: Callable[[], Awaitable[Any]] | None) -> Any:
    """Call the put override with one checkpoint; ``store`` writes its record when the override calls
    ``super()`` (None: a checkpoint the next record holds, nothing to store). What ``store`` returned."""
    versions = _versions(saver, overrides, checkpoint)
    if overrides.put is None:
        return None
    thread = config["configurable"]["thread_id"]
    own = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint["id"]}}
    pending = PendingPut(checkpoint, own, store, asyncio.get_running_loop())
    reset = _PUTTING.set(pending)
    try:
        await _call(saver, overrides.put, config, checkpoint, metadata, versions)
    finally:
        _PUTTING.reset(reset)
    if store is None:
        return None
    if pending.stored is None:
        raise SaverWriteSkipped(
            f"{type(saver).__name__}.{overrides.put}() returned without calling super().{overrides.put}(...): "
            f"checkpoint {checkpoint['id']} of thread {thread!r} was not stored, and a statehitl run goes on only "
            "from stored checkpoints; call super() to store it (after whatever the override does)")
    return pending.stored[0]


async def _hand_writes(saver: Any, overrides: SaverOverrides, config: dict[str, Any],
                       writes: Mapping[str, Mapping[str, Any]], step: int) -> None:
    """Call the put-writes override with each task's writes (stored JSON read back), task by task."""
    if overrides.writes is None:
        return
    for node, update in writes.items():
        handed = [(channel, _decoded(value)) for channel, value in update.items()]
        await _call(saver, overrides.writes, config, handed, f"{step}:{node}")


def _versions(saver: Any, overrides: SaverOverrides, checkpoint: dict[str, Any]) -> dict[str, Any]:
    """The new versions of the channels ``checkpoint``'s step wrote (kept on it as ``channel_versions``):
    the overridden ``get_next_version``'s, else counted from the checkpoint before."""
    updated = checkpoint["updated_channels"] or []
    if overrides.version:
        versions = {channel: saver.get_next_version(None, None) for channel in updated}
    else:
        versions = dict.fromkeys(updated, 1)
    checkpoint["channel_versions"] = versions
    return versions


async def _call(saver: Any, name: str, *args: Any) -> Any:
    """Call the saver's method ``name``: awaited when async, in a worker thread when sync (so a sync override
    that calls ``super()`` can wait on this loop, and a slow one does not stall other runs)."""
    method = getattr(saver, name)
    if inspect.iscoroutinefunction(method):
        if name.endswith("put_writes"):
            return await _with_writes(method(*args), args[1])
        return await method(*args)
    if name.endswith("put_writes"):
        return await asyncio.to_thread(_sync_with_writes, method, args)
    return await asyncio.to_thread(method, *args)


async def _with_writes(call: Awaitable[Any], writes: list[tuple[str, Any]]) -> Any:
    reset = _WRITING.set(_PendingWrites(writes))
    try:
        return await call
    finally:
        _WRITING.reset(reset)


def _sync_with_writes(method: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    reset = _WRITING.set(_PendingWrites(args[1]))
    try:
        return method(*args)
    finally:
        _WRITING.reset(reset)


def _config(thread: str, view_id: str | None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if view_id is not None:
        configurable["checkpoint_id"] = tagged(thread, view_id)
    return {"configurable": configurable}


def _decoded(value: Any) -> Any:
    try:
        return decode_value(value)
    except CheckpointCorruptError:
        return value
