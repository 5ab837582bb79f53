"""What a worker promises on DynamoDB (the table's stream, DynamoDB Local) when the app or the clock misbehaves.

- A thread whose ``build()`` failed once (a passing glitch) is tried again after a pause, without another
  write to wake it: the stream brought the answer once, and the worker remembers to come back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_worker_aws import ledger, streamed_store  # noqa: F401 (fixtures)

from worker_app import FLAKY_ENV, Ledger, build
from worker_support import answer_waiting, wait_for, worker_env, workers

pytestmark = pytest.mark.slow


def test_a_stream_fed_worker_retries_a_thread_whose_build_failed(streamed_store: str, ledger: Ledger,  # noqa: F811
                                                                 tmp_path: Path) -> None:
    app = build("t")
    app.invoke({"item": "glitch"}, thread_id="g1")
    env = worker_env(streamed_store, ledger.root, **{FLAKY_ENV: str(tmp_path / "flaky")})
    args = ["--app", "worker_app:build_flaky", "--store", streamed_store, "--interval", "0.1"]
    with workers(1, args, env, tmp_path / "logs") as [worker]:
        wait_for(lambda: "reading its stream" in worker.log, what="the worker's start")
        answer_waiting(streamed_store, "g1", "y")
        wait_for(lambda: "BuildFailed" in worker.log, what="the first build, which fails")
        wait_for(lambda: ledger.applied(), timeout=30, what="the retry after the failed build")
        assert worker.stop()[0] == 0, worker.log
    assert list(ledger.applied().values()) == ["g1 ship y"]
    assert sorted(p.name for p in (tmp_path / "flaky").iterdir()) == ["g1.1", "g1.2"]  # failed once, then built
    assert worker.log.count("thread g1: BuildFailed") == 1  # logged once, with its traceback
