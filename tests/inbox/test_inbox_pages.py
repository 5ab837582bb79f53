"""The inbox a page at a time (``inbox.pending_page``) on the memory and file stores: pages cover every
pending interrupt once in an order that holds, a thread answered between pages makes no other one be
skipped or shown twice, a bad cursor is refused saying why, and a page reads in proportion to itself."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from paging_program import asking_app, every_page, leave_waiting
from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.file import FileStorage
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.checkpoint.storage import Storage
from statehitl.errors import InvalidCursorError
from statehitl.testing import CountingStorage

THREADS = [f"job-{i:03d}" for i in range(11)]
TWICE = {"job-003", "job-004", "job-009"}


@pytest.fixture(params=["memory", "file"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    return MemoryStorage() if request.param == "memory" else FileStorage(tmp_path / "store")


def test_pages_cover_every_pending_interrupt_once_in_an_order_that_holds(storage: Storage) -> None:
    checkpointer = Checkpointer(storage)
    leave_waiting(checkpointer, THREADS, twice=TWICE)
    everything = sorted((p.thread_id, p.id) for p in inbox.pending(checkpointer))
    assert len(everything) == len(THREADS) + len(TWICE)
    for limit in (1, 2, 3, 4, 50):
        pages = every_page(checkpointer, limit)
        flat = [item for page in pages for item in page]
        assert flat == everything, f"limit={limit}: by thread id, then interrupt id, each once"
        assert all(len(page) == limit for page in pages[:-1])
        assert every_page(checkpointer, limit) == pages
    # the last page is not followed by an empty one when the listing ends inside it
    assert every_page(checkpointer, 50) == [everything]


def test_a_page_may_end_inside_a_thread_and_the_next_goes_on_there(storage: Storage) -> None:
    checkpointer = Checkpointer(storage)
    leave_waiting(checkpointer, ["a", "b", "c"], twice={"b"})
    first = inbox.pending_page(checkpointer, limit=2)
    assert [p.thread_id for p in first.items] == ["a", "b"]
    assert first.next_cursor is not None
    second = inbox.pending_page(checkpointer, limit=2, cursor=first.next_cursor)
    assert [p.thread_id for p in second.items] == ["b", "c"]
    assert second.items[0].id != first.items[1].id
    assert second.next_cursor is None


def test_a_thread_answered_between_pages_skips_nothing_and_repeats_nothing(storage: Storage) -> None:
    checkpointer = Checkpointer(storage)
    leave_waiting(checkpointer, THREADS, twice=TWICE)
    everything = sorted((p.thread_id, p.id) for p in inbox.pending(checkpointer))
    first = inbox.pending_page(checkpointer, limit=4)
    shown = [(p.thread_id, p.id) for p in first.items]
    assert shown == everything[:4]
    # answer one thread already shown, and one still to come; resume another one to completion
    inbox.answer(checkpointer, shown[0][1], "yes")
    later = everything[7]  # job-005
    inbox.answer(checkpointer, later[1], "no")
    app = asking_app(checkpointer)
    done = everything[8]  # job-006, which waits on one interrupt
    inbox.answer(checkpointer, done[1], "ok")
    inbox.resume_answered(app, done[0])
    assert done[0] not in {p.thread_id for p in inbox.pending(checkpointer)}
    rest = [item for page in every_page_from(checkpointer, 4, first.next_cursor) for item in page]
    assert rest == [item for item in everything[4:] if item not in {later, done}]


def every_page_from(store: Checkpointer, limit: int, cursor: str | None) -> list[list[tuple[str, str]]]:
    pages = []
    while cursor is not None:
        page = inbox.pending_page(store, limit=limit, cursor=cursor)
        pages.append([(p.thread_id, p.id) for p in page.items])
        cursor = page.next_cursor
    return pages


def test_a_bad_cursor_or_limit_is_refused_saying_what_is_wrong(storage: Storage, tmp_path: Path) -> None:
    checkpointer = Checkpointer(storage)
    leave_waiting(checkpointer, THREADS[:5])
    cursor = inbox.pending_page(checkpointer, limit=2).next_cursor
    assert cursor is not None
    altered = cursor[:10] + ("A" if cursor[10] != "A" else "B") + cursor[11:]
    for bad, why in [(altered, "not the text a page gave"), (cursor[:-3], "not the text a page gave"),
                     ("hello", "not the text a page gave"), ("", "not ''")]:
        with pytest.raises(InvalidCursorError, match=why) as refused:
            inbox.pending_page(checkpointer, limit=2, cursor=bad)
        assert "start again from the first page" in str(refused.value)
    other = Checkpointer(FileStorage(tmp_path / "other"))
    leave_waiting(other, THREADS[:5])
    foreign = inbox.pending_page(other, limit=2).next_cursor
    assert foreign is not None
    if isinstance(storage, FileStorage):  # a memory store does not say where its data lives
        with pytest.raises(InvalidCursorError, match="it pages another store"):
            inbox.pending_page(checkpointer, limit=2, cursor=foreign)
    signed = Checkpointer(storage, signing_key=b"k" * 32)
    with pytest.raises(InvalidCursorError, match="another signing key"):
        inbox.pending_page(signed, limit=2, cursor=cursor)
    for limit in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="limit must be a whole number of at least 1"):
            inbox.pending_page(checkpointer, limit=limit)  # type: ignore[arg-type]
    assert [p.thread_id for p in inbox.pending_page(checkpointer, limit=2, cursor=cursor).items] == THREADS[2:4]


def test_one_page_reads_in_proportion_to_the_page_not_the_store(storage: Storage) -> None:
    counted = CountingStorage(storage)
    checkpointer = Checkpointer(counted)
    leave_waiting(checkpointer, [f"t{i:04d}" for i in range(120)])
    counted.reset()
    page = inbox.pending_page(checkpointer, limit=5)
    second = inbox.pending_page(checkpointer, limit=5, cursor=page.next_cursor)
    counts = counted.reset()
    assert [p.thread_id for p in second.items] == [f"t{i:04d}" for i in range(5, 10)]
    assert len(counts.keys_read) == 12, counts.keys_read  # each page reads one entry more, to tell where it ends
    assert counts.calls["read_named_page"] == 2
    assert counts.calls["list"] == 0


def test_an_unreadable_entry_is_named_and_hides_nothing(storage: Storage) -> None:
    checkpointer = Checkpointer(storage)
    leave_waiting(checkpointer, THREADS[:4])
    asyncio.run(damage(storage, "index/job-001/entry"))
    page = inbox.pending_page(checkpointer, limit=10)
    assert [p.thread_id for p in page.items] == ["job-000", "job-002", "job-003"]
    assert list(page.unreadable) == ["job-001"]
    assert page.next_cursor is None


async def damage(storage: Storage, key: str) -> None:
    found = await storage.read(key)
    assert found is not None
    await storage.write(key, b"not an index entry", expect=found[1])


def test_an_interrupt_answered_inside_a_thread_between_pages_is_not_shown(storage: Storage) -> None:
    checkpointer = Checkpointer(storage)
    leave_waiting(checkpointer, ["a", "b", "c"], twice={"b"})
    first = inbox.pending_page(checkpointer, limit=2)
    rest = [p for p in inbox.pending(checkpointer) if p.thread_id == "b" and p.id != first.items[1].id]
    inbox.answer(checkpointer, rest[0].id, "no")
    second = inbox.pending_page(checkpointer, limit=2, cursor=first.next_cursor)
    assert [p.thread_id for p in second.items] == ["c"]
