"""History, time travel, update_state, retention, listing by status, integrity, changed machines."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

import stored_records
from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.errors import AlreadyAnsweredError, CheckpointCorruptError, MachineChangedError
from statehitl.graph import END, START, NodeContext, StateGraph, Status, append


class Doc(BaseModel):
    text: str = ""
    notes: Annotated[list[str], append] = []
    approved: bool = False


def draft(state: Doc) -> dict[str, Any]:
    return {"notes": f"drafted {state.text}"}


def review(state: Doc, ctx: NodeContext) -> dict[str, Any]:
    return {"approved": ctx.interrupt("approve", reason={"text": state.text}) == "y", "notes": "reviewed"}


def graph(extra_node: bool = False) -> StateGraph[Doc]:
    g = StateGraph(Doc)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_edge(START, "draft")
    g.add_edge("draft", "review")
    if extra_node:
        g.add_node("publish", lambda s: {"notes": "published"})
        g.add_edge("review", "publish")
        g.add_edge("publish", END)
    else:
        g.add_edge("review", END)
    return g


def answer(result: Any, response: str = "y") -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in result.interrupts]


@pytest.fixture(params=["memory", "file"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> Checkpointer:
    return Checkpointer(MemoryStorage() if request.param == "memory" else FileStorage(tmp_path / "store"))


def test_history_lists_steps_with_position_status_and_interrupts(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    paused = app.invoke({"text": "a"}, thread_id="t")
    app.invoke(answer(paused), thread_id="t")
    rows = [(h.status, h.step, h.next, [i.name for i in h.interrupts]) for h in app.history("t")]
    assert rows == [
        (Status.COMPLETED, 2, (), []),
        (Status.INTERRUPTED, 1, ("review",), ["approve"]),  # the step before review, with what it asks
        (Status.EXECUTING, 0, ("draft",), []),  # the run's first step, its input applied
        (Status.EXECUTING, -1, ("__start__",), []),  # the run's input checkpoint: the state before its input
    ]


def test_invoking_from_an_earlier_checkpoint_forks_and_keeps_the_old_branch(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    paused = app.invoke({"text": "a"}, thread_id="t")
    approved = app.invoke(answer(paused, "y"), thread_id="t")
    assert approved.state.approved is True
    interrupted = next(h for h in app.history("t") if h.status == Status.INTERRUPTED)
    # Its answer binds: the same again reaches what it reached, running nothing; another is refused.
    assert app.invoke(answer(interrupted, "y"), thread_id="t", checkpoint_id=interrupted.checkpoint_id).state \
        == approved.state
    with pytest.raises(AlreadyAnsweredError):
        app.invoke(answer(interrupted, "n"), thread_id="t", checkpoint_id=interrupted.checkpoint_id)
    # Travel back to the question on purpose: a replay is a new branch, which asks it afresh.
    asked = app.invoke(None, thread_id="t", checkpoint_id=interrupted.checkpoint_id)
    assert [i.name for i in asked.interrupts] == ["approve"]
    assert asked.interrupts[0].id != paused.interrupts[0].id
    denied = app.invoke(answer(asked, "n"), thread_id="t")
    assert denied.state.approved is False
    assert app.get_state("t").values.approved is False
    old = app.get_state("t", approved.checkpoint_id)
    assert old is not None
    assert old.values.approved is True
    assert old.values.notes == ["drafted a", "reviewed"]
    fork = app.get_state("t", asked.checkpoint_id)
    assert fork.metadata["source"] == "fork"
    assert fork.parent_checkpoint_id == interrupted.checkpoint_id


def test_update_state_writes_a_checkpoint_as_if_a_node_had_run(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    paused = app.invoke({"text": "a"}, thread_id="t")
    edited = app.update_state("t", {"text": "b", "notes": "human edit"})
    assert edited.status == Status.INTERRUPTED  # still waiting on the same question
    assert edited.values.text == "b"
    assert edited.values.notes == ["drafted a", "human edit"]
    assert edited.writes == {"update_state": {"text": "b", "notes": "human edit"}}
    done = app.invoke(answer(paused), thread_id="t")
    assert done.state.notes == ["drafted a", "human edit", "reviewed"]
    moved = app.update_state("t", {"notes": "as review"}, as_node="review")
    assert moved.status == Status.COMPLETED
    assert moved.next == ()
    with pytest.raises(KeyError, match="not a node"):
        app.update_state("t", {}, as_node="nope")
    with pytest.raises(KeyError, match="no checkpoint"):
        app.update_state("missing", {})


def test_threads_are_listed_by_status_from_the_index(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    app.invoke({"text": "a"}, thread_id="waiting-1")
    app.invoke({"text": "b"}, thread_id="waiting-2")
    done = app.invoke({"text": "c"}, thread_id="done")
    app.invoke(answer(done), thread_id="done")
    waiting = asyncio.run(checkpointer.threads("interrupted"))
    assert [(e.thread_id, [i.name for i in e.interrupts]) for e in waiting] == [
        ("waiting-1", ["approve"]),
        ("waiting-2", ["approve"]),
    ]
    assert waiting[0].interrupts[0].reason == {"text": "a"}
    assert [e.thread_id for e in asyncio.run(checkpointer.threads("completed"))] == ["done"]


def test_listing_reads_index_records_only() -> None:
    from statehitl.testing import CountingStorage

    storage = CountingStorage(MemoryStorage())
    checkpointer = Checkpointer(storage)
    app = graph().compile(checkpointer=checkpointer)
    for n in range(5):
        app.invoke({"text": str(n)}, thread_id=f"t{n}")
    storage.reset()
    assert len(asyncio.run(checkpointer.threads("interrupted"))) == 5
    assert all(key.startswith("index/") for key in storage.counts.keys_read)


def test_delete_removes_every_record(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    paused = app.invoke({"text": "a"}, thread_id="t")
    app.invoke(answer(paused), thread_id="t")
    app.invoke({"text": "keep"}, thread_id="other")
    asyncio.run(checkpointer.delete_thread("t"))
    assert app.get_state("t") is None
    assert asyncio.run(checkpointer.storage.list("threads/t/")) == []
    assert [e.thread_id for e in asyncio.run(checkpointer.threads())] == ["other"]


def test_prune_keeps_the_last_checkpoints_loadable(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    for n in range(12):
        result = app.invoke({"text": str(n)}, thread_id="t")
        app.invoke(answer(result), thread_id="t")
    before = app.history("t")
    removed = asyncio.run(checkpointer.prune("t", keep_last=3))
    assert removed > 0
    after = app.history("t")
    # the newest checkpoints stay as they were shown, but the run beginning of the oldest record kept (derived from
    # the record before it, which is gone)
    assert len(after) >= 2
    assert [h.checkpoint_id for h in after] == [h.checkpoint_id for h in before[:len(after)]]
    for kept in after:  # whatever else survives, the newest read back whole
        again = app.get_state("t", kept.checkpoint_id)
        assert again is not None
        assert again.values == kept.values
    assert len(after) < len(before)
    for survivor in after:  # every record left reads back whole, bases included
        assert app.get_state("t", survivor.checkpoint_id) is not None
    asyncio.run(checkpointer.prune("t", keep_last=1))
    assert app.get_state("t").values == before[0].values
    with pytest.raises(ValueError, match="keep_last"):
        asyncio.run(checkpointer.prune("t", keep_last=0))


def test_ttl_sweeps_abandoned_threads() -> None:
    checkpointer = Checkpointer(MemoryStorage(), ttl=60)
    app = graph().compile(checkpointer=checkpointer)
    app.invoke({"text": "a"}, thread_id="old")
    entry = asyncio.run(checkpointer.thread_info("old"))
    assert entry is not None
    assert entry.expires_at is not None
    assert asyncio.run(checkpointer.sweep_expired(now=entry.expires_at - 1)) == []
    assert asyncio.run(checkpointer.sweep_expired(now=entry.expires_at + 1)) == ["old"]
    assert app.get_state("old") is None


def test_signed_records_refuse_tampering(tmp_path: Path) -> None:
    key = b"s3cret"
    # Plain JSON, so the edit below still parses (a compressed one: test_compression.py)
    checkpointer = Checkpointer(FileStorage(tmp_path), signing_key=key, compress=False)
    app = graph().compile(checkpointer=checkpointer)
    app.invoke({"text": "a"}, thread_id="t")
    newest = stored_records.keys(tmp_path, "threads/t/")[0]
    assert b"#hmac-sha256:" in stored_records.read(tmp_path, newest)
    stored_records.rewrite(tmp_path, newest, stored_records.read(tmp_path, newest).replace(b'"approve"', b'"APPROVE"'))
    with pytest.raises(CheckpointCorruptError, match="fails its signature check"):
        app.get_state("t")
    unsigned = Checkpointer(FileStorage(tmp_path))  # no key: reads, cannot verify
    assert asyncio.run(unsigned.latest("t")) is not None
    other = Checkpointer(FileStorage(tmp_path / "plain"))
    graph().compile(checkpointer=other).invoke({"text": "a"}, thread_id="t")
    keyed = Checkpointer(FileStorage(tmp_path / "plain"), signing_key=key)
    with pytest.raises(CheckpointCorruptError, match="is not signed"):
        asyncio.run(keyed.latest("t"))


def test_a_truncated_record_names_thread_and_record(tmp_path: Path) -> None:
    app = graph().compile(checkpointer=Checkpointer(FileStorage(tmp_path)))
    app.invoke({"text": "a"}, thread_id="t")
    newest = stored_records.keys(tmp_path, "threads/t/")[0]
    stored_records.rewrite(tmp_path, newest, stored_records.read(tmp_path, newest)[:40])
    with pytest.raises(CheckpointCorruptError, match=r"threads/t/\d+.* not valid compressed data"):
        app.get_state("t")


def test_resuming_with_a_changed_machine_says_what_changed(checkpointer: Checkpointer) -> None:
    paused = graph().compile(checkpointer=checkpointer).invoke({"text": "a"}, thread_id="t")
    changed = graph(extra_node=True).compile(checkpointer=checkpointer)
    with pytest.raises(MachineChangedError, match=r"nodes added: \['publish'\]"):
        changed.invoke(answer(paused), thread_id="t")
    assert asyncio.run(checkpointer.head("t")).claim is None  # refused before claiming anything
    accepting = graph(extra_node=True).compile(checkpointer=checkpointer, accept_machine_change=True)
    done = accepting.invoke(answer(paused), thread_id="t")
    assert done.state.notes == ["drafted a", "reviewed", "published"]


def test_a_migration_converts_the_stored_state(checkpointer: Checkpointer) -> None:
    paused = graph().compile(checkpointer=checkpointer).invoke({"text": "a"}, thread_id="t")
    seen: list[str] = []

    def migrate(values: dict[str, Any], fingerprint: str) -> dict[str, Any]:
        seen.append(fingerprint)
        return {**values, "text": values["text"].upper(), "notes": [*values["notes"], "migrated"]}

    app = graph(extra_node=True).compile(checkpointer=checkpointer, migrate=migrate)
    done = app.invoke(answer(paused), thread_id="t")
    assert seen == [paused_fingerprint(checkpointer)]
    assert done.state.text == "A"
    assert done.state.notes == ["drafted a", "migrated", "reviewed", "published"]
    assert app.get_state("t").values.notes == done.state.notes  # the migrated chain reads back whole


def paused_fingerprint(checkpointer: Checkpointer) -> str:
    interrupted = [r for r in asyncio.run(checkpointer.history("t")) if r.status == "interrupted"]
    return interrupted[-1].fingerprint


def test_deleting_a_thread_leaves_threads_whose_ids_it_prefixes(checkpointer: Checkpointer) -> None:
    app = graph().compile(checkpointer=checkpointer)
    for thread in ("t", "t2", "t-extra"):
        app.invoke({"text": thread}, thread_id=thread)
    asyncio.run(checkpointer.delete_thread("t"))
    assert sorted(e.thread_id for e in asyncio.run(checkpointer.threads())) == ["t-extra", "t2"]
    assert app.get_state("t2") is not None
