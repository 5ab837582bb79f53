"""A Graph holding a Swarm on S3 and DynamoDB (real servers on loopback): one call per new process, and
four processes racing to answer one interrupt."""

from __future__ import annotations

from pathlib import Path

import pytest
from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

from orchestration_processes import run_through, write_app

REGION = "us-east-1"


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials for the processes the tests start; never a real profile or endpoint."""
    for name in AWS_ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(params=["s3", "dynamodb"])
def store(request: pytest.FixtureRequest) -> str:
    """A store URL on a test server (each started only when a test asks for it)."""
    if request.param == "s3":
        endpoint: str = request.getfixturevalue("s3_server")
        bucket: str = request.getfixturevalue("s3_bucket")
        return f"s3://{bucket}/orchestrations?region={REGION}&endpoint_url={endpoint}"
    endpoint = request.getfixturevalue("dynamodb_endpoint")
    table: str = request.getfixturevalue("dynamodb_table")
    return f"dynamodb://{table}?region={REGION}&endpoint_url={endpoint}"


def test_a_nested_orchestration_resumes_in_new_processes(store: str, tmp_path: Path) -> None:
    final = run_through(write_app(tmp_path), store, tmp_path)
    assert final["order"] == ["intake", "team", "cleanup"]


@pytest.mark.slow
def test_racing_answers_run_the_gated_tool_once(store: str, tmp_path: Path) -> None:
    final = run_through(write_app(tmp_path), store, tmp_path, racers=4)
    assert final["status"] == "completed"
