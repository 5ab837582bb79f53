"""A Graph holding a Swarm on S3 and DynamoDB (real servers on loopback): one call per new process, and
four processes racing to answer one interrupt."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration_processes import run_through, write_app


def test_a_nested_orchestration_resumes_in_new_processes(cloud_store_url: str, tmp_path: Path) -> None:
    final = run_through(write_app(tmp_path), cloud_store_url, tmp_path)
    assert final["order"] == ["intake", "team", "cleanup"]


@pytest.mark.slow
def test_racing_answers_run_the_gated_tool_once(cloud_store_url: str, tmp_path: Path) -> None:
    final = run_through(write_app(tmp_path), cloud_store_url, tmp_path, racers=4)
    assert final["status"] == "completed"
