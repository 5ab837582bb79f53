"""The LangGraph examples (examples/langgraph/): each runs as written (``main()``, in this process) and
in its durable mode (two processes on one ``FileCheckpointer`` store), and its ``main()`` gives what the
same program gives on the real LangGraph (the file's source with its imports pointed back at langgraph)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "langgraph"
PROGRAMS = ["map_reduce", "approval", "subgraph", "time_travel"]

TO_LANGGRAPH = {
    "from statehitl.checkpoint import FileCheckpointer, InMemorySaver":
        "from langgraph.checkpoint.memory import InMemorySaver\nfrom statehitl.checkpoint import FileCheckpointer",
    "from statehitl.graph import": "from langgraph.graph import",
    "from statehitl.types import": "from langgraph.types import",
    "from statehitl.config import": "from langgraph.config import",
}


def load(name: str, lib: str = "statehitl") -> types.ModuleType:
    """The example as a fresh module; with ``lib="langgraph"``, its imports pointed at LangGraph."""
    path = EXAMPLES / f"{name}.py"
    source = path.read_text()
    if lib == "langgraph":
        for ours, theirs in TO_LANGGRAPH.items():
            source = source.replace(ours, theirs)
        assert "from statehitl" not in source.replace("from statehitl.checkpoint import FileCheckpointer", "")
    module = types.ModuleType(f"langgraph_example_{name}_{lib}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # typing resolves the state's annotations in the module by name
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def run(name: str, *args: str) -> tuple[str, Any]:
    """One process of the durable mode: its stdout, and the JSON on its last line."""
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stdout.splitlines()[-1])


JOKES = [f"Why do {s} never lose at cards? Because {s[::-1]} is their poker face."
         for s in ("penguins", "sloths", "octopuses")]
ACTION = {"tool": "refund", "amount": 42, "reason": "refund order 42"}
DRAFT = "Tide Pools: three facts, two quotes."


def test_map_reduce_main() -> None:
    result = load("map_reduce").main()
    assert result == {"topic": "animals", "subjects": ["penguins", "sloths", "octopuses"], "jokes": JOKES,
                      "best_selected_joke": JOKES[2]}


def test_map_reduce_durable(tmp_path: Path) -> None:
    store = ["--store", str(tmp_path), "--thread", "jokes"]
    _, first = run("map_reduce", "start", *store)
    assert first == {"topic": "animals", "subjects": ["penguins", "sloths", "octopuses"], "jokes": JOKES,
                     "next": ["best_joke"]}
    out, second = run("map_reduce", "resume", *store)
    assert "stored: 3 jokes, next: ('best_joke',)" in out
    assert second == {**first, "best_selected_joke": JOKES[2], "next": []}


@pytest.mark.parametrize(("answer", "outcome"), [("yes", "refunded $42"), ("no", "cancelled")])
def test_approval_main(answer: str, outcome: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = load("approval").main(answer)
    assert result == {"request": "refund order 42", "action": ACTION, "decision": answer, "outcome": outcome}
    assert capsys.readouterr().out.count("executed: refund $42") == (answer == "yes")


@pytest.mark.parametrize(("answer", "outcome"), [("yes", "refunded $42"), ("no", "cancelled")])
def test_approval_durable(answer: str, outcome: str, tmp_path: Path) -> None:
    store = ["--store", str(tmp_path), "--thread", "refund-42"]
    _, first = run("approval", "start", *store)
    assert first == {"request": "refund order 42", "action": ACTION,
                     "waiting": [{"question": "Approve this action?", "action": ACTION}]}
    assert not (tmp_path / "ledger.txt").exists()
    _, second = run("approval", "resume", *store, "--answer", answer)
    assert second == {"request": "refund order 42", "action": ACTION, "decision": answer, "outcome": outcome}
    ledger = tmp_path / "ledger.txt"
    assert (ledger.read_text().splitlines() if ledger.exists() else []) == [json.dumps(ACTION)] * (answer == "yes")


def test_subgraph_main(capsys: pytest.CaptureFixture[str]) -> None:
    result = load("subgraph").main("ship it")
    edited = f"{DRAFT} (editor: ship it)"
    assert result == {"topic": "tide pools", "draft": edited, "verdict": "ship it", "published": f"PUBLISHED {edited}"}
    ran = [line.removeprefix("ran: ") for line in capsys.readouterr().out.splitlines() if line.startswith("ran: ")]
    assert ran == ["intake", "research", "ask_editor", "ask_editor", "revise", "publish"]


def test_subgraph_durable(tmp_path: Path) -> None:
    store = ["--store", str(tmp_path), "--thread", "article"]
    calls = tmp_path / "calls.txt"
    _, first = run("subgraph", "start", *store)
    assert first == {"topic": "tide pools", "next": ["review"],
                     "waiting": [{"question": "Publish this draft?", "draft": DRAFT}]}
    assert calls.read_text().splitlines() == ["intake", "research", "ask_editor"]
    _, second = run("subgraph", "resume", *store, "--answer", "needs a photo")
    edited = f"{DRAFT} (editor: needs a photo)"
    assert second == {"topic": "tide pools", "draft": edited, "verdict": "needs a photo",
                      "published": f"PUBLISHED {edited}"}
    # the resume continued inside the subgraph: research (before the interrupt) did not run again
    assert calls.read_text().splitlines()[3:] == ["ask_editor", "revise", "publish"]


SOCKS = {"topic": "socks", "joke": "I bought socks with holes in them. The socks were 5/10, holey approved."}
CHICKENS = {"topic": "chickens",
            "joke": "I bought chickens with holes in them. The chickens were 8/10, holey approved."}


def check_fork(result: dict[str, Any]) -> None:
    assert result["original"] == SOCKS
    assert result["fork"] == CHICKENS
    # newest first: the fork's end, the fork, then the original run (step numbers: see the LangGraph tests below)
    rows = [(r["source"], r["next"], r["values"]) for r in result["history"]]
    assert rows[:4] == [("loop", [], CHICKENS), ("update", ["write_joke"], {"topic": "chickens"}),
                        ("loop", [], SOCKS), ("loop", ["write_joke"], {"topic": "socks"})]


def test_time_travel_main() -> None:
    check_fork(load("time_travel").main("chickens"))


def test_time_travel_durable(tmp_path: Path) -> None:
    store = ["--store", str(tmp_path), "--thread", "jokes"]
    assert run("time_travel", "run", *store)[1] == SOCKS
    out, forked = run("time_travel", "fork", *store, "--topic", "chickens")
    assert "forking step 1 with topic='chickens'" in out
    check_fork(forked)


# -- the same programs on LangGraph ----------------------------------------------------------------------

MAIN_ARGS: dict[str, tuple[str, ...]] = {"map_reduce": (), "approval": ("no",), "subgraph": ("ok",),
                                         "time_travel": ("chickens",)}


@pytest.mark.parametrize("name", PROGRAMS)
def test_main_is_what_langgraph_gives(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    ours = load(name).main(*MAIN_ARGS[name]), capsys.readouterr().out
    theirs = load(name, "langgraph").main(*MAIN_ARGS[name]), capsys.readouterr().out
    assert ours == theirs


DURABLE_STEPS = {
    "map_reduce": [["start"], ["resume"]],
    "approval": [["start"], ["resume", "--answer", "yes"]],
    "subgraph": [["start"], ["resume", "--answer", "ok"]],
    "time_travel": [["run"], ["fork", "--topic", "chickens"]],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_durable_steps_are_what_langgraph_gives(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The durable mode's steps, in this process: statehitl on its file store, LangGraph on one InMemorySaver."""
    seen = {}
    for lib in ("statehitl", "langgraph"):
        module = load(name, lib)
        store = tmp_path / lib
        store.mkdir()
        if lib == "langgraph":  # the one process's saver stands in for the store the processes share
            from langgraph.checkpoint.memory import InMemorySaver

            saver = InMemorySaver()
            module.FileCheckpointer = lambda directory, saver=saver: saver
        outputs = []
        for step in DURABLE_STEPS[name]:
            module.durable([*step, "--store", str(store), "--thread", "t"])
            outputs.append(capsys.readouterr().out.splitlines())
        seen[lib] = outputs, sorted(p.name for p in store.iterdir() if p.suffix == ".txt")
        seen[lib] += tuple((store / f).read_text() for f in seen[lib][1])
    assert seen["statehitl"] == seen["langgraph"]
