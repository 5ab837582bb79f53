"""The inbox a page at a time on S3 (moto_server) and DynamoDB (DynamoDB Local): pages cover every pending
interrupt once, in an order that holds (by key on S3, the table's scan order on DynamoDB), a thread
answered between pages makes no other one be skipped or shown twice, and one page costs requests in
proportion to the page, not to the store."""

from __future__ import annotations

from collections import Counter
from typing import Any

from paging_program import asking_app, every_page, leave_waiting
from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer

THREADS = [f"job-{i:03d}" for i in range(24)]
TWICE = {"job-002", "job-011", "job-017"}


def flat(pages: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    return [item for page in pages for item in page]


def test_pages_cover_every_pending_interrupt_once_and_hold_their_order(cloud_store_url: str) -> None:
    checkpointer = Checkpointer.from_url(cloud_store_url)
    leave_waiting(checkpointer, THREADS, twice=TWICE)
    everything = sorted((p.thread_id, p.id) for p in inbox.pending(checkpointer))
    assert len(everything) == len(THREADS) + len(TWICE)
    order = flat(every_page(checkpointer, 5))
    assert sorted(order) == everything
    assert len(set(order)) == len(order)
    if cloud_store_url.startswith("s3://"):
        assert order == everything, "S3 lists keys in order: by thread id, then interrupt id"
    for limit in (1, 4, 7, 100):
        pages = every_page(checkpointer, limit)
        assert flat(pages) == order, f"limit={limit}: the same order at any page size"
        assert all(len(page) == limit for page in pages[:-1])


def test_a_thread_answered_between_pages_skips_nothing_and_repeats_nothing(cloud_store_url: str) -> None:
    checkpointer = Checkpointer.from_url(cloud_store_url)
    leave_waiting(checkpointer, THREADS, twice=TWICE)
    order = flat(every_page(checkpointer, 100))
    first = inbox.pending_page(checkpointer, limit=6)
    assert [(p.thread_id, p.id) for p in first.items] == order[:6]
    inbox.answer(checkpointer, order[0][1], "yes")  # shown already
    later = next(item for item in order[9:] if item[0] not in TWICE)  # still to come
    inbox.answer(checkpointer, later[1], "no")
    done = next(item for item in order[12:] if item[0] not in TWICE)  # resumed to its end meanwhile
    inbox.answer(checkpointer, done[1], "ok")
    inbox.resume_answered(asking_app(checkpointer), done[0])
    rest: list[tuple[str, str]] = []
    cursor = first.next_cursor
    while cursor is not None:
        page = inbox.pending_page(checkpointer, limit=6, cursor=cursor)
        rest.extend((p.thread_id, p.id) for p in page.items)
        cursor = page.next_cursor
    assert rest == [item for item in order[6:] if item not in {later, done}]


class Requests:
    """The AWS requests a boto3 client makes, by operation, and how many items DynamoDB's scans evaluated."""

    def __init__(self, client: Any, service: str) -> None:
        self.calls: Counter[str] = Counter()
        self.scanned = 0
        client.meta.events.register(f"before-call.{service}", self._count)
        client.meta.events.register(f"after-call.{service}.Scan", self._scanned)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _scanned(self, parsed: dict[str, Any], **_: Any) -> None:
        self.scanned += parsed.get("ScannedCount", 0)

    def take(self) -> tuple[Counter[str], int]:
        taken = self.calls, self.scanned
        self.calls, self.scanned = Counter(), 0
        return taken


def test_one_page_costs_requests_in_proportion_to_the_page(cloud_store_url: str) -> None:
    checkpointer = Checkpointer.from_url(cloud_store_url)
    storage: Any = checkpointer.storage
    s3 = cloud_store_url.startswith("s3://")
    requests = Requests(storage.client, "s3" if s3 else "dynamodb")
    costs = []
    for size in (30, 90):
        leave_waiting(checkpointer, [f"t{size}-{i:03d}" for i in range(size - len(costs) * 30)])
        requests.take()
        page = inbox.pending_page(checkpointer, limit=5)
        after = inbox.pending_page(checkpointer, limit=5, cursor=page.next_cursor)
        assert len(page.items) == len(after.items) == 5
        costs.append(requests.take())
    for calls, scanned in costs:
        if s3:  # per page: a listing from StartAfter and a GetObject per thread shown, and one more
            assert calls == Counter({"ListObjectsV2": 2, "GetObject": 12}), calls  # one past each page
        else:  # per page: a Scan or two from ExclusiveStartKey, evaluating a few items per thread shown
            assert set(calls) == {"Scan"}, calls
            assert calls["Scan"] <= 4, calls
            assert scanned <= 10 * 25, scanned
    if s3:
        assert costs[1] == costs[0], "the same requests with three times the threads"
