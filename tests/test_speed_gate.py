"""The speed gate's parts that can be checked without valgrind: every workload still runs and gets its
right answer (a broken workload would fail the gate only at the end of CI), and the comparison fails on a
rise past the tolerance and only then."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speed_gate  # noqa: E402


@pytest.mark.parametrize("name", sorted(speed_gate.REPS))
def test_each_workload_runs_and_reports_its_unit(name: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gate_workloads.py"), name, "1", str(tmp_path),
                           "--plain"], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["name"] == name
    assert report["unit"].split("/")[0] == "instructions"
    assert report["per_rep"] >= 1


def test_a_rise_past_the_tolerance_fails_and_names_the_workload() -> None:
    baseline = {"counts": {"chain-pydantic": 100_000.0, "roundtrip-file": 1_000_000.0, "agent-session": 500.0}}
    counts = [speed_gate.Count("chain-pydantic", "instructions/step", 105_001.0),
              speed_gate.Count("roundtrip-file", "instructions/round trip", 1_049_000.0),
              speed_gate.Count("agent-session", "instructions/cycle", 400.0)]
    table, rose, fell = speed_gate.compare(counts, baseline)
    assert rose == ["chain-pydantic"]
    assert fell == ["agent-session"]
    assert "+5.0% **ROSE**" in table
    assert "+4.9% |" in table


def test_the_baseline_covers_every_workload() -> None:
    baseline = json.loads(speed_gate.BASELINE.read_text())
    assert set(speed_gate.REPS) <= set(baseline["counts"])
    assert baseline["why"]
