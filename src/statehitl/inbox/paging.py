"""The inbox a page at a time: ``pending_page(store, limit=50)`` and the cursor of the next page.

A page reads the thread index from where the last one stopped (``Checkpointer.entries_after``: S3's
``ListObjectsV2`` from ``StartAfter``, DynamoDB's ``Scan`` from ``ExclusiveStartKey``), so what one page
costs grows with the page, not with how many threads the store holds. The order is the store's paging
order (by thread id, then interrupt id; on DynamoDB the table's scan order), not newest first as
``pending`` sorts the whole listing: an order by time would need every entry read to page it.

A page holds at most ``limit`` interrupts; one that ends inside a thread's interrupts says so in its
cursor, and the next page goes on inside that thread after the last interrupt shown. An interrupt
answered between two pages is not shown again; another thread is never skipped or shown twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.index import thread_of_key
from statehitl.checkpoint.page_cursor import PageCursor, check_limit, cursor_after, decode_cursor
from statehitl.checkpoint.records import ThreadIndex
from statehitl.errors import CheckpointCorruptError
from statehitl.inbox.listing import PendingInterrupt, open_store, pending_item


@dataclass(frozen=True, slots=True)
class PendingPage:
    """One page of the interrupts waiting on a human, and where the next page starts."""

    items: list[PendingInterrupt]
    next_cursor: str | None
    """Pass it back as ``cursor=`` for the next page; None once the listing has ended. (A page reads one
    thread more than it needs to tell; if that thread is answered before the next page, that page is empty.)"""
    unreadable: dict[str, str] = field(default_factory=dict)
    """Threads of this page whose index entry could not be read, with why: left out, never hiding the others."""


def waiting_on(entry: ThreadIndex) -> list[PendingInterrupt]:
    """The interrupts the thread of ``entry`` waits on that have no answer stored yet, by id (empty for a
    thread that is not interrupted)."""
    if entry.status != "interrupted":
        return []
    answered = {mark.interrupt_id for mark in entry.answered}
    return sorted((pending_item(entry, record) for record in entry.interrupts if record.id not in answered),
                  key=lambda item: item.id)


async def apending_page(store: str | Checkpointer, *, limit: int, cursor: str | None = None) -> PendingPage:
    """At most ``limit`` interrupts waiting on a human, from the start of the store's paging order or from
    ``cursor`` (a page's ``next_cursor``), and the cursor of the next page.

    ``ValueError`` for a ``limit`` below 1; ``InvalidCursorError`` for a cursor this store's inbox did not
    give (altered, from another store or listing), so a bad cursor never starts a listing somewhere else.
    """
    limit = check_limit(limit)
    checkpointer = open_store(store)
    start = None if cursor is None else decode_cursor(
        cursor, listing="pending", storage=checkpointer.storage, signing_key=checkpointer.signing_key)
    pager = _Pager(checkpointer, limit)
    after = None
    if start is not None:
        after = start.after
        if start.within is not None and await pager.rest_of_thread(start):
            return pager.page(after, within=pager.items[-1].id)
        if len(pager.items) == limit:
            return pager.page(after)
    async with contextlib.aclosing(checkpointer.entries_after(after, batch=limit + 1,
                                                               unreadable=pager.unreadable)) as entries:
        async for key, entry, last in entries:
            waiting = waiting_on(entry)
            room = limit - len(pager.items)
            pager.items.extend(waiting[:room])
            if len(waiting) > room:
                return pager.page(key, within=pager.items[-1].id)
            if len(pager.items) == limit:
                return pager.page(None if last else key)
    return pager.page(None)


def page_request(query: Mapping[str, str]) -> tuple[int, str | None] | None:
    """The page a web request's query asks for (``?limit=N&cursor=C``) as ``(limit, cursor)``, or None for
    the whole listing; ``ValueError`` naming what is wrong with it (the cursor itself is checked by
    ``apending_page``)."""
    limit, cursor = query.get("limit"), query.get("cursor")
    if limit is None:
        if cursor is not None:
            raise ValueError("cursor= continues a paged listing: give the limit= it was made with too")
        return None
    try:
        size = int(limit)
    except ValueError:
        size = 0
    if size < 1:
        raise ValueError(f"limit= must be a whole number of at least 1 (items per page), not {limit!r}")
    return size, cursor


def pending_page(store: str | Checkpointer, *, limit: int, cursor: str | None = None) -> PendingPage:
    """Sync ``apending_page``."""
    from statehitl._sync import run_sync

    return run_sync(apending_page(store, limit=limit, cursor=cursor))


class _Pager:
    """The page being gathered, and how its cursor is made."""

    def __init__(self, checkpointer: Checkpointer, limit: int) -> None:
        self.checkpointer = checkpointer
        self.limit = limit
        self.items: list[PendingInterrupt] = []
        self.unreadable: dict[str, str] = {}

    async def rest_of_thread(self, start: PageCursor) -> bool:
        """The interrupts of the cursor's thread after the last one shown, into the page; whether they
        overflow it (the page then ends inside the thread again)."""
        thread_id = thread_of_key(start.after)
        assert thread_id is not None  # decode_cursor checked it
        try:
            entry = await self.checkpointer.thread_info(thread_id)
        except CheckpointCorruptError as exc:
            self.unreadable[thread_id] = str(exc)
            return False
        rest = [] if entry is None else [item for item in waiting_on(entry) if item.id > (start.within or "")]
        self.items.extend(rest[: self.limit])
        return len(rest) > self.limit

    def page(self, after: str | None, *, within: str | None = None) -> PendingPage:
        cursor = None if after is None else cursor_after(
            "pending", after, storage=self.checkpointer.storage, signing_key=self.checkpointer.signing_key,
            within=within)
        return PendingPage(self.items, cursor, self.unreadable)
