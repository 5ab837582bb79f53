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
PROGRAMS = ["map_reduce", "approval", "subgraph", "time_travel", "memory", "func_approval"]

TO_LANGGRAPH = {
    "from statehitl.checkpoint import FileCheckpointer, InMemorySaver":
        "from langgraph.checkpoint.memory import InMemorySaver\nfrom statehitl.checkpoint import FileCheckpointer",
    "from statehitl.graph import": "from langgraph.graph import",
    "from statehitl.types import": "from langgraph.types import",
    "from statehitl.config import": "from langgraph.config import",
    "from statehitl.store.base import": "from langgraph.store.base import",
    "from statehitl.store.memory import": "from langgraph.store.memory import",
    "from statehitl.func import": "from langgraph.func import",
}
KEPT = ("from statehitl.checkpoint import FileCheckpointer", "from statehitl.store import FileStore")
"""statehitl's own durable stores, which the durable mode uses (on LangGraph the test swaps in memory ones)."""


def load(name: str, lib: str = "statehitl") -> types.ModuleType:
    """The example as a fresh module; with ``lib="langgraph"``, its imports pointed at LangGraph."""
    path = EXAMPLES / f"{name}.py"
    source = path.read_text()
    if lib == "langgraph":
        for ours, theirs in TO_LANGGRAPH.items():
            source = source.replace(ours, theirs)
        rest = source
        for kept in KEPT:
            rest = rest.replace(kept, "")
        assert "from statehitl" not in rest
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


MEMORY = [["--user", "ann", "--conversation", "1", "--text", "remember: I like green tea"],
          ["--user", "ann", "--conversation", "2", "--text", "what tea do I like?"],
          ["--user", "bob", "--conversation", "3", "--text", "what tea do I like?"]]


def test_memory_main(capsys: pytest.CaptureFixture[str]) -> None:
    assert load("memory").main() == {"ann": ["I like green tea", "my cat is called Miso"], "bob": []}
    replies = [line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert replies == ["Noted: I like green tea", "Noted: my cat is called Miso", "You told me: I like green tea",
                       "I know nothing about you yet.", "You told me: my cat is called Miso"]


def test_memory_durable(tmp_path: Path) -> None:
    """Each turn a process of its own: the second, in a new conversation, finds what the first stored."""
    store = ["--store", str(tmp_path)]
    assert run("memory", "chat", *store, *MEMORY[0])[1] == {"reply": "Noted: I like green tea", "turns": 2,
                                                            "memories": ["I like green tea"]}
    assert run("memory", "chat", *store, *MEMORY[1])[1] == {"reply": "You told me: I like green tea", "turns": 2,
                                                            "memories": ["I like green tea"]}
    assert run("memory", "chat", *store, *MEMORY[2])[1] == {"reply": "I know nothing about you yet.", "turns": 2,
                                                            "memories": []}
    _, again = run("memory", "chat", *store, *MEMORY[1][:4], "--text", "what tea do I like?")
    assert again["turns"] == 4  # the conversation's thread went on from its checkpoint


ORDER_42 = {"order": "order 42", "amount": 42}


@pytest.mark.parametrize(("answer", "outcome"), [("yes", "refunded $42"), ("no", "declined")])
def test_func_approval_main(answer: str, outcome: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = load("func_approval").main(answer)
    assert result["first"] == {"order": ORDER_42, "decision": answer, "outcome": outcome}
    out = capsys.readouterr().out
    assert out.count("ran: look_up_order") == 2  # once per run: the resume does not look the order up again
    assert out.count("ran: refund") == 2 * (answer == "yes")
    # the second run saw the first's total as previous; get_state shows the value, not what was saved
    assert f"saved: {result['second']}" in out


@pytest.mark.parametrize(("answer", "outcome"), [("yes", "refunded $42"), ("no", "declined")])
def test_func_approval_durable(answer: str, outcome: str, tmp_path: Path) -> None:
    store = ["--store", str(tmp_path), "--thread", "refund-42"]
    out, first = run("func_approval", "start", *store)
    assert first == {"waiting": [{"question": "Refund this order?", "order": ORDER_42}]}
    assert "waiting on ('refund_workflow',)" in out
    _, second = run("func_approval", "resume", *store, "--answer", answer)
    assert second == {"order": ORDER_42, "decision": answer, "outcome": outcome}
    # the lookup finished before the interrupt: the resume in a new process did not run it again
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["look_up_order"] + ["refund"] * (answer == "yes")
    ledger = tmp_path / "ledger.txt"
    assert (ledger.read_text().splitlines() if ledger.exists() else []) == [json.dumps(ORDER_42)] * (answer == "yes")


# -- the same programs on LangGraph ----------------------------------------------------------------------

MAIN_ARGS: dict[str, tuple[str, ...]] = {"map_reduce": (), "approval": ("no",), "subgraph": ("ok",),
                                         "time_travel": ("chickens",), "memory": (), "func_approval": ("yes",)}


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
    "memory": [["chat", *MEMORY[0]], ["chat", *MEMORY[1]], ["chat", *MEMORY[2]]],
    "func_approval": [["start"], ["resume", "--answer", "yes"]],
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
            if hasattr(module, "FileStore"):  # and one InMemoryStore for the store the processes share
                from langgraph.store.memory import InMemoryStore

                shared = InMemoryStore(index=module.INDEX)
                module.FileStore = lambda directory, index=None, shared=shared: shared
        outputs = []
        for step in DURABLE_STEPS[name]:
            module.durable([*step, "--store", str(store), "--thread", "t"])
            outputs.append(capsys.readouterr().out.splitlines())
        seen[lib] = outputs, sorted(p.name for p in store.iterdir() if p.suffix == ".txt")
        seen[lib] += tuple((store / f).read_text() for f in seen[lib][1])
    assert seen["statehitl"] == seen["langgraph"]


# -- react_approval: statehitl's approve_tools, which LangGraph's create_react_agent has no counterpart of ---------

LOOKED_UP = '{"item": "kettle", "cents": 4200}'
ASKED = {"args": {"cents": 4200, "order_id": 42}, "id": "call-refund", "tool": "refund"}


@pytest.mark.parametrize(("answer", "refund_message"), [
    ("approve", "refunded 4200 cents on order 42"), ("edit:1500", "refunded 1500 cents on order 42"),
    ("reject", "refunds over $40 need a manager")])
def test_react_approval_main(answer: str, refund_message: str, capsys: pytest.CaptureFixture[str]) -> None:
    conversation = load("react_approval").main(answer)
    assert conversation == [["human", "please refund order 42"], ["ai", ""], ["tool", LOOKED_UP],
                            ["tool", refund_message], ["ai", f"Done: {LOOKED_UP}; {refund_message}"]]
    asked = "asked: {'tool': 'refund', 'args': {'order_id': 42, 'cents': 4200}, 'id': 'call-refund'}"
    assert asked in capsys.readouterr().out


@pytest.mark.parametrize(("answer", "cents", "outcome"), [("approve", 4200, "applied"), ("edit:2000", 2000, "edited"),
                                                          ("reject", None, "rejected")])
def test_react_approval_durable(answer: str, cents: int | None, outcome: str, tmp_path: Path) -> None:
    store = ["--store", str(tmp_path), "--thread", "refund-42"]
    out, first = run("react_approval", "start", *store)
    # each call is a task of its own (version "v2"): the lookup ran, the refund waits for its answer
    assert first == {"conversation": [["human", "please refund order 42"], ["ai", ""], ["tool", LOOKED_UP]],
                     "waiting": [ASKED]}
    assert "waiting on ('tools',)" in out
    assert not (tmp_path / "ledger.txt").exists()  # no refund before the answer
    _, second = run("react_approval", "resume", *store, "--answer", answer)
    assert second["audit"] == [[outcome, "ann"]]
    assert second["conversation"][2] == ["tool", LOOKED_UP]
    ledger = tmp_path / "ledger.txt"
    lines = ledger.read_text().splitlines() if ledger.exists() else []
    refunded = {"order_id": 42, "cents": cents, "key_prefix": "statehitl-"}
    assert lines == ([] if cents is None else [json.dumps(refunded)])
    again = subprocess.run([sys.executable, str(EXAMPLES / "react_approval.py"), "resume", *store],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode != 0  # nothing waits any more: a second resume runs nothing
    assert (ledger.read_text().splitlines() if ledger.exists() else []) == lines
