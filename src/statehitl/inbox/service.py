"""Answering and sweeping: the two things the inbox does to a store, for the CLI, the web page and code.

Both record the answer first (create-once, so the first answer wins) and then, when the application's
code is at hand (``build``), resume the thread through the engine at once; without it the answer waits
in the store for the application's ``resume_answered`` call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statehitl._text import when_text
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import StoredAnswer, Via
from statehitl.errors import AlreadyAnsweredError
from statehitl.inbox.answers import store_answer
from statehitl.inbox.apps import AppBuilder, apply_answered, build_app
from statehitl.inbox.listing import PendingInterrupt, afind_answerable, open_store, scan


@dataclass(frozen=True, slots=True)
class Answered:
    """What answering did: the binding answer, whether this call gave it, and the thread's status after a
    resume (None: not resumed)."""

    interrupt: PendingInterrupt
    answer: StoredAnswer
    status: str | None = None
    result: Any = None
    first: bool = True
    """Whether this call's answer is the one that binds. False: the same answer was stored first, and binds
    as given then (``answer`` says by whom, through which door, when; the audit trail credits them)."""

    def bound_by(self) -> str | None:
        """For a repeat of an answer given first by someone else, who gave it, how and when (None when this
        call's answer binds): what every door tells a second reviewer who gave the same answer."""
        if self.first:
            return None
        first = self.answer
        who = "its expiry default" if first.via == "expiry" else (first.responder or "someone unnamed")
        return (f"the same answer was given first by {who} ({first.via}) at {when_text(first.answered_at)}; that "
                "answer binds, and the audit trail credits it")


@dataclass
class SweepReport:
    """What one sweep did: the interrupts it answered with their default, and the threads it resumed."""

    expired: list[PendingInterrupt] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)


async def aanswer(store: str | Checkpointer, interrupt_id: str, response: Any, *, responder: str | None = None,
                  groups: Sequence[str] = (), comment: str | None = None, build: AppBuilder | None = None,
                  via: Via = "inbox") -> Answered:
    """Answer a pending interrupt. ``AlreadyAnsweredError`` if it was answered first (by anyone).

    ``responder`` is who answers and ``groups`` the groups they belong to: the caller vouches for both
    (the terminal trusts its user, the page its authentication); ``comment`` is what they say about it (kept
    in the audit trail). An interrupt that names who may answer
    refuses anyone else with ``ResponderNotAllowedError``, and keeps the refusal in the audit trail.
    With ``build`` the thread is resumed now, in this process; without it the answer is stored, and a
    worker (``statehitl worker``) or the application's next call on the thread without answers
    (``invoke(None)``, a bare agent call, ``resume_answered``) applies it.
    """
    checkpointer = open_store(store)
    return await answer_pending(checkpointer, await afind_answerable(checkpointer, interrupt_id), response,
                                responder=responder, groups=groups, comment=comment, build=build, via=via)


async def answer_pending(checkpointer: Checkpointer, item: PendingInterrupt, response: Any, *,
                         responder: str | None = None, groups: Sequence[str] = (), comment: str | None = None,
                         build: AppBuilder | None = None, via: Via = "inbox") -> Answered:
    """``aanswer`` for an interrupt already found (the web page looks it up to build the response).

    The answer's one write checks, in order, who answers (a refusal is audited and says nothing of an
    earlier answer), then its type (the schema; the type itself where this process knows it), then that
    no different answer came first. With ``build``, the resume that follows checks the type once more
    as the handler takes it, and an answer refused there is withdrawn, so the door reports the refusal
    and the interrupt can be answered again."""
    stored, first = await store_answer(checkpointer, item.thread_id, item.id, response, responder=responder,
                                       groups=groups, comment=comment, via=via)
    if build is None:
        return Answered(item, stored, first=first)
    app = await asyncio.to_thread(build_app, build, item.thread_id)  # the user's code: off the loop
    done = await apply_answered(app, item.thread_id)
    if done is None:
        return Answered(item, stored, first=first)
    return Answered(item, stored, done.status, done.result, first=first)


def answer(store: str | Checkpointer, interrupt_id: str, response: Any, *, responder: str | None = None,
           groups: Sequence[str] = (), comment: str | None = None, build: AppBuilder | None = None,
           via: Via = "inbox") -> Answered:
    """Sync ``aanswer``."""
    from statehitl._sync import run_sync

    return run_sync(aanswer(store, interrupt_id, response, responder=responder, groups=groups, comment=comment,
                            build=build, via=via))


async def asweep(store: str | Checkpointer, app: AppBuilder | None = None, now: float | None = None) -> SweepReport:
    """Answer every expired interrupt with its ``on_expire`` default, once, however many sweepers run.

    Each default is recorded with a create-once write, so of racing sweepers (or a sweeper and a
    reviewer) exactly one answers each interrupt. With ``app`` (``build(thread_id) -> app``) the
    threads with stored answers are then resumed; the engine's claim lets exactly one process run
    each resume, so the work after the interrupt runs once.
    """
    checkpointer = open_store(store)
    moment = time.time() if now is None else now
    report = SweepReport()
    looked = await scan(checkpointer)
    answered = {thread for thread, _ in looked.answered}
    for item in looked.pending:
        if not item.expired(moment):
            continue
        try:
            _, applied = await store_answer(checkpointer, item.thread_id, item.id, item.on_expire,
                                            responder="expiry", via="expiry")
        except AlreadyAnsweredError:
            continue  # a reviewer answered it first
        answered.add(item.thread_id)
        if not applied:
            continue  # another sweeper stored the same default first: it reports it
        report.expired.append(item)
    if app is not None:  # every waiting thread with a stored answer: this sweep's defaults and earlier answers
        for thread in sorted(answered & set(looked.waiting)):
            if await apply_answered(await asyncio.to_thread(build_app, app, thread), thread) is not None:
                report.resumed.append(thread)
    return report


def sweep(store: str | Checkpointer, app: AppBuilder | None = None, now: float | None = None) -> SweepReport:
    """Sync ``asweep``: ``statehitl.inbox.sweep("file://checkpoints", app=build)``."""
    from statehitl._sync import run_sync

    return run_sync(asweep(store, app, now))

