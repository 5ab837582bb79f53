"""What a worker promises on DynamoDB (its stream, DynamoDB Local) and S3 when the app or the clock misbehaves.

- A thread whose ``build()`` failed once (a passing glitch) is tried again after a pause, without another
  write to wake it: the stream brought the answer once, and the worker remembers to come back.
- A worker whose clock is off (``statehitl.testing.clocks``, in its own process) judges leases by the
  store's clock (S3 and DynamoDB say the time in every response), and refuses to act when it is too far off.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV
from test_worker_aws import ledger, streamed_store  # noqa: F401 (fixtures)

from conftest import REGION
from worker_app import FLAKY_ENV, HOLD_ENV, STORE_ENV, Ledger, build
from worker_support import WorkerProcess, answer_waiting, wait_for, worker_env, workers

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


@pytest.fixture(params=["dynamodb", "s3"])
def aws_store(request: pytest.FixtureRequest, ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> str:  # noqa: F811
    """A store whose every response says the server's time: DynamoDB Local (its stream on) or moto's S3."""
    if request.param == "dynamodb":
        return str(request.getfixturevalue("streamed_store"))
    s3_server, bucket = request.getfixturevalue("s3_server"), request.getfixturevalue("s3_bucket")
    for name, value in DUMMY_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    url = f"s3://{bucket}/app?region={REGION}&endpoint_url={s3_server}"
    monkeypatch.setenv(STORE_ENV, url)
    return url


def test_a_worker_whose_clock_is_fast_judges_leases_by_the_stores_clock(aws_store: str, ledger: Ledger,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    """A worker 20 s fast meets a claim of a 10 s lease, two seconds old: by its own clock long expired (an
    action of unknown outcome, which --retry-unknown would run again while the first worker is inside it);
    by the store's clock alive. It leaves the thread alone, and the action runs once."""
    build("t").invoke({"item": "book"}, thread_id="k1")
    hold = tmp_path / "hold"
    hold.mkdir()
    env = worker_env(aws_store, ledger.root, **{HOLD_ENV: str(hold)})
    args = ["--app", "worker_app:build", "--store", aws_store, "--interval", "0.1", "--lease", "10"]
    with workers(1, args, env, tmp_path / "first") as [first]:
        wait_for(lambda: "watching" in first.log, what="the first worker's start")
        answer_waiting(aws_store, "k1", "y")
        wait_for(lambda: (hold / "k1.started").exists(), what="the first worker's action")
        fast = WorkerProcess([*args, "--retry-unknown"], env, tmp_path / "fast.log", clock_skew=20.0)
        try:
            wait_for(lambda: "held by another process" in fast.log or "busy" in fast.log or
                     "watching" in fast.log, what="the fast worker's start")
            time.sleep(3)  # it passes over the thread again and again meanwhile
            (hold / "k1.go").touch()
            wait_for(lambda: build("t").get_state("k1").status.value == "completed", what="the first worker")
        finally:
            code, _ = fast.stop()
        assert code == 0, fast.log
        assert "unknown outcome" not in fast.log
        assert first.stop()[0] == 0, first.log
    assert len(ledger.attempts()) == 1
    assert list(ledger.applied().values()) == ["k1 ship y"]


def test_a_worker_whose_clock_is_far_off_refuses_to_act(aws_store: str, ledger: Ledger,  # noqa: F811
                                                        tmp_path: Path) -> None:
    build("t").invoke({"item": "book"}, thread_id="k2")
    answer_waiting(aws_store, "k2", "y")
    args = ["--app", "worker_app:build", "--store", aws_store, "--interval", "0.1"]
    env = worker_env(aws_store, ledger.root)
    far = WorkerProcess(args, env, tmp_path / "far.log", clock_skew=120.0)
    try:
        wait_for(lambda: "clock is 12" in far.log, what="the refusal of the far-off worker")
    finally:
        far.stop()
    assert "ahead of the store's" in far.log
    assert ledger.attempts() == []  # it did nothing
    with workers(1, args, env, tmp_path / "right") as [right]:
        wait_for(lambda: ledger.applied(), what="a worker whose clock is right")
        assert right.stop()[0] == 0, right.log
    assert list(ledger.applied().values()) == ["k2 ship y"]
