"""``statehitl worker`` processes on the file store: killed mid-resume, racing, and the command's exit codes.

A worker is killed with SIGKILL after the action took effect and before the run recorded it: the thread
is then an action of unknown outcome. With ``--retry-unknown`` another worker retries it once the lease
is over, and the ledger, which honours the action's idempotency key, applies it once (the key is the
same on the retry); without it, nothing runs again until a human allows it (``threads retry``).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from statehitl import inbox
from statehitl.cli import main
from worker_app import HOLD_ENV, Ledger, build
from worker_support import WorkerProcess, wait_for, worker_env, workers

pytestmark = pytest.mark.slow

APP = ["--app", "worker_app:build"]


def _answer(store: str, thread: str, response: object, responder: str = "ann") -> None:
    [item] = [p for p in inbox.pending(store) if p.thread_id == thread]
    inbox.answer(store, item.id, response, responder=responder)


def _killed_mid_resume(store: str, ledger: Ledger, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """Thread ``t1`` answered in the inbox, and a worker killed while its action holds (after it took
    effect). Returns the environment for the next worker (the hold released) and the hold directory."""
    build("t").invoke({"item": "book"}, thread_id="t1")
    _answer(store, "t1", "y")
    hold = tmp_path / "hold"
    hold.mkdir()
    env = worker_env(store, ledger.root, **{HOLD_ENV: str(hold)})
    first = WorkerProcess([*APP, "--store", store, "--interval", "0.05", "--lease", "1"], env, tmp_path / "w1.log")
    wait_for(lambda: (hold / "t1.started").exists(), what="the first worker's action")
    first.kill()
    (hold / "t1.go").touch()
    assert len(ledger.attempts()) == 1
    return env, hold


def test_a_worker_killed_mid_resume_is_finished_by_another_with_retry_unknown(app_store: str, ledger: Ledger,
                                                                           tmp_path: Path) -> None:
    env, _ = _killed_mid_resume(app_store, ledger, tmp_path)

    with workers(1, [*APP, "--store", app_store, "--interval", "0.05", "--lease", "1", "--retry-unknown"], env,
                 tmp_path / "second") as [second]:
        wait_for(lambda: build("t").get_state("t1").status.value == "completed", what="the second worker")
        code, out = second.stop()

    assert code == 0, second.log
    attempts = ledger.attempts()
    assert len(attempts) == 2  # run twice ...
    assert attempts[0] == attempts[1]  # ... under one idempotency key ...
    assert list(ledger.applied().values()) == ["t1 ship y"]  # ... so it took effect once
    # The answer was applied once (the step that took it was recorded before the action ran); the run went
    # on from there after the go-ahead, which the trail keeps with who gave it.
    trail = [(e.outcome, e.responder) for e in build("t").audit("t1")]
    assert trail == [("applied", "ann"), ("retried", "worker")]
    assert "retried 1 action of unknown outcome" in out


def test_without_retry_unknown_the_thread_waits_on_a_human_and_nothing_runs_twice(
        app_store: str, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env, _ = _killed_mid_resume(app_store, ledger, tmp_path)

    with workers(1, [*APP, "--store", app_store, "--interval", "0.05", "--lease", "1"], env,
                 tmp_path / "second") as [second]:
        wait_for(lambda: "an action of unknown outcome waits on a human" in second.log,
                 what="the second worker's look after the lease")
        code, _ = second.stop()
    assert code == 0
    assert second.log.count("unknown outcome") == 1  # logged once, though every pass meets it
    assert len(ledger.attempts()) == 1

    assert main(["worker", *APP, "--store", app_store, "--once"]) == 1  # for cron: a human is needed
    assert "an action of unknown outcome waits on a human" in capsys.readouterr().out
    assert [e.outcome for e in build("t").audit("t1")] == ["applied"]
    assert len(ledger.attempts()) == 1

    assert main(["threads", "retry", "t1", "--responder", "ops", "--store", app_store]) == 0  # a human checked
    assert main(["worker", *APP, "--store", app_store, "--once"]) == 0
    assert build("t").get_state("t1").status.value == "completed"
    assert list(ledger.applied().values()) == ["t1 ship y"]
    assert [(e.outcome, e.responder) for e in build("t").audit("t1")] == [("applied", "ann"), ("retried", "ops")]


def test_racing_workers_apply_each_answer_and_each_expiry_once(app_store: str, ledger: Ledger,
                                                               tmp_path: Path) -> None:
    """Four workers poll one store while answers arrive and deadlines pass, some answered late."""
    app = build("t")
    answered = [f"a{n}" for n in range(12)]
    expiring = [f"e{n}" for n in range(6)]
    for thread in expiring:
        app.invoke({"item": thread, "expires_in": 1.0}, thread_id=thread)
    env = worker_env(app_store, ledger.root)
    with workers(4, [*APP, "--store", app_store, "--interval", "0.05", "--lease", "5"], env,
                 tmp_path / "racers") as racing:
        for thread in answered:
            app.invoke({"item": thread}, thread_id=thread)
            _answer(app_store, thread, "y")
        for thread in expiring[::2]:  # late answers racing the deadline
            with contextlib.suppress(ValueError):  # the deadline won: it is no longer pending
                _answer(app_store, thread, "late", responder="bob")
        everything = answered + expiring
        wait_for(lambda: len(ledger.applied()) == len(everything), what="four racing workers")
        time.sleep(0.3)  # let any second, wrong run show itself
        for worker in racing:
            code, _ = worker.stop()
            assert code == 0, worker.log

    assert len(ledger.attempts()) == len(everything)  # never run twice
    applied = sorted(ledger.applied().values())
    assert [a for a in applied if a.startswith("a")] == sorted(f"{t} ship y" for t in answered)
    for thread in expiring:
        [entry] = app.audit(thread)  # exactly one applied answer: the deadline's or the late reviewer's
        assert (entry.response, entry.via) in (("expired", "expiry"), ("late", "inbox"))
        assert app.get_state(thread).status.value == "completed"


def test_the_command_refuses_webhooks_without_a_secret_and_bad_options(app_store: str, ledger: Ledger,
                                                                        tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEHITL_WEBHOOK_SECRET", raising=False)
    base = ["worker", *APP, "--store", app_store, "--once"]
    assert main([*base, "--on-answer", "http://127.0.0.1:9/hook"]) == 2
    assert "webhooks are signed with a shared secret" in capsys.readouterr().err
    empty = tmp_path / "secret"
    empty.write_text("\n")
    assert main([*base, "--on-answer", "http://127.0.0.1:9/hook", "--webhook-secret-file", str(empty)]) == 2
    assert "is empty" in capsys.readouterr().err
    empty.write_text("s3cret")
    assert main([*base, "--on-answer", "file:///etc/passwd", "--webhook-secret-file", str(empty)]) == 2
    assert "is http:// or https://" in capsys.readouterr().err
    assert main(["worker", "--app", "no_such_module:build", "--store", app_store, "--once"]) == 2
    assert "cannot import module 'no_such_module'" in capsys.readouterr().err
    assert main([*base, "--interval", "0"]) == 2
    assert main(["worker", "--store", app_store]) == 2  # --app is required
    assert main(base) == 0
    assert "resumed 0 threads; applied 0 expiry defaults" in capsys.readouterr().out
