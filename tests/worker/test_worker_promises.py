"""What a worker promises when the app misbehaves, in ``statehitl worker`` subprocesses on the file store.

- A slow ``build`` or a slow sync action holds up nothing else: ``--concurrency N`` means N threads at
  once. The test apps meet (``worker_app.meet``): each build, and each action, returns only once the
  others of its kind are running too, which they can only be if they run at the same time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from worker_app import MEET_COUNT_ENV, MEET_ENV, Ledger, meet_graph
from worker_support import answer_waiting, wait_for, worker_env, workers

pytestmark = pytest.mark.slow


def test_slow_builds_and_slow_sync_actions_run_side_by_side(app_store: str, ledger: Ledger, tmp_path: Path) -> None:
    app = meet_graph()
    threads = [f"m{n}" for n in range(4)]
    for thread in threads:
        app.invoke({"item": thread}, thread_id=thread)
        answer_waiting(app_store, thread, "y")
    meeting = tmp_path / "meet"
    env = worker_env(app_store, ledger.root, **{MEET_ENV: str(meeting), MEET_COUNT_ENV: str(len(threads))})
    args = ["--app", "worker_app:build_meet", "--store", app_store, "--interval", "0.05", "--concurrency", "8"]
    with workers(1, args, env, tmp_path / "logs") as [worker]:
        wait_for(lambda: len(ledger.applied()) == len(threads), what="four threads acting together")
        assert worker.stop()[0] == 0, worker.log
    assert sorted(p.name for p in meeting.glob("alone.*")) == []  # every build and action met the others
    assert sorted(ledger.applied().values()) == sorted(f"{t} act y" for t in threads)
    assert len(ledger.attempts()) == len(threads)
