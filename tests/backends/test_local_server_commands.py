"""``statehitl s3 serve`` and ``statehitl dynamodb local``, run as a user runs them: a subprocess that prints
the store URL, docs/pick-a-store.md's program stopping for a human there and answered from another process,
and Ctrl-C (SIGINT) or SIGTERM stopping the command and the server it started.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import DYNAMODB_LOCAL
from statehitl.cli import main
from statehitl.testing.local_server import free_port
from test_doc_snippets import blocks, run_block

TIMEOUT = 120  # a safety net against hangs, not a performance assertion

class Command:
    """The command running in a subprocess, its stdout read line by line as it comes (by a thread, so a
    line the pipe has already delivered is never waited for again)."""

    def __init__(self, *args: str, cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.process = subprocess.Popen([sys.executable, "-m", "statehitl.cli", *args], cwd=cwd,
                                        env={**env, "NO_COLOR": "1"}, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        self._arrived: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._arrived.put(line.rstrip("\n"))
        self._arrived.put(None)

    def read_until(self, pattern: str) -> re.Match[str]:
        """The first match of ``pattern`` in what the command printed, waiting for it to be printed."""
        while True:
            for line in self.lines:
                found = re.search(pattern, line)
                if found:
                    return found
            try:
                line = self._arrived.get(timeout=TIMEOUT)
            except queue.Empty:
                line = None
            if line is None:
                pytest.fail(f"no {pattern!r} in the output: {self.lines}")
            self.lines.append(line)

    def stop(self, signum: int) -> tuple[int, str]:
        """Send ``signum``; the exit code and what the command printed after what was read."""
        seen = len(self.lines)
        self.process.send_signal(signum)
        code = self.process.wait(TIMEOUT)
        self._reader.join(TIMEOUT)
        while (line := self._arrived.get_nowait() if not self._arrived.empty() else None) is not None:
            self.lines.append(line)
        return code, "\n".join(self.lines[seen:])

    def kill(self) -> None:
        """End the command if a test left it running: SIGTERM first, so it stops the server it started (a
        SIGKILL would leave the server behind, orphaned); SIGKILL only if that does not end it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(TIMEOUT)
        self._reader.join(TIMEOUT)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def command(tmp_path: Path) -> Iterator[type[Command]]:
    started: list[Command] = []

    class Started(Command):
        def __init__(self, *args: str) -> None:
            super().__init__(*args, cwd=tmp_path)
            started.append(self)

    yield Started
    for one in started:
        one.kill()


def answers(endpoint: str) -> bool:
    try:
        urllib.request.urlopen(endpoint, timeout=2).close()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def ask_and_answer(url: str, tmp_path: Path) -> None:
    """docs/pick-a-store.md's program on ``url``, as the page says: ``STORE=URL python refunds.py`` stops for a
    human, and its next block answers from another process. The printed URL (and the printed credentials)
    is all a user needs."""
    program, answer = blocks("docs/pick-a-store.md")
    assert program.file == "refunds.py"
    assert answer.marker == "after"
    env = {"STORE": url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    assert run_block(program, tmp_path, env) == [f"refund-42 waits on refund-approval in {url}"]
    assert run_block(answer, tmp_path, env) == ["True"]
    assert not (tmp_path / ".statehitl").exists()  # it all went to the server


def test_s3_serve_prints_a_store_url_that_works_from_other_processes_and_stops_on_ctrl_c(command, tmp_path) -> None:
    served = command("s3", "serve", "--bucket", "newcomer")
    url = served.read_until(r"store URL +(\S+)")[1]
    endpoint = re.fullmatch(r"s3://newcomer/checkpoints\?region=us-east-1&endpoint_url=(http://127\.0\.0\.1:\d+)",
                            url)
    assert endpoint, url
    assert served.read_until(r"export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing")
    assert served.read_until(r"Ctrl-C stops it")

    ask_and_answer(url, tmp_path)

    code, rest = served.stop(signal.SIGINT)
    assert code == 0
    assert "stopping the server" in rest
    assert not answers(endpoint[1])  # the server went with the command


@pytest.mark.slow
def test_dynamodb_local_prints_a_store_url_that_works_from_other_processes_and_stops_on_sigterm(
        command, tmp_path) -> None:
    served = command("dynamodb", "local", "--cache-dir", str(DYNAMODB_LOCAL), "--table", "newcomer")
    url = served.read_until(r"store URL +(\S+)")[1]
    endpoint = re.fullmatch(r"dynamodb://newcomer\?region=us-east-1&endpoint_url=(http://127\.0\.0\.1:\d+)", url)
    assert endpoint, url
    assert served.read_until(r"its stream on")

    ask_and_answer(url, tmp_path)

    code, rest = served.stop(signal.SIGTERM)  # what a process manager sends: the Java server must not outlive it
    assert code == 0
    assert "stopping the server" in rest
    assert not answers(endpoint[1])


def test_a_port_already_taken_is_a_one_line_error(s3_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    port = s3_server.rsplit(":", 1)[1]
    assert main(["s3", "serve", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.startswith("statehitl: error: cannot start the local S3 server: cannot start moto_server on port "
                          f"{port}: something already listens there")
    assert main(["dynamodb", "local", "--port", "0", "--cache-dir", str(DYNAMODB_LOCAL)]) == 2
    assert "--port must be 1-65535, got 0" in capsys.readouterr().err


def test_help_names_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["s3", "--help"]) == 0
    assert "serve" in capsys.readouterr().out
    assert main(["s3", "serve", "--help"]) == 0
    assert "print the s3:// store URL to use" in " ".join(capsys.readouterr().out.split())
    assert main(["dynamodb", "--help"]) == 0
    assert "local" in capsys.readouterr().out
    assert main(["dynamodb", "local", "--help"]) == 0
    assert "print the dynamodb:// store URL to use" in " ".join(capsys.readouterr().out.split())


def test_a_free_port_given_is_the_one_served(command) -> None:
    port = free_port()
    served = command("s3", "serve", "--port", str(port))
    assert served.read_until(r"store URL +(\S+)")[1].endswith(f"endpoint_url=http://127.0.0.1:{port}")
    assert served.stop(signal.SIGINT)[0] == 0
