"""Every program in examples/ runs as a user would run it, with answers piped to stdin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = [
    ("refund_graph.py", "y\n", ["paid $42", "approved: True"]),
    ("refund_graph.py", "n\n", ["refund refused", "approved: False"]),
    ("hook_approval.py", "y\ny\n", ["stop_reason: end", "done: ['logs', 'tmp']"]),
    ("hook_approval.py", "y\nn\n", ["stop_reason: cancelled", "cancelled: {'cleanup_tmp'"]),
]


@pytest.mark.parametrize(("script", "answers", "expected"), CASES)
def test_example_runs(script: str, answers: str, expected: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], input=answers, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    for text in expected:
        assert text in done.stdout


def test_every_example_is_covered() -> None:
    # graph_session.py and hitl_approval.py run one process per step: test_seed_multiagent_examples.py and
    # test_hitl_example.py run them that way
    assert {p.name for p in EXAMPLES.glob("*.py")} <= {c[0] for c in CASES} | {"graph_session.py", "hitl_approval.py"}
