"""Which thread raised an interrupt, by its id: answering by id reads one thread, not the whole store.

An interrupt id is a digest (``interrupt_ids``): it names its thread only one way, so a reviewer who
answers ``v2:dc33…`` would otherwise send the inbox through every thread's index entry to find it, which
at 50,000 waiting threads took seconds. When a thread's index entry comes to list an interrupt, a small
pointer ``ids/<first two hex digits>/<digest>.<version>`` is created beside it, holding the thread id.
The first two digits spread the pointers over 256 listings; an id prefix (four digits at least, as the
inbox asks) lies in one of them, so looking up a prefix lists that one.

A pointer is a hint, never the truth: whoever follows it reads the thread's own index entry and
answers, which say whether the interrupt waits there or was answered. A pointer that is missing (a
thread that stopped before pointers were written, a write that failed) costs only the slow path, a
listing of every waiting thread; one that points at the wrong thread (written outside statehitl)
finds no such interrupt there and is passed over. An id names one thread for good (its digest covers
the thread id), so a pointer is created once and never rewritten.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from statehitl.checkpoint.storage import ABSENT, Storage, validate_thread_id
from statehitl.errors import CheckpointConflict, InvalidThreadIdError, StorageError

IDS_PREFIX = "ids/"
_SHARD = 2
"""Hex digits of the digest that pick a pointer's listing."""

logger = logging.getLogger("statehitl.checkpoint")


class InterruptPointer(BaseModel):
    """The thread an interrupt id belongs to."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["interrupt-pointer"] = "interrupt-pointer"
    thread_id: str

    @field_validator("thread_id")
    @classmethod
    def _a_thread_id(cls, value: str) -> str:
        try:
            return validate_thread_id(value)
        except InvalidThreadIdError as exc:
            raise ValueError(str(exc)) from None


def _split(interrupt_id: str) -> tuple[str, str] | None:
    """(version, digest) of an id as ``interrupt_ids`` makes them; None for anything else."""
    version, _, digest = interrupt_id.partition(":")
    if version not in {"v1", "v2"} or len(digest) <= _SHARD or not digest.isalnum():
        return None
    return version, digest.lower()


def _key(version: str, digest: str) -> str:
    return f"{IDS_PREFIX}{digest[:_SHARD]}/{digest}.{version}"


async def point_to_thread(storage: Storage, thread_id: str, interrupt_ids: Iterable[str]) -> None:
    """Create the pointers from ``interrupt_ids`` to ``thread_id`` that do not exist yet (unforced: a pointer
    lost in a crash costs a slow lookup, nothing else). A failure is logged, not raised: the checkpoint and
    its index entry are what matter, and a missing pointer only sends a lookup the long way."""
    data = InterruptPointer(thread_id=thread_id).model_dump_json().encode()
    for interrupt_id in interrupt_ids:
        parts = _split(interrupt_id)
        if parts is None:
            continue
        try:
            await storage.write(_key(*parts), data, expect=ABSENT, durable=False)
        except CheckpointConflict:
            continue  # created before: an id belongs to one thread for good
        except StorageError as exc:
            logger.warning("could not record which thread interrupt %s belongs to (answering it by id will list "
                           "every waiting thread instead): %s", interrupt_id, exc)


async def pointed_threads(storage: Storage, wanted: str) -> dict[str, str]:
    """The interrupt ids ``wanted`` is (or starts, with or without its ``v2:``), each with the thread its
    pointer names: one listing and a read per match. Empty when no pointer matches, including for
    prefixes too short to pick a listing."""
    versions: tuple[str, ...] = ("v1", "v2")
    digest = wanted.lower()
    if ":" in wanted:
        parts = _split(wanted)
        versions, digest = ((parts[0],), parts[1]) if parts else ((), "")
    if len(digest) < _SHARD or not digest.isalnum():
        return {}
    found: dict[str, str] = {}
    for key in await storage.list(f"{IDS_PREFIX}{digest[:_SHARD]}/{digest}"):
        name, _, version = key.rsplit("/", 1)[-1].rpartition(".")
        value = await storage.read(key) if version in versions else None
        if value is None:
            continue
        try:
            found[f"{version}:{name}"] = InterruptPointer.model_validate_json(value[0]).thread_id
        except ValidationError:
            logger.warning("interrupt pointer %r is not one statehitl wrote; passed over", key)
    return found


async def forget_pointers(storage: Storage, interrupt_ids: Iterable[str]) -> None:
    """Delete the pointers of ``interrupt_ids`` (their thread is being deleted)."""
    for interrupt_id in set(interrupt_ids):
        parts = _split(interrupt_id)
        if parts is not None:
            await storage.delete(_key(*parts))
