"""The checkpoint engine: turns checkpoint records into storage keys, shared by every backend.

Layout: ``threads/<thread>/cp/<seq>``, one immutable record per checkpoint, created with
``expect=ABSENT``. Creating sequence number N+1 is the compare-and-set: of two writers that both read
N, exactly one creates N+1 and the other gets ``CheckpointConflict``. The newest record is the thread's
head; older ones are its history.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from statehitl.checkpoint.records import SCHEMA_VERSION, CheckpointRecord
from statehitl.checkpoint.storage import ABSENT, Storage, validate_thread_id
from statehitl.checkpoint.url import storage_from_url
from statehitl.errors import CheckpointConflict, CheckpointCorruptError

__all__ = ["Checkpointer"]


class Checkpointer:
    """Reads and commits a thread's checkpoints on any ``Storage``."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    @classmethod
    def from_url(cls, url: str) -> Checkpointer:
        """A checkpointer on the storage a URL names: ``memory://``, ``file://DIR``, ``s3://...``."""
        return cls(storage_from_url(url))

    @staticmethod
    def _prefix(thread_id: str) -> str:
        return f"threads/{validate_thread_id(thread_id)}/cp/"

    def _key(self, thread_id: str, seq: int) -> str:
        return f"{self._prefix(thread_id)}{seq:012d}"

    def _decode(self, key: str, data: bytes) -> CheckpointRecord:
        try:
            raw = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CheckpointCorruptError(
                f"checkpoint record {key!r} is not valid JSON (truncated or corrupt): {exc}"
            ) from None
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise CheckpointCorruptError(
                f"checkpoint record {key!r} has schema version {version}, newer than this statehitl "
                f"understands ({SCHEMA_VERSION}); upgrade statehitl to read it"
            )
        try:
            return CheckpointRecord.model_validate(raw)
        except ValidationError as exc:
            raise CheckpointCorruptError(f"checkpoint record {key!r} is malformed: {exc}") from None

    async def latest(self, thread_id: str) -> CheckpointRecord | None:
        """The thread's newest checkpoint, or None for a thread never written."""
        keys = await self.storage.list(self._prefix(thread_id))
        if not keys:
            return None
        found = await self.storage.read(keys[-1])
        if found is None:  # deleted between list and read
            return None
        return self._decode(keys[-1], found[0])

    async def get(self, thread_id: str, checkpoint_id: str | int) -> CheckpointRecord:
        """One checkpoint by id; ``KeyError`` naming thread and id if there is none."""
        try:
            seq = int(checkpoint_id)
        except ValueError:
            raise KeyError(f"checkpoint id {checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}") from None
        key = self._key(thread_id, seq)
        found = await self.storage.read(key)
        if found is None:
            raise KeyError(f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}")
        return self._decode(key, found[0])

    async def history(self, thread_id: str) -> list[CheckpointRecord]:
        """All of the thread's checkpoints, newest first."""
        records = []
        for key in reversed(await self.storage.list(self._prefix(thread_id))):
            found = await self.storage.read(key)
            if found is not None:
                records.append(self._decode(key, found[0]))
        return records

    async def commit(self, record: CheckpointRecord, *, durable: bool = True) -> None:
        """Create ``record`` as the thread's next checkpoint; ``CheckpointConflict`` if it is stale."""
        key = self._key(record.thread_id, record.seq)
        data = record.model_dump_json().encode()
        try:
            await self.storage.write(key, data, expect=ABSENT, durable=durable)
        except CheckpointConflict:
            raise CheckpointConflict(
                f"thread {record.thread_id!r} moved past checkpoint {record.parent_seq} while this run "
                "was working (another process resumed or updated it); reload the thread and try again"
            ) from None

    async def threads(self) -> list[str]:
        """Ids of every thread with at least one checkpoint."""
        seen: dict[str, None] = {}
        for key in await self.storage.list("threads/"):
            seen.setdefault(key.split("/", 2)[1], None)
        return list(seen)

    async def delete_thread(self, thread_id: str) -> int:
        """Remove every record of the thread; returns how many were removed."""
        return await self.storage.delete(f"threads/{validate_thread_id(thread_id)}/")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r})"
