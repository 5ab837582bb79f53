"""The audit trail: one entry per applied answer, stored once with the step that applied it (racing resumes:
the winner's), kept through ``prune``, readable in a new process and from the CLI, removed with the thread."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel

from replies import reply
from statehitl.checkpoint import Checkpointer, FileCheckpointer, MemoryCheckpointer
from statehitl.checkpoint.audit import ResumeAudit, audit_prefix
from statehitl.checkpoint.codec import decode, encode
from statehitl.checkpoint.file import FileStorage
from statehitl.checkpoint.records import AuditEntry
from statehitl.checkpoint.storage import ABSENT
from statehitl.errors import AlreadyAnsweredError, CheckpointConflict, NotInterruptedError, UnknownInterruptError
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.json_schema_check import schema_errors
from statehitl.resume import AnswerMeta
from statehitl.run_start import audit_entries
from statehitl.testing import CountingStorage


class State(BaseModel):
    log: list[str] = []


def approvals(checkpointer: Checkpointer, ran: list[str] | None = None) -> Any:
    """Two interrupts in a row: ``first`` then, after it is answered, ``second``."""

    def first(state: State, ctx: NodeContext) -> dict[str, Any]:
        answer = ctx.interrupt("first", reason={"step": 1})
        if ran is not None:
            ran.append(f"first {answer}")
        return {"log": [*state.log, f"first {answer}"]}

    def second(state: State, ctx: NodeContext) -> dict[str, Any]:
        answer = ctx.interrupt("second", reason={"step": 2})
        return {"log": [*state.log, f"second {answer}"]}

    g = StateGraph(State)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", END)
    return g.compile(checkpointer=checkpointer)


LOST = (CheckpointConflict, NotInterruptedError, UnknownInterruptError, AlreadyAnsweredError)
"""What a resume that lost the race gets: the claim was taken, or the thread was running or had moved on."""



def test_every_answer_is_recorded_once_in_order_and_survives_prune(tmp_path):
    checkpointer = FileCheckpointer(tmp_path)
    app = approvals(checkpointer)
    one = app.invoke({}, thread_id="t").interrupts[0]
    two = app.invoke(reply(one, "yes", responder="ada", comment="fine"), thread_id="t").interrupts[0]
    app.invoke(reply(two, {"type": "reject", "message": "no"}, responder="bob"), thread_id="t")
    trail = app.audit("t")
    assert [(e.name, e.reason, e.response, e.responder, e.comment, e.outcome) for e in trail] == [
        ("first", {"step": 1}, "yes", "ada", "fine", "applied"),
        ("second", {"step": 2}, {"type": "reject", "message": "no"}, "bob", None, "rejected"),
    ]
    assert trail[0].at <= trail[1].at
    assert trail[0].checkpoint_id < trail[1].checkpoint_id
    assert [e.interrupt_id for e in trail] == [one.id, two.id]
    assert trail[0].node == "first"

    removed = asyncio.run(checkpointer.prune("t", keep_last=1))
    assert removed > 0
    assert app.audit("t") == trail  # the trail is not under threads/, which prune trims
    assert asyncio.run(checkpointer.audit("t")) == trail

    assert asyncio.run(checkpointer.delete_thread("t")) > 0
    assert app.audit("t") == []  # deleted with its thread


class Answers(BaseModel):
    a: str = ""
    b: str = ""
    c: str = ""


def parallel_approvals(checkpointer: Checkpointer) -> Any:
    """Three nodes that run in one step, each asking its own question: one resume answers all three."""
    g = StateGraph(Answers)
    for name in ("a", "b", "c"):
        def ask(state: Answers, ctx: NodeContext, name: str = name) -> dict[str, Any]:
            return {name: ctx.interrupt(name)}

        g.add_node(name, ask)
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile(checkpointer=checkpointer)


def test_a_resume_that_applies_several_answers_records_them_with_its_step(tmp_path):
    """Three answers, one resume: their entries are in the checkpoint the resume stored first, so the
    trail costs no write of its own (the resume's forced writes are its claim, the record that the action
    started, and the checkpoint its call returns on)."""
    counting = CountingStorage(FileStorage(tmp_path))
    checkpointer = Checkpointer(counting)
    app = parallel_approvals(checkpointer)
    asked = app.invoke({}, thread_id="t").interrupts
    assert sorted(i.name for i in asked) == ["a", "b", "c"]
    writes: list[tuple[str, bool]] = []
    write = counting.write

    async def spy(key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        writes.append((key.split("/")[0], durable))
        return await write(key, data, expect=expect, durable=durable)

    counting.write = spy  # type: ignore[method-assign]
    app.invoke([reply(i, f"ok {i.name}", responder="ada")[0] for i in asked], thread_id="t")
    assert [key for key, durable in writes if durable] == ["threads", "threads"]
    assert not [key for key, _ in writes if key.startswith("index") and "audit" in key]
    trail = app.audit("t")
    assert [(e.name, e.response, e.responder) for e in trail] == [(i.name, f"ok {i.name}", "ada") for i in asked]
    [carrier] = [r for r in asyncio.run(checkpointer.history("t")) if r.answered]
    assert [(a.interrupt_id, a.response) for a in carrier.answered] == [(e.interrupt_id, e.response) for e in trail]
    # the step stores what the interrupts do not say already: their names and reasons are joined on reading
    stored = [decode(key, data, None) for key, (data, _) in asyncio.run(counting.inner.read_all("threads/t/")).items()]
    [answered] = [record["answered"] for record in stored if "answered" in record and record["kind"] == "checkpoint"]
    assert [sorted(a) for a in answered] == [["at", "checkpoint_id", "interrupt_id", "responder", "response",
                                              "via"]] * 3


class DeleteFails(FileStorage):
    """A file store whose deletes fail while ``failing``: a prune that stops after keeping the entries."""

    failing = False

    async def delete(self, prefix: str) -> int:
        if self.failing:
            raise OSError("the disk went away")
        return await super().delete(prefix)


def test_a_prune_cut_short_or_repeated_keeps_each_entry_once(tmp_path):
    """``prune`` keeps the answers of the checkpoints it deletes (and of those whose interrupts it deletes)
    beside the index first: if it stops before the deletes, or runs again, the trail lists every answer once,
    whole."""
    storage = DeleteFails(tmp_path)
    checkpointer = Checkpointer(storage)
    app = approvals(checkpointer)
    one = app.invoke({}, thread_id="t").interrupts[0]
    two = app.invoke(reply(one, "yes"), thread_id="t").interrupts[0]
    app.invoke(reply(two, "no"), thread_id="t")
    trail = app.audit("t")
    assert [(e.name, e.reason, e.response) for e in trail] == [("first", {"step": 1}, "yes"),
                                                                ("second", {"step": 2}, "no")]
    storage.failing = True
    with pytest.raises(OSError, match="the disk went away"):
        asyncio.run(checkpointer.prune("t", keep_last=1))
    assert app.audit("t") == trail
    storage.failing = False
    asyncio.run(checkpointer.prune("t", keep_last=2))
    asyncio.run(checkpointer.prune("t", keep_last=1))
    assert len(asyncio.run(checkpointer.history("t"))) == 1
    assert app.audit("t") == trail


def test_trails_written_beside_the_index_are_still_read(tmp_path):
    """Trails from before the entries moved into the checkpoints (one record per answer, ``audit.<slot>.<n>``,
    or per resume, ``audit.<slot>``) read alike, in order with the entries checkpoints carry."""
    checkpointer = FileCheckpointer(tmp_path)
    app = approvals(checkpointer)
    one = app.invoke({}, thread_id="t").interrupts[0]
    app.invoke(reply(one, "yes", responder="ada"), thread_id="t")
    [new] = app.audit("t")
    first = AuditEntry(thread_id="t", interrupt_id="v2:old", name="earliest", response="fine", responder="bob", at=1.0)
    second = first.model_copy(update={"interrupt_id": "v2:older", "name": "earlier"})
    prefix = audit_prefix("t")
    asyncio.run(checkpointer.storage.write(f"{prefix}{0:012d}.000", encode(first, None), expect=ABSENT))
    asyncio.run(checkpointer.storage.write(f"{prefix}{1:012d}", encode(ResumeAudit(entries=[second]), None),
                                           expect=ABSENT))
    assert app.audit("t") == [first, second, new]


def test_the_trail_is_read_in_a_new_process_and_by_the_cli(tmp_path):
    app = approvals(FileCheckpointer(tmp_path))
    one = app.invoke({}, thread_id="t").interrupts[0]
    app.invoke(reply(one, "yes", responder="ada", comment="looks right"), thread_id="t")
    reader = (
        "import sys; from statehitl.checkpoint import FileCheckpointer; import asyncio\n"
        "entries = asyncio.run(FileCheckpointer(sys.argv[1]).audit('t'))\n"
        "print([(e.name, e.response, e.responder, e.comment, e.outcome) for e in entries])\n"
    )
    done = subprocess.run([sys.executable, "-c", reader, str(tmp_path)], capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip() == "[('first', 'yes', 'ada', 'looks right', 'applied')]"

    env = {"NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    text = subprocess.run([sys.executable, "-m", "statehitl.cli", "threads", "audit", "t", "--store",
                           f"file://{tmp_path}"], capture_output=True, text=True, timeout=120, env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"thread t  1 answer, oldest first  (file://{tmp_path})")
    assert lines[2].endswith("applied  first  by ada")
    assert '  reason      {"step": 1}' in lines
    assert '  response    "yes"' in lines
    assert "  comment     looks right" in lines
    as_json = subprocess.run([sys.executable, "-m", "statehitl.cli", "threads", "audit", "t", "--json", "--store",
                              f"file://{tmp_path}"], capture_output=True, text=True, timeout=120, env=env)
    [entry] = [AuditEntry.model_validate_json(line) for line in as_json.stdout.splitlines()]
    assert (entry.responder, entry.interrupt_id) == ("ada", one.id)

    # the trail lives beside the index entry: listing threads still shows the thread once
    listed = subprocess.run([sys.executable, "-m", "statehitl.cli", "threads", "list", "--store",
                             f"file://{tmp_path}"], capture_output=True, text=True, timeout=120, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:] if line.strip()] == ["t"]
    assert [e.thread_id for e in asyncio.run(FileCheckpointer(tmp_path).threads())] == ["t"]

    unknown = subprocess.run([sys.executable, "-m", "statehitl.cli", "threads", "audit", "nope", "--store",
                              f"file://{tmp_path}"], capture_output=True, text=True, timeout=120, env=env)
    assert unknown.returncode == 2
    assert "unknown thread 'nope'" in unknown.stderr


def test_racing_resumes_run_the_answer_once_and_audit_only_the_winner(tmp_path):
    ran: list[str] = []
    approvals(FileCheckpointer(tmp_path), ran).invoke({}, thread_id="t")
    waiting = approvals(FileCheckpointer(tmp_path)).get_state("t").interrupts[0]
    reviewers = ["ada", "bob", "cy", "dee"]
    apps = [approvals(FileCheckpointer(tmp_path), ran) for _ in reviewers]  # each reviewer's own, as in processes

    async def race() -> list[Any]:
        return await asyncio.gather(*(app.ainvoke(reply(waiting, f"yes from {name}", responder=name), thread_id="t")
                                      for app, name in zip(apps, reviewers, strict=True)), return_exceptions=True)

    outcomes: dict[str, str] = {}
    for name, outcome in zip(reviewers, asyncio.run(race()), strict=True):
        # a loser lost the claim, or came while the winner ran (or after it moved on to the next interrupt)
        assert not isinstance(outcome, BaseException) or isinstance(outcome, LOST)
        outcomes[name] = "lost" if isinstance(outcome, BaseException) else "won"
    winners = [name for name, outcome in outcomes.items() if outcome == "won"]
    assert len(winners) == 1
    assert len(outcomes) == len(reviewers)
    assert ran == [f"first yes from {winners[0]}"]
    trail = approvals(FileCheckpointer(tmp_path)).audit("t")
    assert [(e.responder, e.response) for e in trail] == [(winners[0], f"yes from {winners[0]}")]


def test_an_answer_acted_on_by_a_step_that_then_failed_is_recorded_and_so_is_the_next_one():
    attempts: list[str] = []

    def flaky(state: State, ctx: NodeContext) -> dict[str, Any]:
        answer = ctx.interrupt("go", reason="deploy?")
        attempts.append(answer)
        if len(attempts) == 1:
            raise RuntimeError("deploy target unreachable")
        return {"log": [answer]}

    g = StateGraph(State)
    g.add_node("deploy", flaky)
    g.add_edge(START, "deploy")
    g.add_edge("deploy", END)
    app = g.compile(checkpointer=MemoryCheckpointer())
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    with pytest.raises(RuntimeError, match="unreachable"):
        app.invoke(reply(waiting, "yes", responder="ada"), thread_id="t")
    assert app.get_state("t").status == "failed"
    assert [(e.response, e.responder) for e in app.audit("t")] == [("yes", "ada")]
    app.invoke(reply(waiting, "yes again", responder="bob"), thread_id="t")  # a failed resume is answered again
    assert [(e.response, e.responder) for e in app.audit("t")] == [("yes", "ada"), ("yes again", "bob")]
    assert attempts == ["yes", "yes again"]


def test_an_entry_says_who_answered_and_what_the_answer_did():
    """What an expiry sweep records (it answers as ``responder="expiry"``), next to a human's answer."""
    checkpointer = MemoryCheckpointer()
    app = approvals(checkpointer)
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    record = asyncio.run(checkpointer.latest("t"))
    assert record is not None
    [expired] = audit_entries(record, {waiting.id: {"type": "reject", "message": "timed out"}},
                              {waiting.id: AnswerMeta(responder="expiry")})
    [rejected] = audit_entries(record, {waiting.id: {"type": "reject", "message": "no"}}, {})
    assert (expired.outcome, expired.responder, rejected.outcome, rejected.responder) == (
        "rejected", "expiry", "rejected", None)
    assert expired.checkpoint_id == record.checkpoint_id
    assert expired.reason == {"step": 1}
    assert audit_entries(record, {}, {}) == []  # nothing answered, nothing to record


def test_the_audit_entry_schema_is_what_the_ui_reads():
    schema = AuditEntry.model_json_schema()
    assert {"interrupt_id", "name", "reason", "response", "responder", "comment", "at", "outcome"} <= set(
        schema["properties"])
    entry = AuditEntry(thread_id="t", interrupt_id="v2:x", name="n", at=1.0)
    assert schema_errors(entry.model_dump(mode="json"), schema) == []
