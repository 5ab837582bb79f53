"""Every Python block of README.md and docs/*.md runs as printed, and the docs stand on their own.

**How a block runs.** As a user pastes it into a file and runs it: a fresh interpreter (``python -c``) in
a temporary directory of its own, with a few ``y`` lines on stdin (a block that calls ``input()`` gets a
human's yes), and AWS credentials that reach no account. It passes when it exits 0; a block that raises
fails its test, named ``DOC#heading`` (the nearest heading above it, ``-2``, ``-3``... for the next blocks
under the same heading).

**Markers.** An HTML comment on the line right before a block's fence, which a rendered page does not show:

- ``<!-- docs-test: fragment: WHY -->``: the block is deliberately partial (a piece of a program the page
  shows in full elsewhere, code that needs a cloud account, a file of a package run by its own test). It
  is not run: its test is skipped by its name, saying WHY, which must not be empty.
- ``<!-- docs-test: after -->``: the block runs in the directory of the page's block before it, after that
  one (and whatever it comes after) ran there, each in its own interpreter: a page whose program stops
  for a human and whose next block answers from another process.
- ``<!-- docs-test: file NAME.py -->``: the page asks the reader to save the block as ``NAME.py``: it is
  saved so and run as ``python NAME.py``, and the blocks ``after`` it can import it (an app that
  ``--app NAME:build`` names).
- ``<!-- docs-test: pytest -->``: the block is a test module: saved as ``test_docs_block.py`` and run with
  pytest twice, as a reader does, ``--snapshot-update`` first (syrupy writes the snapshot), then plain
  (it compares); both must pass, with at least one test run.

Any other ``docs-test:`` comment fails ``test_every_marker_is_one_the_docs_test_knows``. Besides running,
some blocks print what their comments say: the expected output is the comment on each ``print(...)``
line, in order (``expected``).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from statehitl_checkpoint_s3.local import DUMMY_AWS_ENV

from statehitl.checkpoint import FileCheckpointer

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
PRINTED = re.compile(r"^ *print\(.*\)\s+# (?P<out>.*)$", re.MULTILINE)
MARKER = re.compile(r"<!-- docs-test: (?P<text>.*?) -->\n\Z")
HEADING = re.compile(r"^#{1,6} (?P<title>.+)$", re.MULTILINE)
TIMEOUT = 120  # a safety net against hangs, not a performance assertion


@dataclass(frozen=True)
class Block:
    """One ```python block of a doc: where it is, its code, and the marker before it (None: none)."""

    doc: str
    name: str
    code: str
    marker: str | None

    @property
    def fragment(self) -> str | None:
        """Why the block is not run, when it is marked a fragment."""
        if self.marker is None or not self.marker.startswith("fragment"):
            return None
        return self.marker.removeprefix("fragment").lstrip(":").strip()

    @property
    def file(self) -> str | None:
        """The file name the page saves the block as (``file NAME.py``), if it names one."""
        found = re.fullmatch(r"file (\w+\.py)", self.marker or "")
        return found[1] if found else None


def slug(title: str) -> str:
    """A heading's anchor as GitHub makes it: lowercase, punctuation dropped, spaces as ``-``."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def blocks(doc: str) -> list[Block]:
    """The python blocks of ``doc``, in order, each named after the heading it sits under."""
    text = (ROOT / doc).read_text()
    found: list[Block] = []
    seen: dict[str, int] = {}
    for match in BLOCK.finditer(text):
        before = text[:match.start()]
        headings = HEADING.findall(before)
        base = f"{doc}#{slug(headings[-1]) if headings else 'top'}"
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}-{seen[base]}"
        marked = MARKER.search(before)
        found.append(Block(doc, name, match["code"], marked["text"].strip() if marked else None))
    return found


ALL = [block for doc in DOCS for block in blocks(doc)]


def clean_env() -> dict[str, str]:
    """The environment a reader has: no statehitl or AWS settings of this machine, credentials that reach
    no account (a block never talks to AWS: one that needs it is a fragment), no colors."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEHITL_", "AWS_"))}
    return {**env, **DUMMY_AWS_ENV, "NO_COLOR": "1"}


def run(code: str, cwd: Path, name: str = "the snippet") -> list[str]:
    """Run ``code`` as a script in ``cwd``; its output lines. A block that fails fails the test, naming it."""
    return run_command([sys.executable, "-c", code], cwd, name)


def chain(block: Block) -> list[Block]:
    """``block`` and the blocks it runs after (``after`` markers), first first."""
    page = [b for b in ALL if b.doc == block.doc]
    at = page.index(block)
    start = at
    while page[start].marker == "after":
        if start == 0:
            pytest.fail(f"{block.name} is marked 'after', but no block comes before it")
        start -= 1
    return page[start:at + 1]


def run_block(block: Block, cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """Run ``block`` in ``cwd`` as its marker says: pasted (``python -c``), saved as a file, or under pytest;
    what it printed. ``env`` adds to the reader's environment (a ``STORE`` a page reads)."""
    if block.file is not None:
        (cwd / block.file).write_text(block.code)
        return run_command([sys.executable, block.file], cwd, block.name, env)
    if block.marker == "pytest":
        (cwd / "test_docs_block.py").write_text(block.code)
        for extra in (["--snapshot-update"], []):
            out = run_command([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_docs_block.py",
                               *extra], cwd, block.name, env)
            assert re.search(r"^\d+ passed", out[-1]), f"{block.name}: pytest ran no test: {out}"
        return []
    return run_command([sys.executable, "-c", block.code], cwd, block.name, env)


def run_command(command: list[str], cwd: Path, name: str, env: Mapping[str, str] | None = None) -> list[str]:
    """Run ``command`` in ``cwd`` as ``run`` runs code; its output lines."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, input="y\n" * 8,
                          env={**clean_env(), **(env or {})}, check=False)
    if done.returncode != 0:
        pytest.fail(f"{name} raised (exit code {done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)
    return done.stdout.splitlines()


CHECKED = ["docs/agents.md", "docs/answer-from-the-inbox.md", "docs/interrupts.md", "docs/multiagent.md",
           "docs/pick-a-store.md", "docs/port-langgraph.md", "docs/port-strands.md", "docs/run-a-worker.md"]
"""Pages whose blocks print what their comments say: each ``print(...)  # OUT`` line, in order."""


@pytest.mark.parametrize("block", ALL, ids=[b.name for b in ALL])
def test_every_python_block_of_the_docs_runs_as_written(block: Block, tmp_path: Path) -> None:
    if block.fragment is not None:
        pytest.skip(f"{block.name} is a fragment: {block.fragment}")
    for step in chain(block):
        assert step.fragment is None, f"{block.name} runs after {step.name}, a fragment"
        printed = run_block(step, tmp_path)
    if block.doc in CHECKED and PRINTED.search(block.code):
        assert printed == expected(block.code), f"{block.name} printed other than its comments say"


def test_a_block_that_raises_fails_the_docs_test(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"(?s)docs/x\.md#y raised \(exit code 1\):\n.*ZeroDivisionError"):
        run("print('partly')\n1 / 0\n", tmp_path, "docs/x.md#y")
    assert run("print('whole')\n", tmp_path) == ["whole"]


def test_every_marker_is_one_the_docs_test_knows() -> None:
    for doc in DOCS:
        for found in re.finditer(r"<!-- docs-test: (.*?) -->", (ROOT / doc).read_text()):
            text = found[1].strip()
            known = text in ("after", "pytest") or re.fullmatch(r"fragment: \S.*|file \w+\.py", text)
            assert known, f"{doc}: unknown marker {found[0]!r}"
    marked = [b for b in ALL if b.marker is not None]
    assert all(b.marker in ("after", "pytest") or b.fragment or b.file for b in marked)
    assert len(ALL) > 30  # the pattern still finds the blocks


def test_the_docs_stand_on_their_own() -> None:
    """No page sends its reader outside the repository for what statehitl does (the seed spec is not in it),
    and every relative link, anchors included, reaches a file and a heading that exist."""
    for doc in DOCS:
        text = (ROOT / doc).read_text()
        assert "../shared" not in text, doc
        assert "shared/seed" not in text, doc
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            page = (ROOT / doc).parent / path if path else ROOT / doc
            assert page.exists(), f"{doc} links to {target}, which does not exist"
            if anchor and page.suffix == ".md":
                anchors = {slug(title) for title in HEADING.findall(page.read_text())}
                assert anchor in anchors, f"{doc} links to {target}: no such heading in {page.relative_to(ROOT)}"


DOORS = ["the demo", "port a LangGraph program", "port a Strands agent", "pick a store", "answer from the inbox",
         "run a worker", "snapshot-test your graph"]


def test_the_index_opens_with_a_map_of_runnable_pages() -> None:
    """docs/index.md opens with the seven doors a newcomer can take, in order, each a page whose blocks run."""
    text = (ROOT / "docs" / "index.md").read_text()
    opening = text[:text.index("\n## ", text.index("\n## ") + 1)]  # the title, the intro and the first section
    items = re.findall(r"^\d+\. \*\*\[(?P<door>[^\]]+)\]\((?P<page>[^)#]+)[^)]*\)\*\*", opening, re.MULTILINE)
    assert [door.lower() for door, _ in items] == [door.lower() for door in DOORS]
    for door, page in items[1:]:
        runnable = [b for b in ALL if b.doc == f"docs/{page}" and b.fragment is None]
        assert runnable, f"{door}: docs/{page} has no block the docs test runs"


# -- what the blocks print --------------------------------------------------------------------------


def snippet(doc: str, after: str) -> str:
    """The first python block of ``doc`` after the text ``after``."""
    text = (ROOT / doc).read_text()
    assert after in text, f"{doc} no longer has {after!r}"
    found = BLOCK.search(text, text.index(after))
    assert found, f"{doc} has no python block after {after!r}"
    return found["code"]


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


def test_the_interventions_example_denies_transforms_confirms_and_guides(tmp_path: Path) -> None:
    code = snippet("docs/agents.md", "## Interventions")
    assert run(code, tmp_path) == expected(code)


def test_the_human_in_the_loop_example_is_answered_in_the_inbox_and_applied_on_every_run(tmp_path: Path) -> None:
    code = snippet("docs/agents.md", "## Human in the loop")

    assert run(code, tmp_path) == run(code, tmp_path) == expected(code)
    threads = asyncio.run(FileCheckpointer(tmp_path / ".statehitl").threads())
    assert [t.status for t in threads] == ["completed", "completed"]


@pytest.mark.parametrize("section", ["## Cancelling a call", "## Checkpointing", "## Snapshots",
                                     "### SnapshotSessionManager", "## Storage"])
def test_the_cancel_checkpoint_snapshot_and_storage_examples_in_agents(tmp_path: Path, section: str) -> None:
    code = snippet("docs/agents.md", section)
    assert run(code, tmp_path) == expected(code)


@pytest.mark.parametrize(("doc", "after"), [("README.md", "## A graph that asks first"),
                                            ("docs/agents.md", "## Cancelling a call"),
                                            ("docs/agents.md", "## Interventions"),
                                            ("docs/agents.md", "## Human in the loop"),
                                            ("docs/agents.md", "## Checkpointing"),
                                            ("docs/agents.md", "## Snapshots"),
                                            ("docs/agents.md", "### SnapshotSessionManager"),
                                            ("docs/agents.md", "## Storage"),
                                            ("docs/langgraph.md", "## Messages"),
                                            ("docs/langgraph.md", "## The store"),
                                            ("docs/langgraph.md", "## The prebuilt agent and tool approvals"),
                                            ("docs/concepts.md", "**Fan-out.**"),
                                            ("docs/answers.md", "## Typed answers"),
                                            ("docs/answers.md", "## The answer vocabulary"),
                                            ("docs/inbox.md", "## Answers, and who applies them")])
def test_the_expected_output_is_the_comment_on_each_print(doc: str, after: str) -> None:
    """Guards the checks above: a snippet whose print lost its comment would compare nothing."""
    code = snippet(doc, after)
    assert len(expected(code)) == code.count("\nprint(")
