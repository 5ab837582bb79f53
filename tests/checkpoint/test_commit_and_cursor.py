"""A commit builds its record (``step_record``), writes it, and moves the cursor through the cursor's own
methods; a failed index write reaches the run that made it, not the next one on the same cursor."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl.channels import StateSchema
from statehitl.checkpoint import Checkpointer, MemoryStorage
from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.step_record import build_step_record
from statehitl.errors import StorageUnavailableError
from statehitl.graph import END, START, NodeContext, StateGraph, Status, append
from statehitl.testing.faults import FaultyStorage

SRC = Path(__file__).resolve().parents[2] / "src"
FIELDS = {f.name for f in dataclasses.fields(Cursor)} - {"thread_id"}


def test_only_the_cursor_changes_its_fields() -> None:
    """Every change of a cursor goes through a method of ``Cursor`` (its docstring names each field's owner)."""
    assigned = []
    for path in SRC.rglob("*.py"):
        if path.name == "chain.py" and path.parent.name == "checkpoint":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr in FIELDS \
                        and ast.unparse(target.value).endswith("cursor"):
                    assigned.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(target)}")
    assert not assigned, assigned


class Log(BaseModel):
    log: Annotated[list[str], append] = []
    n: int = 0


def test_a_step_record_stores_what_its_base_lacks_and_links_the_cursor_to_it() -> None:
    codec = StateSchema(Log)
    cursor = Cursor("t")

    def build(state: Log, fields: dict[str, Any], lease_until: float | None = None) -> Any:
        return build_step_record(cursor, state, codec, fields, machine="m", fingerprint="f", status="executing",
                                 delta=True, created_at=1.0, lease_until=lease_until)

    record, _, link = build(Log(log=["a"], n=1), {"step": 1})
    assert (record.seq, record.appends["log"].items, link.lengths) == (0, ["a"], {"log": 1})
    cursor.advance(link, settled=True)
    record, stored, _ = build(Log(log=["a", "b"], n=2), {"step": 2, "writes": {"x": {"log": ["b"]}}}, lease_until=5.0)
    assert (record.seq, record.parent_seq, record.base_seq) == (1, 0, 0)
    assert (record.appends["log"].start, record.appends["log"].items) == (1, ["b"])
    assert stored.writes == {"x": {"log": {"$items": [1, 2]}}}  # by reference to items 1:2, as stored
    assert record.writes == {"x": {"log": ["b"]}}
    assert record.lease_until == 5.0
    cursor.store_whole()
    record, _, _ = build(Log(log=["a", "b"]), {"step": 3})
    assert (record.depth, record.base_seq, record.appends["log"].items) == (1, None, ["a", "b"])


def review(state: Log, ctx: NodeContext) -> dict[str, Any]:
    return {"log": [f"review={ctx.interrupt('approve')}"]}


def build(storage: FaultyStorage) -> Any:
    g = StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("review", review)
    g.add_edge(START, "a")
    g.add_edge("a", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=Checkpointer(storage))


def test_a_failed_index_write_is_raised_by_its_run_after_the_checkpoint_is_stored() -> None:
    probe = FaultyStorage(MemoryStorage())
    build(probe).invoke({}, thread_id="t")
    index_write = next(c.number for c in probe.calls if c.operation == "write" and c.key.startswith("index/"))
    storage = FaultyStorage(MemoryStorage()).fail_at(index_write, "unavailable")
    app = build(storage)
    with pytest.raises(StorageUnavailableError) as failed:
        app.invoke({}, thread_id="t")
    assert any("is committed; only its index entry" in note for note in failed.value.__notes__)
    stopped = app.get_state("t")  # the checkpoint is stored, and the thread goes on from it
    assert stopped.status == Status.INTERRUPTED
    assert asyncio.run(app.checkpointer.thread_info("t")) is None  # only the listing is stale
    answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in stopped.interrupts]
    assert app.invoke(answers, thread_id="t")["log"] == ["a", "review=y"]  # the error did not follow it
    assert asyncio.run(app.checkpointer.thread_info("t")).status == "completed"
