"""The first-run pages do what they show: their terminal sessions print what the page prints, and the
ported LangGraph program behaves as the same program does on LangGraph.

``test_doc_snippets.py`` runs every Python block; here the ``console`` sessions of the inbox and worker
pages run too, command by command, after the page's program, and their output is compared with the
page's, ages and times aside (``normalized``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from test_doc_snippets import ROOT, Block, blocks, clean_env, run_block, run_command

SESSION = re.compile(r"^```console\n(?P<text>.*?)^```$", re.MULTILINE | re.DOTALL)
TIMEOUT = 120  # a safety net against hangs, not a performance assertion


def normalized(text: str) -> str:
    """``text`` without what differs from run to run: ages (``4s``, ``1s ago``) and times."""
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "<time>", text)
    return re.sub(r"\b\d+s\b", "<age>", text)


def session(doc: str) -> list[tuple[str, list[str]]]:
    """The first ``console`` block of ``doc`` as (command, the lines the page shows it printing)."""
    found = SESSION.search((ROOT / doc).read_text())
    assert found, f"{doc} has no console session"
    steps: list[tuple[str, list[str]]] = []
    for line in found["text"].splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def page_program(doc: str) -> Block:
    """The block the page asks the reader to save and run first."""
    [first] = [b for b in blocks(doc) if b.file is not None]
    return first


@pytest.mark.parametrize("doc", ["docs/answer-from-the-inbox.md", "docs/run-a-worker.md"])
def test_the_console_session_prints_what_the_page_shows(doc: str, tmp_path: Path) -> None:
    run_block(page_program(doc), tmp_path)
    steps = session(doc)
    assert len(steps) >= 4
    for command, shown in steps:
        words = shlex.split(command)
        assert words[0] == "statehitl", command
        done = subprocess.run([sys.executable, "-m", "statehitl.cli", *words[1:]], cwd=tmp_path, env=clean_env(),
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert normalized(done.stdout).splitlines() == normalized("\n".join(shown)).splitlines(), command


DRIVER = """
from {types} import Command

result = graph.invoke({{"customer": "Ada", "amount": 120}}, config)
print(result["__interrupt__"][0].value)
print(graph.get_state(config).next)
print(graph.invoke(Command(resume="y"), config))
print(graph.get_state(config).next)
"""
"""What the page does with the program, in one process: ask, look at what waits, answer, look again."""


def test_the_ported_program_behaves_as_it_does_on_langgraph(tmp_path: Path) -> None:
    """The page's program, and the program it was ported from (every line that says ``# was: LINE`` put back
    to LINE), run by the same driver: on statehitl and on LangGraph itself, they print the same."""
    program = page_program("docs/port-langgraph.md").code
    module = program[:program.index('if __name__ == "__main__":')]
    original = "\n".join(line.partition("# was: ")[2] or line for line in module.splitlines())
    assert "langgraph" not in "\n".join(line.partition("#")[0] for line in module.splitlines())  # but in comments
    assert original.count("from langgraph") == 3
    assert "InMemorySaver()" in original

    on_statehitl = run_command([sys.executable, "-c", module + DRIVER.format(types="statehitl.types")], tmp_path,
                               "the ported program")
    on_langgraph = run_command([sys.executable, "-c", original + DRIVER.format(types="langgraph.types")], tmp_path,
                               "the program on LangGraph")
    assert on_statehitl == on_langgraph == ["{'question': 'Refund $120 to Ada?'}", "('review',)",
                                            "{'customer': 'Ada', 'amount': 120, 'approved': True, 'paid': True}",
                                            "()"]
