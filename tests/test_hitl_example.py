"""examples/hitl_approval.py as its docstring runs it, every step its own process: the agent asks and exits,
the inbox answers, workers resume it, and the approved tool runs once however many workers race for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statehitl import inbox

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

pytestmark = pytest.mark.slow


def run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def setup(tmp_path: Path) -> tuple[str, dict[str, str]]:
    store = f"file://{tmp_path / 'store'}"
    env = {**os.environ, "STATEHITL_SESSION_URL": store, "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")])}
    asked = run([sys.executable, str(EXAMPLES / "hitl_approval.py"), "ask"], env)
    assert "stop_reason: interrupt" in asked
    assert 'Approve "delete_reports"?\n  Input: {"paths": ["q1.csv", "q2.csv"]}' in asked
    return store, env


def answer_in_the_inbox(store: str, env: dict[str, str], response: str) -> None:
    [waiting] = inbox.pending(store)
    assert waiting.name == "strands:human-in-the-loop"
    run([sys.executable, "-m", "statehitl.cli", "inbox", "answer", waiting.id, response, "--as", "ann", "--store",
         store], env)


def workers_once(store: str, env: dict[str, str], count: int) -> list[str]:
    """``count`` workers started together, each making one pass; their stderr."""
    args = [sys.executable, "-m", "statehitl.cli", "worker", "--app", "hitl_approval:build", "--store", store, "--once"]
    started = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(count)]
    logs = []
    for worker in started:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        logs.append(err)
    return logs


def test_approved_in_the_inbox_resumed_by_a_worker_the_tool_runs_once(tmp_path: Path) -> None:
    store, env = setup(tmp_path)
    answer_in_the_inbox(store, env, "y")
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["q1.csv", "q2.csv", "q3.csv"]  # not yet

    logs = workers_once(store, env, 2) + workers_once(store, env, 1)

    assert sum("resumed (completed)" in log for log in logs) == 1
    assert (tmp_path / "actions.log").read_text() == "deleted q1.csv, q2.csv\n"
    shown = run([sys.executable, str(EXAMPLES / "hitl_approval.py"), "show"], env)
    assert shown.splitlines() == [
        "waiting on: []",
        "tool result: ['q1.csv', 'q2.csv', 'q3.csv']",
        "tool result: deleted 2 report(s)",
        "agent: Done: I cleaned up the old reports.",
        "answered 'y' by ann via inbox: applied",
        "reports left: ['q3.csv']",
    ]


def test_rejected_in_the_inbox_with_a_reason_the_tool_never_runs(tmp_path: Path) -> None:
    store, env = setup(tmp_path)
    answer_in_the_inbox(store, env, json.dumps({"type": "reject", "message": "keep them for the audit"}))

    workers_once(store, env, 1)

    assert not (tmp_path / "actions.log").exists()
    shown = run([sys.executable, str(EXAMPLES / "hitl_approval.py"), "show"], env)
    assert ('tool result: CONFIRMATION_FAILED: Approve "delete_reports"?\n  Input: {"paths": ["q1.csv", "q2.csv"]}\n'
            "  Reason: keep them for the audit") in shown
    assert "by ann via inbox: rejected" in shown
    assert "reports left: ['q1.csv', 'q2.csv', 'q3.csv']" in shown
