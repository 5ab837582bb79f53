"""Exactly once across processes: racing sweepers apply an expired default once, and racing
``answer`` calls with the app record one answer and run the action once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inbox_app import LOG_ENV, STORE_ENV, actions, build

from statehitl import inbox

HERE = Path(__file__).resolve().parent
RACERS = 4

SWEEPER = """
import os, sys, time
from pathlib import Path
from statehitl import inbox
import inbox_app
go = Path(sys.argv[1])
(go.parent / f"ready.{os.getpid()}").touch()
while not go.exists():
    time.sleep(0.005)
report = inbox.sweep(os.environ["STATEHITL_INBOX_TEST_STORE"], app=inbox_app.build, now=float(sys.argv[2]))
print(len(report.expired), len(report.resumed))
"""

ANSWERER = """
import os, sys, time
from pathlib import Path
from statehitl import inbox
from statehitl.errors import AlreadyAnsweredError
import inbox_app
go = Path(sys.argv[1])
(go.parent / f"ready.{os.getpid()}").touch()
while not go.exists():
    time.sleep(0.005)
try:
    done = inbox.answer(os.environ["STATEHITL_INBOX_TEST_STORE"], sys.argv[2], sys.argv[3], responder=sys.argv[3],
                        build=inbox_app.build)
    print("won", done.status)
except AlreadyAnsweredError as exc:
    print("lost", exc)
"""


def race(script: str, tmp_path: Path, store: str, log: Path, *args: str) -> list[str]:
    go = tmp_path / "go"
    env = {**os.environ, STORE_ENV: store, LOG_ENV: str(log),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    racers = [subprocess.Popen([sys.executable, "-c", script, str(go), *(a.format(n=n) for a in args)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(RACERS)]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready.*"))) < RACERS and time.monotonic() < deadline:
        time.sleep(0.01)  # every racer imported and waits at the line, however slow the machine
    go.touch()
    finished = [(*racer.communicate(timeout=120), racer) for racer in racers]
    for _, err, racer in finished:
        assert racer.returncode == 0, err
    return [out.strip() for out, _, _ in finished]


@pytest.mark.slow
def test_racing_sweepers_apply_an_expired_default_once(tmp_path: Path, app_store: str, action_log: Path) -> None:
    first = build("t1").invoke({"item": "book", "expires_in": 5, "on_expire": "timed out"}, thread_id="t1")
    assert first.interrupts
    outputs = race(SWEEPER, tmp_path, app_store, action_log, str(time.time() + 60))
    expired = sum(int(o.split()[0]) for o in outputs)
    resumed = sum(int(o.split()[1]) for o in outputs)
    assert (expired, resumed) == (1, 1), outputs
    assert actions(action_log) == ["t1 ship book 'timed out'"]
    assert inbox.pending(app_store) == []


@pytest.mark.slow
def test_racing_reviewers_with_the_app_run_the_action_once(tmp_path: Path, app_store: str, action_log: Path) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id
    outputs = race(ANSWERER, tmp_path, app_store, action_log, iid, "reviewer{n}")
    winners = [o for o in outputs if o.startswith("won")]
    assert winners == ["won completed"], outputs
    assert all("already answered by reviewer" in o for o in outputs if o.startswith("lost")), outputs
    [line] = actions(action_log)
    assert line.startswith("t1 ship book 'reviewer")
