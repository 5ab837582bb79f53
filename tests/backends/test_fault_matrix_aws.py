"""Every request of an interrupt and its resume, failed on the real servers (moto_server, DynamoDB Local).

``BotoFaults`` fails the Nth HTTP attempt of each operation the refund graph's interrupt turn and resume
make: once (botocore's retry meets the fault's aftermath: a write that landed with its answer lost, a
500) and for good until the operator sees the error (throttling, 500s, resets, lost answers on every
attempt, past all retries). The operator then drives the thread to its end (``fault_drivers.drive``).
Each case: the refund had one effect, never ran again without a go-ahead, no error blamed another
process, the audit trail tells what happened.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from statehitl_checkpoint_dynamodb import DynamoDBStorage
from statehitl_checkpoint_s3 import S3Storage
from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

from fault_drivers import GraphDriver, Ledger, check_outcome, drive
from statehitl.checkpoint import Checkpointer
from statehitl.testing.boto_faults import BotoFaultKind, BotoFaults

REGION = "us-east-1"
CASES: list[tuple[BotoFaultKind, int | str]] = [("landed-lost", 1), ("500", 1), ("landed-lost", "always"),
                                           ("500", "always"), ("reset", "always"), ("throttle", "always")]
"""Once: what a retry meets after the fault. For good: what the operator meets once the retries are spent."""

_threads = itertools.count()


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials for the local servers, and botocore's retries without their waits (the same
    attempts, the same answers, only sooner: a case spends its retries in milliseconds, not seconds)."""
    from botocore.retries import standard

    for name in AWS_ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0.0)


@pytest.fixture(params=["s3", "dynamodb"])
def make_store(request: pytest.FixtureRequest) -> Iterator[Callable[[], Any]]:
    made: list[Any] = []

    def build() -> Any:
        if request.param == "s3":
            store: Any = S3Storage(request.getfixturevalue("s3_bucket"), f"m{next(_threads)}",
                                   session=request.getfixturevalue("s3_session"),
                                   endpoint_url=request.getfixturevalue("s3_server"), retries=2)
        else:
            store = DynamoDBStorage(request.getfixturevalue("dynamodb_table"), region_name=REGION,
                                    endpoint_url=request.getfixturevalue("dynamodb_endpoint"), max_attempts=2)
        made.append(store)
        return store

    yield build
    for store in made:
        if isinstance(store, S3Storage):
            store.close()


def test_every_request_failed_every_way_leaves_one_refund(make_store: Callable[[], Any]) -> None:
    baseline_store = make_store()
    counted = BotoFaults(baseline_store.client)
    driver = GraphDriver(baseline_store, Ledger(), f"t{next(_threads)}")
    drive(driver, Checkpointer(baseline_store), counted.clear)
    attempts: Counter[str] = Counter(counted.attempts)
    counted.detach()
    assert driver.ledger.effects == 1
    unknown = 0
    for operation, count in sorted(attempts.items()):
        for n, (kind, times) in itertools.product(range(count), CASES):
            store = make_store()
            faults = BotoFaults(store.client).fail(operation, kind, times=times, after=n)  # type: ignore[arg-type]
            driver = GraphDriver(store, Ledger(), f"t{next(_threads)}")
            case = f"{operation} attempt {n + 1} {kind} {times}"
            story = drive(driver, Checkpointer(store), faults.clear, case)
            faults.detach()
            unknown += check_outcome(driver, story, f"{case}: {story}")
    assert unknown, "no request's failure left an action of unknown outcome: the matrix tests too little"
