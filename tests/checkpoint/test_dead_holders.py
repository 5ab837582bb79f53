"""A run's lease protects a live run, never a dead one: a process that held a thread and is gone (its disk
filled mid-run and it exited, its release failing too) leaves the thread to the next call at once when
it ran on the same machine, instead of "running in another process" for the whole lease."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer, FileStorage
from statehitl.graph import END, START, StateGraph

CHILD = """
import sys
from statehitl.checkpoint import Checkpointer, FileStorage
from statehitl.testing.faults import FaultyStorage
from test_dead_holders import graph

storage = FaultyStorage(FileStorage(sys.argv[1]))

def fill_the_disk(state):
    storage.fail("write", "full", times=None)  # every write from here on: ENOSPC, the release's too
    return {"done": state.done + ["filled"]}

try:
    graph(fill_the_disk).compile(checkpointer=Checkpointer(storage, lease_seconds=3600)).invoke({}, thread_id="t")
except Exception as exc:
    print(type(exc).__name__)
"""


class Steps(BaseModel):
    done: list[str] = []


def graph(middle: Any) -> StateGraph[Steps]:
    g = StateGraph(Steps)
    g.add_node("first", lambda s: {"done": [*s.done, "first"]})
    g.add_node("middle", middle)
    g.add_node("last", lambda s: {"done": [*s.done, "last"]})
    g.add_edge(START, "first")
    g.add_edge("first", "middle")
    g.add_edge("middle", "last")
    g.add_edge("last", END)
    return g


def test_a_run_whose_process_died_on_this_machine_is_taken_over_at_once(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parent)
    assert done.stdout.strip() == "StorageFullError", done.stderr
    app = graph(lambda s: {"done": [*s.done, "middle"]}).compile(
        checkpointer=Checkpointer(FileStorage(tmp_path), lease_seconds=3600))
    held = app.get_state("t")
    assert (held.status, held.next) == ("executing", ("middle",))  # the dead run's lease: an hour to go
    result = app.invoke(None, thread_id="t")  # at once: its process is gone, and it ran here
    assert result.state.done == ["first", "middle", "last"]
