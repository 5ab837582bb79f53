"""Fixtures for the CLI tests: run in a temp dir, in-process (``main``) or as a real subprocess."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import SUBPROCESS_TIMEOUT, Done, Piped, subprocess_env


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty temp dir (so the default file store is ``tmp_path/.statehitl``), without color."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(sys, "stdin", Piped(""))
    return tmp_path


@pytest.fixture
def cli(workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """``cli("demo", "--no-wait", stdin=...)`` runs ``main`` in-process and returns code, out, err."""
    from statehitl.cli import main

    def run(*args: str, stdin: io.StringIO | None = None) -> Done:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", stdin)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Done(code, captured.out, captured.err)

    return run


@pytest.fixture
def proc(tmp_path: Path):
    """``proc("demo", "--no-wait", input=...)`` runs ``python -m statehitl.cli`` in ``tmp_path``."""

    def run(*args: str, input: str | None = None) -> Done:
        completed = subprocess.run(
            [sys.executable, "-m", "statehitl.cli", *args],
            cwd=tmp_path,
            env=subprocess_env(),
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=SUBPROCESS_TIMEOUT,
            check=False,
        )
        return Done(completed.returncode, completed.stdout, completed.stderr)

    return run
