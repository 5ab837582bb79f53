"""Webhook events through the durable outbox, with ``statehitl worker`` subprocesses and a real receiver on
loopback (``statehitl.testing.webhooks.WebhookReceiver``, which verifies Standard Webhooks signatures):
a receiver that is down gets the event once it is back; a worker killed while delivering leaves it to
another; an event given up is listed by ``statehitl deliveries`` and announced, and ``--retry`` sends it."""

from __future__ import annotations

from pathlib import Path

import pytest

from statehitl.cli import main
from statehitl.testing.webhooks import WebhookReceiver
from worker_app import Ledger, build
from worker_support import WorkerProcess, answer_waiting, wait_for, worker_env, workers

pytestmark = pytest.mark.slow

SECRET = b"outbox-test-secret"


def _args(store: str, receiver: WebhookReceiver, secret: Path, *more: str) -> list[str]:
    return ["--app", "worker_app:build", "--store", store, "--interval", "0.05", "--on-answer", receiver.url,
            "--webhook-secret-file", str(secret), *more]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_text(SECRET.decode())
    path.chmod(0o600)
    return path


def test_a_receiver_that_is_down_gets_the_event_once_it_is_back(app_store: str, ledger: Ledger, tmp_path: Path,
                                                                 secret: Path) -> None:
    build("t").invoke({"item": "o1"}, thread_id="o1")
    with WebhookReceiver(SECRET) as receiver:
        receiver.down()
        args = _args(app_store, receiver, secret, "--delivery-schedule", "0.5,1,2,4,8")
        with workers(1, args, worker_env(app_store, ledger.root), tmp_path / "logs") as [worker]:
            answer_waiting(app_store, "o1", "y")
            wait_for(lambda: ledger.applied() and receiver.requests >= 3, what="the resume and a failed round")
            assert main(["deliveries", "--store", app_store]) == 0  # waiting, not given up
            receiver.up()
            wait_for(lambda: receiver.ids("answer"), what="the delivery once the receiver is back")
            assert worker.stop()[0] == 0, worker.log
        assert receiver.bad_signatures == 0
        assert len(receiver.ids("answer")) == 1
    assert main(["deliveries", "--store", app_store]) == 0  # the outbox is empty again


def test_a_worker_killed_while_delivering_leaves_the_event_to_another(app_store: str, ledger: Ledger,
                                                                      tmp_path: Path, secret: Path) -> None:
    build("t").invoke({"item": "o2"}, thread_id="o2")
    env = worker_env(app_store, ledger.root)
    with WebhookReceiver(SECRET) as receiver:
        receiver.hang()
        first = WorkerProcess(_args(app_store, receiver, secret, "--lease", "1"), env, tmp_path / "first.log")
        answer_waiting(app_store, "o2", "y")
        wait_for(lambda: receiver.held >= 1, what="the first worker's delivery, held by the receiver")
        first.kill()
        receiver.down()  # the held request is refused: the first worker died before the receiver took it
        wait_for(lambda: receiver.requests >= 1, what="the held request's end")
        receiver.up()
        assert receiver.ids() == []
        with workers(1, _args(app_store, receiver, secret), env, tmp_path / "second") as [second]:
            wait_for(lambda: receiver.ids("answer"), what="the second worker, once the first one's lease ran out")
            assert second.stop()[0] == 0, second.log
        assert len(receiver.ids("answer")) == 1


def test_an_event_given_up_is_listed_announced_and_sent_again_on_retry(
        app_store: str, ledger: Ledger, tmp_path: Path, secret: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build("t").invoke({"item": "o3"}, thread_id="o3")
    with WebhookReceiver(SECRET) as answers, WebhookReceiver(SECRET) as attention:
        answers.down(500)
        args = ["--app", "worker_app:build", "--store", app_store, "--interval", "0.05", "--on-answer", answers.url,
                "--on-interrupt", attention.url, "--webhook-secret-file", str(secret), "--delivery-schedule", "0.2"]
        with workers(1, args, worker_env(app_store, ledger.root), tmp_path / "logs") as [worker]:
            answer_waiting(app_store, "o3", "y")
            wait_for(lambda: attention.ids("delivery_failed"), what="the notice that the answer event was given up")
            assert worker.stop()[0] == 0, worker.log
        assert "was given up after 2 rounds" in worker.log
        [notice] = [e for e in attention.events if e["event"] == "delivery_failed"]
        assert (notice["thread_id"], notice["event_kind"], notice["rounds"]) == ("o3", "answer", 2)
        assert "HTTP 500" in notice["error"]
        capsys.readouterr()
        assert main(["deliveries", "--store", app_store]) == 1
        listed = capsys.readouterr().out
        assert "o3/a." in listed
        assert "given up" in listed
        assert main(["deliveries", "--retry", "--store", app_store]) == 0
        answers.up()
        with workers(1, args, worker_env(app_store, ledger.root), tmp_path / "again") as [again]:
            wait_for(lambda: answers.ids("answer"), what="the event sent again after --retry")
            assert again.stop()[0] == 0, again.log
        assert len(answers.ids("answer")) == 1
