"""Crash safety: a writer killed with SIGKILL at random moments never leaves an unreadable thread."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from statehitl.checkpoint import Checkpointer, FileStorage

LIMIT = 1200

WRITER = textwrap.dedent(
    f"""
    import sys, time
    from typing import Annotated
    from pydantic import BaseModel
    from statehitl.checkpoint import Checkpointer, FileStorage
    from statehitl.errors import CheckpointConflict
    from statehitl.graph import END, START, StateGraph, append

    class Counter(BaseModel):
        n: int = 0
        log: Annotated[list[int], append] = []

    def count(state):
        time.sleep(0.003)  # a node doing some work, so kills land at every point of a step
        return {{"n": state.n + 1, "log": state.n + 1}}

    g = StateGraph(Counter)
    g.add_node("count", count)
    g.add_edge(START, "count")
    g.add_conditional_edges("count", lambda s: END if s.n >= {LIMIT} else "count")
    app = g.compile(checkpointer=Checkpointer(FileStorage(sys.argv[1]), lease_seconds=0.2),
                    step_limit=10_000, durability=sys.argv[2])
    print("started", flush=True)
    while True:
        head = app.get_state("t")
        try:
            if head is None:
                app.invoke({{}}, thread_id="t")
            elif head.status.value != "completed":
                app.invoke(None, thread_id="t")   # take over the killed run once its lease expires
            break
        except CheckpointConflict:
            time.sleep(0.05)
    print(app.get_state("t").values.n)
    """
)


def check_consistent(store: Path) -> int:
    """The newest checkpoint reads back whole and its channels agree; returns how far it got."""
    record = asyncio.run(Checkpointer(FileStorage(store)).latest("t"))
    if record is None:
        return 0
    n = record.values["n"]
    assert record.values["log"] == list(range(1, n + 1))
    return int(n)


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["step", "sync"])
def test_sigkill_at_random_points_leaves_the_last_commit_resumable(tmp_path: Path, durability: str) -> None:
    store = tmp_path / "store"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    rng = random.Random(1234 if durability == "step" else 4321)
    progress = [0]
    for _ in range(10):
        proc = subprocess.Popen([sys.executable, str(script), str(store), durability],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"started\n"  # imports done: the kill lands in the run itself
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        reached = check_consistent(store)
        assert reached >= progress[-1]  # a commit once made is never lost
        progress.append(reached)
    done = subprocess.run([sys.executable, str(script), str(store), durability], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["started", str(LIMIT)]
    assert check_consistent(store) == LIMIT
    assert len(set(progress)) > 3, progress  # the kills really landed mid-run, at different points
    (store / "threads" / ".tmp-planted").write_bytes(b"a compaction killed before its rename")
    debris = list(store.rglob(".tmp-*"))  # the planted one, and any a kill left mid-compaction
    assert asyncio.run(FileStorage(store).cleanup(max_age=0)) == len(debris)
    assert list(store.rglob(".tmp-*")) == []
    # Pruning to the last checkpoint keeps exactly it, rewritten whole: every other checkpoint and
    # every claim the takeovers wrote goes.
    checkpointer = Checkpointer(FileStorage(store))
    records = asyncio.run(checkpointer.storage.list("threads/t/"))
    assert asyncio.run(checkpointer.prune("t", keep_last=1)) == len(records) - 1
    assert len(asyncio.run(checkpointer.storage.list("threads/t/"))) == 1
    assert check_consistent(store) == LIMIT
