"""What waits on a human, across every thread of a store, from the thread index alone.

The index holds one small entry per thread with the interrupts it waits on and those answered through
a door that does not resume (the inbox, the page, an expiry), so the inbox reads those entries and
never a checkpoint: the same cost on every backend. An interrupt whose answer is stored but not yet
applied is no longer waiting on anyone, so it is not listed as pending.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from statehitl.checkpoint.answer_records import already_answered
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import AnsweredMark, ThreadIndex, Via
from statehitl.errors import AlreadyAnsweredError, UnknownInboxItemError
from statehitl.inbox.answers import read_answer
from statehitl.inbox.by_id import follow_pointers


@dataclass(frozen=True, slots=True)
class PendingInterrupt:
    """One interrupt waiting on a human: where it is, what it asks, since when, and until when."""

    thread_id: str
    id: str
    name: str
    reason: Any
    source: str
    node: str
    machine: str
    since: float
    """When the thread stopped on it (epoch seconds)."""
    expires_at: float | None = None
    on_expire: Any = None
    response_schema: dict[str, Any] | None = None
    """A JSON schema of the response it expects, when its interrupt declared one (else any JSON)."""
    responders: list[str] | None = None
    """Who may answer (names and ``group:NAME`` groups), when its interrupt says; None: anyone."""

    def age(self, now: float | None = None) -> float:
        return max(0.0, (time.time() if now is None else now) - self.since)

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (time.time() if now is None else now)


@dataclass(frozen=True, slots=True)
class UnappliedAnswer:
    """An interrupt answered through a door that does not resume (the inbox without the app, its page, an
    expiry), whose thread has not gone on with the answer yet: a worker or the app's next call applies it."""

    thread_id: str
    id: str
    name: str
    responder: str | None
    via: Via
    answered_at: float


async def apending(store: str | Checkpointer) -> list[PendingInterrupt]:
    """Every interrupt waiting on a human in the store (a URL or a checkpointer), newest first."""
    return reported(await scan(open_store(store))).pending


async def aunapplied(store: str | Checkpointer) -> list[UnappliedAnswer]:
    """Every answer stored and not yet applied in the store, newest first: no longer waiting on a human,
    not yet acted on either."""
    return reported(await scan(open_store(store))).unapplied


@dataclass(frozen=True, slots=True)
class Scan:
    """One look at the store: what waits unanswered (newest first), the answers stored and not yet
    applied by ``(thread, interrupt id)`` with the checkpoint they answer, and the ids of the threads
    waiting (answered or not); ``answered_items`` are the interrupts of those answers, as asked."""

    pending: list[PendingInterrupt]
    answered: dict[tuple[str, str], tuple[int, AnsweredMark]]
    waiting: list[str]
    unapplied: list[UnappliedAnswer]
    answered_items: list[PendingInterrupt] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    """Threads whose index entry could not be read (damaged, or written outside statehitl), with why: left
    out, so that one bad entry never hides every other thread's interrupts."""


async def scan(checkpointer: Checkpointer) -> Scan:
    """The index entries of the interrupted threads: a listing and one small read per thread, never a
    checkpoint. What listing, finding and sweeping all start from."""
    answered: dict[tuple[str, str], tuple[int, AnsweredMark]] = {}
    found = []
    waiting = []
    unapplied = []
    answered_items = []
    unreadable: dict[str, str] = {}
    for entry in await checkpointer.threads("interrupted", unreadable=unreadable):
        waiting.append(entry.thread_id)
        for mark in entry.answered:
            answered[entry.thread_id, mark.interrupt_id] = (entry.seq, mark)
        for record in entry.interrupts:
            item = pending_item(entry, record)
            if (entry.thread_id, record.id) in answered:
                mark = answered[entry.thread_id, record.id][1]
                unapplied.append(UnappliedAnswer(thread_id=entry.thread_id, id=record.id, name=record.name,
                                                 responder=mark.responder, via=mark.via, answered_at=mark.at))
                answered_items.append(item)
                continue
            found.append(item)
    found.sort(key=lambda p: (-p.since, p.thread_id, p.id))
    unapplied.sort(key=lambda a: (-a.answered_at, a.thread_id, a.id))
    return Scan(found, answered, waiting, unapplied, answered_items, unreadable)


def reported(looked: Scan) -> Scan:
    """``looked``, its unreadable entries logged: what a caller that shows only part of a scan does."""
    if looked.unreadable:
        logger.warning("the index entries of %d thread(s) cannot be read, and their interrupts are not listed: %s",
                       len(looked.unreadable), "; ".join(f"{t}: {why}" for t, why in sorted(looked.unreadable.items())))
    return looked


def pending_item(entry: ThreadIndex, record: InterruptRecord) -> PendingInterrupt:
    """The inbox's view of ``record``, an interrupt the thread of ``entry`` waits on."""
    return PendingInterrupt(
        thread_id=entry.thread_id, id=record.id, name=record.name, reason=record.reason, source=record.source,
        node=record.node, machine=entry.machine, since=entry.updated_at, expires_at=record.expires_at,
        on_expire=record.on_expire, response_schema=record.response_schema, responders=record.responders,
    )


async def afind_pending(store: str | Checkpointer, wanted: str) -> PendingInterrupt:
    """The pending interrupt with id ``wanted`` (or a unique start of it, as the list shows it).

    ``AlreadyAnsweredError`` if its answer is stored; ``UnknownInboxItemError`` naming what is pending
    if no interrupt matches, or more than one does.
    """
    checkpointer = open_store(store)
    pointed = await follow_pointers(checkpointer, wanted)
    quick = [pending_item(entry, record) for entry, record in pointed.waiting
             if record.id == wanted or _starts(record.id, wanted)]
    if len(quick) == 1:
        return quick[0]
    given = sorted((iid, answer) for iid, answer in pointed.answered.items() if iid == wanted or _starts(iid, wanted))
    if not quick and given:
        raise AlreadyAnsweredError(already_answered(given[0][1].name, given[0][0], given[0][1]))
    looked = reported(await scan(checkpointer))  # no pointer settled it: threads from before pointers, or a typo
    found = _match(looked.pending, wanted)
    if found is not None:
        return found
    for (thread, iid), (seq, _) in sorted(looked.answered.items()):
        if iid == wanted or _starts(iid, wanted):
            first = await read_answer(checkpointer, thread, iid, seq)
            raise AlreadyAnsweredError(already_answered(first.name if first else "?", iid, first))
    raise _not_found(looked.pending, wanted)


async def afind_answerable(store: str | Checkpointer, wanted: str) -> PendingInterrupt:
    """The interrupt with id ``wanted`` (or a unique start of it) that an answer may be given to: pending, or
    answered and not yet applied. What a door answers: whether it was answered first is for the answer's
    own write to say, after it checked who is answering, so a responder who may not answer learns nothing
    of an earlier answer; one whose thread went on with its answer is ``AlreadyAnsweredError`` naming it.
    ``UnknownInboxItemError`` naming what is pending if none matches (or several)."""
    checkpointer = open_store(store)
    pointed = await follow_pointers(checkpointer, wanted)
    quick = [pending_item(entry, record) for entry, record in pointed.waiting
             if record.id == wanted or _starts(record.id, wanted)]
    if len(quick) == 1 and not pointed.answered:
        return quick[0]
    looked = reported(await scan(checkpointer))  # an answered one may still wait: the listing says
    found = _match([*looked.pending, *looked.answered_items], wanted)
    if found is not None:
        return found
    given = sorted((iid, answer) for iid, answer in pointed.answered.items() if iid == wanted or _starts(iid, wanted))
    if given:  # answered, and its thread went on with the answer
        raise AlreadyAnsweredError(already_answered(given[0][1].name, given[0][0], given[0][1]))
    raise _not_found(looked.pending, wanted)


def _match(items: list[PendingInterrupt], wanted: str) -> PendingInterrupt | None:
    """The one item whose id is ``wanted`` or starts with it; None for none, ``UnknownInboxItemError`` for several."""
    matches = [p for p in items if p.id == wanted] or [p for p in items if _starts(p.id, wanted)]
    if len(matches) > 1:
        raise UnknownInboxItemError(f"interrupt id {wanted!r} is ambiguous: it starts "
                                    f"{', '.join(p.id for p in matches)}; give more of it")
    return matches[0] if matches else None


def _not_found(items: list[PendingInterrupt], wanted: str) -> UnknownInboxItemError:
    waiting = ", ".join(f"{p.id} ({p.name} on thread {p.thread_id})" for p in items[:10]) or "none"
    if len(wanted.split(":", 1)[-1]) < _SHORTEST and wanted not in {p.id for p in items}:
        return UnknownInboxItemError(f"interrupt id {wanted!r} is too short to pick one: give at least {_SHORTEST} "
                                     f"characters of the id (after its 'v2:'); pending: {waiting}")
    return UnknownInboxItemError(f"no pending interrupt has id {wanted!r}; pending: {waiting}")


def pending(store: str | Checkpointer) -> list[PendingInterrupt]:
    """Sync ``apending``."""
    from statehitl._sync import run_sync

    return run_sync(apending(store))


def unapplied(store: str | Checkpointer) -> list[UnappliedAnswer]:
    """Sync ``aunapplied``."""
    from statehitl._sync import run_sync

    return run_sync(aunapplied(store))


def find_pending(store: str | Checkpointer, wanted: str) -> PendingInterrupt:
    """Sync ``afind_pending``."""
    from statehitl._sync import run_sync

    return run_sync(afind_pending(store, wanted))


def open_store(store: str | Checkpointer) -> Checkpointer:
    """A checkpointer for a store URL (or the checkpointer given)."""
    return store if isinstance(store, Checkpointer) else Checkpointer.from_url(store)


logger = logging.getLogger("statehitl.inbox")

_SHORTEST = 4
"""Characters of an id's digest a prefix must give: fewer would pick interrupts by accident."""


def _starts(iid: str, wanted: str) -> bool:
    """A prefix of the id, with or without its ``v2:`` version tag (at least 4 characters of the digest)."""
    digest = iid.split(":", 1)[-1]
    bare = wanted.split(":", 1)[-1] if wanted.startswith(("v1:", "v2:")) else wanted
    return len(bare) >= _SHORTEST and digest.startswith(bare) and (bare == wanted or iid.startswith(wanted))
