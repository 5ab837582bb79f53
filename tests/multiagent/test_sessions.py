"""A Graph holding a Swarm on a file session: each call in a new process, and racing answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration_processes import run_through, write_app


def test_a_nested_orchestration_resumes_call_by_call_in_new_processes(tmp_path: Path) -> None:
    final = run_through(write_app(tmp_path), f"file://{tmp_path / 'store'}", tmp_path)
    assert final["status"] == "completed"
    assert final["order"] == ["intake", "team", "cleanup"]
    assert final["results"]["cleanup"] == "closed the ticket"


@pytest.mark.slow
def test_four_processes_answering_one_interrupt_run_the_gated_tool_once(tmp_path: Path) -> None:
    final = run_through(write_app(tmp_path), f"file://{tmp_path / 'store'}", tmp_path, racers=4)
    assert final["status"] == "completed"
