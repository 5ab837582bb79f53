"""Code in the README and docs/ runs as printed and prints what its comments say, every time.

Each snippet runs as a user would paste it into a file: a fresh interpreter in a temp directory (the
README's graph writes its store under ``./.statehitl``). The expected output is the comment on each
``print(...)`` line, in order.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from statehitl.checkpoint import FileCheckpointer

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
PRINTED = re.compile(r"^print\(.*\)\s+# (?P<out>.*)$", re.MULTILINE)


def snippet(doc: str, after: str) -> str:
    """The first python block of ``doc`` after the text ``after``."""
    text = (ROOT / doc).read_text()
    assert after in text, f"{doc} no longer has {after!r}"
    found = BLOCK.search(text, text.index(after))
    assert found, f"{doc} has no python block after {after!r}"
    return found["code"]


def run(code: str, cwd: Path) -> list[str]:
    """Run ``code`` as a script in ``cwd``; its output lines."""
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def expected(code: str) -> list[str]:
    lines = [m["out"] for m in PRINTED.finditer(code)]
    assert lines, "the snippet shows no output to check"
    return lines


def test_the_readme_graph_prints_what_it_says_on_every_run(tmp_path: Path) -> None:
    code = snippet("README.md", "## A graph that asks first")

    first, second = run(code, tmp_path), run(code, tmp_path)  # the second run finds the first one's store

    assert first == second == expected(code) == [
        "{'text': 'refund please'}", "{'text': 'refund please', 'log': ['classified'], 'approved': True}"]
    threads = asyncio.run(FileCheckpointer(tmp_path / ".statehitl").threads())
    assert [t.status for t in threads] == ["completed", "completed"]  # a thread per run


def test_the_fan_out_example_in_concepts(tmp_path: Path) -> None:
    code = snippet("docs/concepts.md", "**Fan-out.**")

    assert run(code, tmp_path) == expected(code)


def test_the_typed_answer_example_refuses_a_wrong_answer_and_audits_the_right_ones(tmp_path: Path) -> None:
    code = snippet("docs/answers.md", "## Typed answers")

    assert run(code, tmp_path) == expected(code)
    # the refused answer left no trace: two answers, two audit entries, in the store the snippet made
    trail = asyncio.run(FileCheckpointer(tmp_path / ".statehitl").audit("order-42"))
    assert [(e.name, e.responder, e.comment) for e in trail] == [("review", "ada", None), ("amount", "ada", "partial")]


def test_the_who_may_answer_example_refuses_bob_and_takes_a_member_of_finance(tmp_path: Path) -> None:
    code = snippet("docs/answers.md", "## Who may answer")

    assert run(code, tmp_path) == expected(code)
    trail = asyncio.run(FileCheckpointer(tmp_path / ".statehitl").audit("refund-42"))
    assert [(e.outcome, e.responder, e.via) for e in trail] == [("refused", "bob", "app"), ("applied", "cat", "app")]


def test_the_tool_approval_example_edits_the_call_and_audits_it(tmp_path: Path) -> None:
    code = snippet("docs/answers.md", "## The answer vocabulary")

    assert run(code, tmp_path) == expected(code)


def test_the_inbox_example_answers_then_the_app_applies_it(tmp_path: Path) -> None:
    code = snippet("docs/inbox.md", "## Answers, and who applies them")
    assert run(code, tmp_path) == expected(code)


@pytest.mark.parametrize("after", ["## Messages", "## The store"])
def test_the_langgraph_pages_message_and_store_examples(after: str, tmp_path: Path) -> None:
    code = snippet("docs/langgraph.md", after)
    assert run(code, tmp_path) == expected(code)


def test_the_message_example_runs_the_same_without_langchain_core(tmp_path: Path) -> None:
    code = snippet("docs/langgraph.md", "## Messages")
    blocked = "import sys\nsys.modules['langchain_core'] = None\n" + code
    assert run(blocked, tmp_path) == expected(code)


@pytest.mark.parametrize(("doc", "after"), [("README.md", "## A graph that asks first"),
                                            ("docs/langgraph.md", "## Messages"),
                                            ("docs/langgraph.md", "## The store"),
                                            ("docs/concepts.md", "**Fan-out.**"),
                                            ("docs/answers.md", "## Typed answers"),
                                            ("docs/answers.md", "## The answer vocabulary"),
                                            ("docs/inbox.md", "## Answers, and who applies them")])
def test_the_expected_output_is_the_comment_on_each_print(doc: str, after: str) -> None:
    """Guards the checks above: a snippet whose print lost its comment would compare nothing."""
    code = snippet(doc, after)
    assert len(expected(code)) == code.count("\nprint(")
