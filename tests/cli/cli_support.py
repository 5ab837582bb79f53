"""Helpers for the CLI tests (plain functions and classes; the fixtures are in conftest.py)."""

from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from statehitl._sync import run_sync
from statehitl.checkpoint import Checkpointer, CheckpointRecord

SUBPROCESS_TIMEOUT = 120  # a safety net against hangs, not a performance assertion


class FakeTTY(io.StringIO):
    """A stdin that claims to be a terminal and holds what the human will type."""

    def isatty(self) -> bool:
        return True


class Piped(io.StringIO):
    """A stdin fed by a pipe: not a terminal."""

    def isatty(self) -> bool:
        return False


@dataclass
class Done:
    code: int
    out: str
    err: str


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    return env


def latest(store: str | Path, thread: str) -> CheckpointRecord | None:
    """The newest checkpoint of ``thread`` in ``store`` (a URL or a directory)."""
    return run_sync(Checkpointer.from_url(str(store)).latest(thread))


def assert_one_line_error(done: Done, *fragments: str) -> None:
    """Bad input: exit 2, exactly one line on stderr that says what was wrong, no traceback."""
    assert done.code == 2, (done.out, done.err)
    lines = done.err.splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith("statehitl: error: ")
    assert "Traceback" not in done.err
    for fragment in fragments:
        assert fragment in lines[0]


def entered(out: str) -> list[str]:
    """The nodes a demo run printed as entered (``step N  ▶ node`` lines), in order."""
    return re.findall(r"^  step \d+ +(?:▶|>) (\S+)$", out, flags=re.MULTILINE)


def read_until(fd: int, marker: bytes, seen: bytearray) -> None:
    """Read the pty until ``marker`` appears (or the child closes it)."""
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], SUBPROCESS_TIMEOUT)
        assert ready, f"no output for {SUBPROCESS_TIMEOUT}s; so far: {seen.decode(errors='replace')}"
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return
        if not chunk:
            return
        seen.extend(chunk)


def run_on_pty(cwd: Path, *args: str, prompt: bytes, answer: bytes) -> tuple[int, str]:
    """Run ``python -m statehitl.cli ARGS`` on a pseudo-terminal, type ``answer`` once ``prompt`` shows.

    Returns the exit code and everything the terminal showed (the echoed answer too), its CRLF
    line ends turned into LF.
    """
    import pty

    master, slave = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "statehitl.cli", *args],
        cwd=cwd, env=subprocess_env(), stdin=slave, stdout=slave, stderr=slave,
    )
    os.close(slave)
    seen = bytearray()
    try:
        read_until(master, prompt, seen)
        os.write(master, answer)
        read_until(master, b"\x00never", seen)  # to the end of the output
        code = child.wait(timeout=SUBPROCESS_TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(master)
    return code, seen.decode("utf-8", errors="replace").replace("\r\n", "\n")
