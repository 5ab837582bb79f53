"""A ScriptedModel keyed by position works in every process: the program that raised an interrupt, the
``statehitl inbox answer --app`` process that resumes it, and the next process with a new prompt all
build the same model from the same script (``scripted_app.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_app import LOG_ENV, STORE_ENV

from statehitl._sync import run_sync
from statehitl.checkpoint import Checkpointer

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
TIMEOUT = 120  # a safety net against hangs, not a performance assertion


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, STORE_ENV: f"file://{tmp_path / 'store'}", LOG_ENV: str(tmp_path / "tools.log"),
           "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, *args], cwd=HERE, env=env, capture_output=True, text=True,
                          encoding="utf-8", timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    return done


def program(tmp_path: Path, session: str, prompt: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(run(tmp_path, "scripted_app.py", session, prompt).stdout)
    return result


def test_the_inbox_resumes_an_app_with_a_scripted_model_and_the_next_process_continues(tmp_path: Path) -> None:
    store = f"file://{tmp_path / 'store'}"
    first = program(tmp_path, "cleanup-7", "Delete my files older than 5 days")
    assert first["stop_reason"] == "interrupt"
    assert first["model_calls"] == 2  # find_files, then delete_files, which asks first
    tools_log = tmp_path / "tools.log"
    assert tools_log.read_text().splitlines() == ["find 5"]

    listed = run(tmp_path, "-m", "statehitl.cli", "inbox", "--store", store).stdout
    [interrupt_id] = first["interrupts"]
    assert interrupt_id[:8] in listed
    answered = run(tmp_path, "-m", "statehitl.cli", "inbox", "answer", interrupt_id, "y",
                   "--app", "scripted_app:build", "--store", store)
    assert ": completed" in answered.stdout, answered.stdout
    assert tools_log.read_text().splitlines() == ["find 5", "delete /tmp/old"]

    record = run_sync(Checkpointer.from_url(store).latest("cleanup-7"))
    assert record is not None
    assert record.status == "completed"
    assert record.values["messages"][-1]["content"] == [{"text": "I deleted /tmp/old."}]

    third = program(tmp_path, "cleanup-7", "Anything else?")
    assert (third["stop_reason"], third["text"]) == ("end_turn", "Nothing else is older than 5 days.")
    assert third["model_calls"] == 1
