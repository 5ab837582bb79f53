"""An approved action runs at most once, whatever storage call fails and however.

Every storage call of an interrupt turn and of its resume is failed in turn, once and for good (until
the store heals), as an outage before the call or as a write that landed while its answer was lost.
Then the thread is driven to its end as an operator would (``fault_drivers.drive``). Each case checks
that the action had one effect and ran without a human's go-ahead at most once, that the thread
finished, that no error blamed another process, and that the audit trail tells what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fault_drivers import AgentDriver, GraphDriver, Ledger, check_outcome, drive
from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.testing.faults import FaultKind, FaultyStorage


def _baseline(make_driver: Callable[[FaultyStorage], Any], store: Callable[[], Any]) -> int:
    storage = FaultyStorage(store())
    driver = make_driver(storage)
    drive(driver, Checkpointer(storage), storage.heal)
    return len(storage.calls)


def fault_cases(calls: int) -> list[tuple[int, FaultKind, int | None]]:
    return [(n, kind, times) for n in range(1, calls + 1) for kind in ("unavailable", "landed")
            for times in (1, None)]


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    made = iter(range(10_000))
    if request.param == "memory":
        return MemoryStorage
    return lambda: FileStorage(tmp_path / f"store{next(made)}")


@pytest.mark.parametrize("shape", ["graph", "agent"])
def test_every_storage_fault_of_an_interrupt_and_its_resume_leaves_one_effect(shape: str, store) -> None:
    ledgers: list[Ledger] = []

    def make_driver(storage: FaultyStorage) -> Any:
        ledger = Ledger()
        ledgers.append(ledger)
        return GraphDriver(storage, ledger) if shape == "graph" else AgentDriver(storage, ledger)

    calls = _baseline(make_driver, store)
    assert list(ledgers[0].attempts.values()) == [1]
    seen_unknown = 0
    for number, kind, times in fault_cases(calls):
        storage = FaultyStorage(store()).fail_at(number, kind, times=times)
        driver = make_driver(storage)
        case = f"call {number} {kind} {'once' if times else 'for good'}"
        story = drive(driver, Checkpointer(storage), storage.heal, case)
        seen_unknown += check_outcome(driver, story, f"{case}: {story}, calls "
                                                     f"{[(c.operation, c.key, c.fault) for c in storage.calls]}")
    assert seen_unknown, "no fault position left an action of unknown outcome: the matrix tests too little"
