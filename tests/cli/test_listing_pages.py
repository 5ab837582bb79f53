"""``statehitl inbox --limit N [--cursor C]`` and ``statehitl threads list --limit N [--cursor C]``: one page,
then the command for the next, which a script can run as printed until the list ends."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from paging_program import leave_waiting
from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.cli import main

THREADS = [f"job-{i:02d}" for i in range(7)]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("STATEHITL_COMMAND", raising=False)
    url = f"file://{tmp_path / 'store'}"
    leave_waiting(Checkpointer.from_url(url), THREADS, twice={"job-02"})
    return url


def follow(first: list[str], capsys: pytest.CaptureFixture[str], column: int) -> list[list[str]]:
    """Run ``first``, then each printed next-page command, until the list ends; the rows' ``column`` by page."""
    pages = []
    argv: list[str] | None = first
    while argv is not None:
        assert main(argv) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[-1] == "end of the list" or lines[-1].startswith("next page: statehitl ")
        rows = [line.split()[column] for line in lines[1:] if line.startswith("job-") or line.startswith("v2:")]
        pages.append(rows)
        argv = shlex.split(lines[-1].removeprefix("next page: "))[1:] if lines[-1].startswith("next") else None
    return pages


def test_inbox_pages_follow_their_printed_commands(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    pages = follow(["inbox", "--limit", "3", "--store", store], capsys, column=1)
    assert pages == [["job-00", "job-01", "job-02"], ["job-02", "job-03", "job-04"], ["job-05", "job-06"]]
    assert follow(["inbox", "list", "--limit", "8", "--store", store], capsys, column=1) == [
        ["job-00", "job-01", "job-02", "job-02", "job-03", "job-04", "job-05", "job-06"]]
    ids = [p.id for p in inbox.pending_page(store, limit=8).items]
    shown = follow(["inbox", "--limit", "8", "--store", store], capsys, column=0)
    assert shown == [ids]


def test_threads_list_pages(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    pages = follow(["threads", "list", "--limit", "3", "--status", "interrupted", "--store", store], capsys, column=0)
    assert pages == [THREADS[:3], THREADS[3:6], THREADS[6:]]
    assert follow(["threads", "list", "--limit", "7", "--store", store], capsys, column=0) == [THREADS]


def test_a_bad_cursor_or_limit_is_a_usage_error(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inbox", "--limit", "2", "--store", store]) == 0
    cursor = shlex.split(capsys.readouterr().out.splitlines()[-1])[-3]
    assert main(["inbox", "--limit", "2", "--cursor", cursor[:-4], "--store", store]) == 2
    assert "page cursor refused" in capsys.readouterr().err
    assert main(["threads", "list", "--limit", "2", "--cursor", cursor, "--store", store]) == 2
    assert "it pages the inbox's pending interrupts, not the threads listing" in capsys.readouterr().err
    assert main(["inbox", "--cursor", cursor, "--store", store]) == 2
    assert "give the --limit it was made with too" in capsys.readouterr().err
    assert main(["inbox", "--limit", "0", "--store", store]) == 2
    assert "must be at least 1" in capsys.readouterr().err
