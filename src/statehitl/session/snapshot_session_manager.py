"""``SnapshotSessionManager``: Strands' snapshot sessions, with the history in statehitl's own checkpoints.

Strands' manager writes a whole snapshot of the agent to its ``Storage`` on every save, and a second
copy into an immutable history when ``snapshot_trigger`` says so. Here the agent's thread already is
its history: every call (every step, with ``durability="step"``) is a checkpoint in the same store. So
a snapshot this manager saves is a *reference* to a checkpoint of that thread plus what the thread does
not hold (the system prompt, the conversation manager's state, the model's state), a few hundred bytes
under Strands' key layout::

    session/<session_id>/scopes/agent/<agent_id>/snapshots/snapshot_latest.json
    session/<session_id>/scopes/agent/<agent_id>/snapshots/immutable_history/snapshot_<uuid7>.json

and ``restore_snapshot(agent, snapshot_id=...)`` takes the agent back to that checkpoint: the thread's next
checkpoint is written after its head with that one as parent, so nothing of the history is lost.

``save_latest_on``: ``"invocation"`` (default) and ``"message"`` rewrite ``snapshot_latest`` after every
call; the thread itself is checkpointed per the agent's ``durability`` either way (every step, with a
session), so ``"message"`` adds nothing. ``"trigger"`` rewrites it only when the trigger fires or on
``save_snapshot(is_latest=True)``, and a new ``Agent`` on the session starts from it rather than from the
thread's head (before the first, with an empty conversation, as with Strands). Graph and Swarm
orchestrators on this manager keep their thread (latest only), as with any session manager.

``storage`` must be one of ``statehitl.storage``'s stores, whose compare-and-set store the checkpoints
need; without one, the agent's ``storage=``, else ``LocalFileStorage()``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from statehitl._sync import run_sync
from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import SnapshotError
from statehitl.hooks.agent_events import AfterInvocationEvent
from statehitl.session.manager import SessionManager, check_session_id
from statehitl.session.snapshot_ids import is_uuid7, new_uuid7
from statehitl.storage.blob_store import BlobStore
from statehitl.types._snapshot import SNAPSHOT_SCHEMA_VERSION, Snapshot

__all__ = ["BidiAgentSaveLatestStrategy", "MultiAgentSaveLatestStrategy", "SaveLatestStrategy",
           "SnapshotSessionManager", "SnapshotTrigger"]

logger = logging.getLogger(__name__)

SaveLatestStrategy = Literal["message", "invocation", "trigger"]
BidiAgentSaveLatestStrategy = Literal["message", "stop", "trigger"]
MultiAgentSaveLatestStrategy = Literal["node", "invocation"]

_NAMESPACE = "session"
_LATEST = "snapshot_latest.json"
_HISTORY = "immutable_history"
_SNAPSHOT_KEY = re.compile(r"snapshot_([\w-]+)\.json\Z")
_KEPT = ["checkpoint", "conversation_manager_state", "system_prompt", "model_state"]
"""What a saved snapshot holds: the checkpoint by reference, and what the thread does not keep."""


@runtime_checkable
class SnapshotTrigger(Protocol):
    """Decides after each call whether to add an immutable snapshot: ``trigger(agent_data=agent) -> bool``."""

    def __call__(self, *, agent_data: Any, **kwargs: Any) -> bool: ...


def _check(value: str, allowed: tuple[str, ...], name: str) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


class SnapshotSessionManager(SessionManager):
    """Sessions as checkpoints, with Strands' snapshot API over them (see the module's docstring).

    ``checkpointer_options`` (``signing_key=``, ``compress=``, ``lease_seconds=``, ``ttl=``) go to the
    ``Checkpointer`` the agent's thread is kept by.
    """

    def __init__(self, session_id: str = "default-session", *, storage: Any = None,
                 save_latest_on: SaveLatestStrategy = "invocation",
                 bidi_agent_save_latest_on: BidiAgentSaveLatestStrategy = "message",
                 multi_agent_save_latest_on: MultiAgentSaveLatestStrategy = "node",
                 snapshot_trigger: SnapshotTrigger | None = None, **checkpointer_options: Any) -> None:
        self.session_id = check_session_id(session_id)
        _check(save_latest_on, get_args(SaveLatestStrategy), "save_latest_on")
        _check(bidi_agent_save_latest_on, get_args(BidiAgentSaveLatestStrategy), "bidi_agent_save_latest_on")
        _check(multi_agent_save_latest_on, get_args(MultiAgentSaveLatestStrategy), "multi_agent_save_latest_on")
        self.save_latest_on: SaveLatestStrategy = save_latest_on
        self.multi_agent_save_latest_on: MultiAgentSaveLatestStrategy = multi_agent_save_latest_on
        self._snapshot_trigger = snapshot_trigger
        self._options = checkpointer_options
        self._storage: BlobStore | None = None
        self._checkpointer: Checkpointer | None = None
        if storage is not None:
            self._bind(storage)

    def _bind(self, storage: Any) -> None:
        if not isinstance(storage, BlobStore):
            raise TypeError(
                "SnapshotSessionManager keeps an agent's history as statehitl checkpoints, which need a store with "
                "compare-and-set: give it one of statehitl.storage's stores (InMemoryStorage, LocalFileStorage, "
                f"S3Storage, DynamoDBStorage), not {type(storage).__name__}"
            )
        view = storage if storage.namespace_path else storage.namespace(_NAMESPACE)
        self._checkpointer = Checkpointer(view.checkpoint_storage(), **self._options)
        self._storage = view

    @property
    def checkpointer(self) -> Checkpointer:
        """The checkpointer of the session's threads, on the store given (or the agent's)."""
        if self._checkpointer is None:
            raise RuntimeError("SnapshotSessionManager requires a storage backend for multi-agent orchestrators. "
                               "Provide storage in the constructor.")
        return self._checkpointer

    @checkpointer.setter
    def checkpointer(self, value: Checkpointer) -> None:
        self._checkpointer = value

    @property
    def storage(self) -> BlobStore:
        """The store view the snapshots are kept in (the store given, under the ``session`` namespace)."""
        if self._storage is None:
            raise RuntimeError("SnapshotSessionManager requires a storage backend. "
                               "Provide storage in the constructor or set storage on the Agent.")
        return self._storage

    def attach_storage(self, storage: Any) -> None:
        """The agent's ``storage=`` (else ``LocalFileStorage()``), for a manager built without one."""
        if self._storage is None:
            from statehitl.storage.local_file_storage import LocalFileStorage

            self._bind(storage if storage is not None else LocalFileStorage())

    # -- keys ---------------------------------------------------------------------------------------

    def _snapshots(self, agent: Any) -> str:
        self.thread_id(agent.agent_id)  # refuses an agent id that could escape the session
        return f"{self.session_id}/scopes/agent/{agent.agent_id}/snapshots/"

    def _key(self, agent: Any, snapshot_id: str | None) -> str:
        if snapshot_id is None:
            return self._snapshots(agent) + _LATEST
        if not isinstance(snapshot_id, str) or not is_uuid7(snapshot_id):
            raise ValueError(f"'{snapshot_id}' is not a valid snapshot id")
        return f"{self._snapshots(agent)}{_HISTORY}/snapshot_{snapshot_id}.json"

    # -- the agent's lifecycle ----------------------------------------------------------------------

    def initialize(self, agent: Any) -> None:
        """Restore ``snapshot_latest`` (what the thread does not hold, and under ``"trigger"`` the checkpoint
        it names) and save after every call from now on."""
        agent.hooks.add_callback(AfterInvocationEvent, self._on_after_invocation)
        run_sync(self._initialize(agent))

    async def _initialize(self, agent: Any) -> None:
        snapshot = await self._read(self._key(agent, None))
        if snapshot is None and self.save_latest_on != "trigger":
            return
        head = await agent.checkpointer.latest(agent.thread_id)
        if snapshot is None:  # "trigger" before any: the agent starts anew, as with Strands (its thread goes on)
            if head is not None:
                await agent.aload_snapshot(Snapshot(scope="agent", schema_version=SNAPSHOT_SCHEMA_VERSION, app_data={},
                                                    data={"messages": [], "state": {}, "interrupt_state": {}}))
            return
        named = snapshot.data.get("checkpoint") or {}
        if self.save_latest_on != "trigger" or (head is not None and named.get("checkpoint_id") == head.checkpoint_id):
            snapshot.data.pop("checkpoint", None)  # the thread's head is where the agent goes on
        elif head is not None:
            logger.info("session_id=<%s> | restoring the last triggered snapshot, not the thread's newer head",
                        self.session_id)
        await agent.aload_snapshot(snapshot)

    async def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        agent = event.agent
        triggered = failed = False
        if self._snapshot_trigger is not None:
            try:
                triggered = bool(self._snapshot_trigger(agent_data=agent))
            except Exception:
                failed = True  # the caller's trigger must not cost the latest save
                logger.exception("session_id=<%s> | snapshot_trigger raised; skipping immutable checkpoint",
                                 self.session_id)
        if triggered:
            snapshot = await self._capture(agent)
            await self.storage.write(self._key(agent, new_uuid7()), _encode(snapshot))
            await self.storage.write(self._key(agent, None), _encode(snapshot))
        elif self.save_latest_on != "trigger" or failed:
            await self.save_snapshot(agent, is_latest=True)

    async def _capture(self, agent: Any) -> Snapshot:
        snapshot: Snapshot = await agent.atake_snapshot(include=_KEPT)
        return snapshot

    # -- Strands' public API ------------------------------------------------------------------------

    async def save_snapshot(self, agent: Any, *, is_latest: bool) -> str | None:
        """Save the agent now: its current checkpoint (the live conversation is checkpointed first if it
        changed) and what the thread does not hold. ``is_latest`` replaces ``snapshot_latest``; otherwise a
        new immutable snapshot is added and its id returned, for ``restore_snapshot``."""
        snapshot_id = None if is_latest else new_uuid7()
        await self.storage.write(self._key(agent, snapshot_id), _encode(await self._capture(agent)))
        return snapshot_id

    async def restore_snapshot(self, agent: Any, *, snapshot_id: str | None = None) -> bool:
        """Take ``agent`` back to a saved snapshot (``snapshot_latest`` without an id); False if there is none.
        ``ValueError`` for an id that is not one ``save_snapshot`` or ``list_snapshot_ids`` gave."""
        snapshot = await self._read(self._key(agent, snapshot_id))
        if snapshot is None:
            return False
        await agent.aload_snapshot(snapshot)
        return True

    async def list_snapshot_ids(self, agent: Any, *, limit: int | None = None,
                                start_after: str | None = None) -> list[str]:
        """The agent's immutable snapshot ids, oldest first (ids sort by time); ``start_after`` pages on."""
        if limit is not None and limit <= 0:
            return []
        if start_after is not None:
            self._key(agent, start_after)  # refuses an id that is not a snapshot id
        keys = await self.storage.list(f"{self._snapshots(agent)}{_HISTORY}/")
        ids = sorted(found.group(1) for key in keys
                     if (found := _SNAPSHOT_KEY.search(key)) and is_uuid7(found.group(1)))
        if start_after is not None:
            ids = [snapshot_id for snapshot_id in ids if snapshot_id > start_after]
        return ids if limit is None else ids[:limit]

    async def delete_session(self) -> None:
        """Delete the session: its snapshots and every thread of it (each agent's, and orchestrators')."""
        storage = self.storage
        keys = await storage.list(f"{self.session_id}/")
        await asyncio.gather(*(storage.delete(key) for key in keys))
        checkpointer = self.checkpointer
        for entry in await checkpointer.threads():
            if entry.thread_id == self.session_id or entry.thread_id.startswith(f"{self.session_id}@"):
                await checkpointer.delete_thread(entry.thread_id)

    def sync_agent(self, agent: Any, **kwargs: Any) -> None:
        """Save ``snapshot_latest`` now (Strands' name for it)."""
        run_sync(self.save_snapshot(agent, is_latest=True))

    async def _read(self, key: str) -> Snapshot | None:
        data = await self.storage.read(key)
        if data is None:
            return None
        try:
            decoded = json.loads(data)
        except (ValueError, UnicodeDecodeError) as error:
            raise SnapshotError(f"Failed to deserialize snapshot: {error}") from None
        return Snapshot.from_dict(decoded)

    def __repr__(self) -> str:
        return f"SnapshotSessionManager(session_id={self.session_id!r}, storage={self._storage!r})"


def _encode(snapshot: Snapshot) -> bytes:
    return json.dumps(snapshot.to_dict(), ensure_ascii=False).encode("utf-8")
