"""What a worker promises when the app misbehaves, in ``statehitl worker`` subprocesses on the file store.

- A slow ``build`` or a slow sync action holds up nothing else: ``--concurrency N`` means N threads at
  once. The test apps meet (``worker_app.meet``): each build, and each action, returns only once the
  others of its kind are running too, which they can only be if they run at the same time.
- An answer the door could not check fully (the type's validator) and the handler refuses is withdrawn
  by the first worker that meets it, audited as refused; the workers do not spin on it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statehitl import inbox
from statehitl.checkpoint import Checkpointer
from worker_app import MEET_COUNT_ENV, MEET_ENV, Ledger, build_code, meet_graph
from worker_support import TIMEOUT, answer_waiting, wait_for, worker_env, workers

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


def test_an_answer_the_type_refuses_on_rerun_is_withdrawn_and_nothing_spins(app_store: str, ledger: Ledger,
                                                                            tmp_path: Path) -> None:
    """The terminal (another process than the one that asked) checks only the schema, which an answer passes
    that the type's validator refuses: the first worker to resume it withdraws it, audited as refused; the
    interrupt is pending again and a corrected answer goes through. Two workers, and nothing resumed twice."""
    app = build_code("t")
    app.invoke({"item": "book"}, thread_id="c1")
    [item] = inbox.pending(app_store)
    args = ["--app", "worker_app:build_code", "--store", app_store, "--interval", "0.05"]
    with workers(2, args, worker_env(app_store, ledger.root), tmp_path / "logs") as running:
        assert _cli("inbox", "answer", item.id, "abc", "--as", "ann", "--store", app_store).returncode == 0
        wait_for(lambda: [e.outcome for e in app.audit("c1")] == ["refused"], what="the refusal on re-run")
        wait_for(lambda: [p.id for p in inbox.pending(app_store)] == [item.id], what="the interrupt pending again")
        time.sleep(0.5)  # what two workers spinning on a stuck answer would do meanwhile
        claims = asyncio.run(Checkpointer.from_url(app_store).claims("c1"))
        # one resume took it (its claim says what it acted on), and released it: no second resume
        assert sorted((c.seq, c.acting, c.settles) for c in claims) == [(1, True, None), (2, False, "released")]
        corrected = _cli("inbox", "answer", item.id, "ABC", "--as", "ann", "--store", app_store)
        assert corrected.returncode == 0, corrected.stderr
        wait_for(lambda: ledger.applied(), what="the corrected answer")
        for worker in running:
            assert worker.stop()[0] == 0, worker.log
    [refused, applied] = app.audit("c1")
    assert (refused.outcome, refused.response, refused.responder, refused.via) == ("refused", "abc", "ann", "inbox")
    assert "must be upper case" in (refused.why or "")
    assert (applied.outcome, applied.response) == ("applied", "ABC")
    assert list(ledger.applied().values()) == ["c1 ship ABC"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``statehitl ARGS`` in a process of its own, which never raised the interrupt it answers."""
    return subprocess.run([sys.executable, "-m", "statehitl.cli", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "NO_COLOR": "1"})
