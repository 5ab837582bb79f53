"""The code of docs/workers.md runs as printed and prints what its comments say."""

from __future__ import annotations

from pathlib import Path

from test_doc_snippets import expected, run, snippet


def test_the_library_example_resumes_the_inbox_answer_and_tells_the_sink(tmp_path: Path) -> None:
    code = snippet("docs/workers.md", "In Python, `statehitl.worker.Worker(store, build, ...)`")
    assert run(code, tmp_path) == expected(code)


def test_the_receiver_example_accepts_a_signed_body_and_refuses_a_changed_one(tmp_path: Path) -> None:
    code = snippet("docs/workers.md", "**Verify the signature**")
    assert run(code, tmp_path) == expected(code)
