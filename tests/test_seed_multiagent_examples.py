"""The seed's Multi-Agents examples (Swarm and Graph) as programs on statehitl, and the Graph one call per
process on a file session (``examples/graph_session.py``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_seed_examples import SEED_DOC, SEED_EXAMPLES, assert_verbatim, run_example

EXAMPLES = SEED_EXAMPLES.parent
CLEANED = "I cleaned up the 3 resources older than 5 days."


def multiagent_blocks() -> tuple[list[str], list[str]]:
    """The seed's Swarm and Graph ```python blocks."""
    if not SEED_DOC.is_file():
        pytest.skip(f"the seed is not at {SEED_DOC}")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", SEED_DOC.read_text(), flags=re.DOTALL)
              if "strands.multiagent" in b]
    swarm = next(b for b in blocks if "import Swarm" in b)
    graph = next(b for b in blocks if "import GraphBuilder" in b)
    return swarm.splitlines(), graph.splitlines()


def test_the_examples_are_the_seed_verbatim() -> None:
    swarm, graph = multiagent_blocks()
    agent_line = re.compile(r'^(\s*)(.*Agent\(name="(\w+)".*callback_handler=None)\)(,?)$')
    for seed, example in ((swarm, "swarm.py"), (graph, "graph.py")):
        replaced = {}
        for line in seed:
            match = agent_line.match(line.rstrip())
            if match:  # model= added to each Agent, on its line
                indent, call, name, comma = match.groups()
                replaced[line.rstrip()] = f'{indent}{call}, model=scripted_model("{name}")){comma}'
        assert replaced, f"no Agent(...) line found in the seed's {example} block"
        assert_verbatim(seed, SEED_EXAMPLES / example, replaced)


def test_the_swarm_example_cleans_up_on_yes(tmp_path: Path) -> None:
    out = run_example("swarm.py", "y\n", tmp_path)
    assert out.count("Do you want to cleanup example (y/N): ") == 1
    assert "I cleaned up the resources older than 5 days." in out


@pytest.mark.parametrize("answer", ["n\n", "\n"])
def test_the_swarm_example_ends_failed_on_no(tmp_path: Path, answer: str) -> None:
    out = run_example("swarm.py", answer, tmp_path)
    assert "STATUS: failed" in out
    assert "FAILURE: User denied permission to cleanup resources" in out


def test_the_graph_example_inspects_then_cleans_up_on_yes(tmp_path: Path) -> None:
    out = run_example("graph.py", "y\n", tmp_path)
    assert out.count("Do you want to cleanup example (y/N): ") == 1
    assert json.loads(out.split("MESSAGE: ", 1)[1]) == {"role": "assistant", "content": [{"text": CLEANED}]}


def test_the_graph_example_raises_the_cancel_on_no(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SEED_EXAMPLES / "graph.py")], input="n\n", capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().endswith("NodeCancelledError: User denied permission to cleanup resources")


def test_the_graph_example_keeps_its_graph_in_a_session(tmp_path: Path) -> None:
    out = run_example("graph.py", "y\n", tmp_path, env={"STATEHITL_SESSION_URL": f"file://{tmp_path}/sessions"})
    assert CLEANED in out
    assert any((tmp_path / "sessions").rglob("*")), "nothing was written to the session"


def test_the_graph_one_process_per_call_on_a_file_session(tmp_path: Path) -> None:
    env = {**os.environ, "SESSIONS": str(tmp_path / "sessions")}

    def call(*args: str, answers: str = "") -> str:
        done = subprocess.run([sys.executable, str(EXAMPLES / "graph_session.py"), *args], input=answers,
                              capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert call("Inspect and clean up my resources") == 'WAITING: myapp-approval {"resources": "example"}\n'
    out = call("--resume", answers="y\n")
    assert "STATUS: completed" in out
    assert CLEANED in out
