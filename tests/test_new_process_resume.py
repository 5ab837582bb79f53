"""A thread stopped at an interrupt in one process is resumed by another, from the file store alone.

Each process is a fresh interpreter that builds the graph from scratch (new ``StateGraph``, new
``compile``) on ``FileCheckpointer(store)``; nothing but the files on disk connects them.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from resume_processes import REFUND_APP, run_app
from statehitl.checkpoint import FileCheckpointer
from statehitl.graph import Status


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "refund_app.py"
    path.write_text(REFUND_APP)
    return path


@pytest.mark.slow
def test_resume_in_a_new_process(script: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"

    first = run_app(script, "start", str(store), "ticket-1")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert (pending["name"], pending["reason"]) == ("refund-approval", {"text": "refund please"})
    # the thread is durably parked on disk, with audit's finished work kept for the resume
    parked = build_here(script, store).get_state("ticket-1")
    assert parked.status == Status.INTERRUPTED
    assert [i.id for i in parked.interrupts] == [pending["id"]]
    assert (tmp_path / "audit-runs.txt").read_text() == "ran\n"

    second = run_app(script, "resume", str(store), "ticket-1", pending["id"], "y")
    assert second["stop_reason"] == "end"
    assert second["interrupts"] == []
    assert second["state"] == {
        "text": "refund please",
        "log": ["classified", "audited", "reviewed: y", "paid"],  # a step's writes apply in node-name order
        "approved": True,
    }
    # audit finished before the interrupt and was not run again by the second process
    assert (tmp_path / "audit-runs.txt").read_text() == "ran\n"
    history = build_here(script, store).history("ticket-1")
    assert history[0].status == Status.COMPLETED
    assert [h.status for h in history].count(Status.INTERRUPTED) == 1


@pytest.mark.slow
def test_interrupt_ids_are_the_same_in_every_process(script: Path, tmp_path: Path) -> None:
    elsewhere = run_app(script, "start", str(tmp_path / "a"), "t")["interrupts"][0]["id"]
    here = build_here(script, tmp_path / "b").invoke({"text": "refund please"}, thread_id="t")
    assert here.interrupts[0].id == elsewhere  # same thread, same site: same id, whatever the process
    other = build_here(script, tmp_path / "c").invoke({"text": "refund please"}, thread_id="other")
    assert other.interrupts[0].id != elsewhere  # another thread: another id


@pytest.mark.slow
def test_resume_in_a_new_process_rejects_a_wrong_id_and_keeps_the_thread(script: Path, tmp_path: Path,
                                                                         disk_snapshot) -> None:
    store = tmp_path / "store"
    pending = run_app(script, "start", str(store), "t")["interrupts"][0]
    before = disk_snapshot(store)
    done = subprocess.run(
        [sys.executable, str(script), "resume", str(store), "t", "v1:not-an-id", "y"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode != 0
    assert "UnknownInterruptError" in done.stderr
    assert "'v1:not-an-id'" in done.stderr
    assert disk_snapshot(store) == before
    assert run_app(script, "resume", str(store), "t", pending["id"], "y")["stop_reason"] == "end"


def build_here(script: Path, store: Path) -> Any:
    """The same graph, built in this process from the same script."""
    return runpy.run_path(str(script))["build"](str(FileCheckpointer(store).storage.root))
