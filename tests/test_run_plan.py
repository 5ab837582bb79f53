"""``plan_run``: what an input means for a thread, decided without any store (a pure function)."""

from __future__ import annotations

from typing import Any

import pytest

from statehitl.checkpoint import CheckpointRecord, InterruptRecord
from statehitl.errors import InvalidResponseError, NotInterruptedError, ResumeInputError, UnknownInterruptError
from statehitl.resume import ContinueRun, ResumeRun, StartRun, plan_run

GRAPH = {"none_continues": True, "lists_are_input": False}
AGENT = {"none_continues": False, "lists_are_input": True}


def record(status: str, *interrupt_ids: str, pending: list[str] | None = None) -> CheckpointRecord:
    return CheckpointRecord(thread_id="t", seq=0, created_at=0.0, machine="m", fingerprint="f", status=status,
                            step=1, values={}, pending=pending or [],
                            interrupts=[InterruptRecord(id=i, name=f"q{i}") for i in interrupt_ids])


def answers(*ids: str, response: Any = "y") -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i, "response": response}} for i in ids]


@pytest.mark.parametrize("shape", [GRAPH, AGENT])
def test_answers_to_the_pending_interrupts_resume(shape) -> None:
    plan = plan_run(answers("a", "b"), record("interrupted", "a", "b"), label="thread 't'", **shape)
    assert plan == ResumeRun({"a": "y", "b": "y"})


@pytest.mark.parametrize("shape", [GRAPH, AGENT])
@pytest.mark.parametrize(("given", "error"), [
    ("hello", ResumeInputError),
    ({"x": 1}, ResumeInputError),
    ([], InvalidResponseError),
    (answers("zzz"), UnknownInterruptError),
    (answers("a") * 2, InvalidResponseError),
    ([{"interruptResponse": {"interruptId": "a"}}], InvalidResponseError),
    (answers("a", response={1, 2}), TypeError),
])
def test_anything_else_while_interrupted_is_refused(shape, given, error) -> None:
    with pytest.raises(error, match="thread 't'"):
        plan_run(given, record("interrupted", "a"), label="thread 't'", **shape)


@pytest.mark.parametrize("status", [None, "completed", "executing", "failed"])
def test_answers_to_a_thread_that_waits_on_nothing(status) -> None:
    with pytest.raises(NotInterruptedError, match="thread 't' is not waiting on any interrupt"):
        plan_run(answers("a"), None if status is None else record(status), label="thread 't'", **GRAPH)


def test_none_continues_a_stopped_or_failed_graph_run_and_nothing_else() -> None:
    for stopped in ("executing", "failed"):
        assert plan_run(None, record(stopped, pending=["n"]), label="thread 't'", **GRAPH) == ContinueRun()
    for stored in (None, record("completed"), record("failed")):  # a cancelled run failed with nothing pending
        with pytest.raises(ResumeInputError, match="no stopped run to continue"):
            plan_run(None, stored, label="thread 't'", **GRAPH)


def test_a_failed_resume_may_be_answered_again() -> None:
    failed = record("failed", "a", pending=["n"])
    assert plan_run(answers("a"), failed, label="thread 't'", **GRAPH) == ResumeRun({"a": "y"})
    assert plan_run(None, failed, label="thread 't'", **GRAPH) == ContinueRun()


def test_records_of_the_first_schema_read_with_todays_status_names() -> None:
    for old, new in (("running", "executing"), ("cancelled", "failed"), ("completed", "completed")):
        assert record(old).status == new


def test_none_starts_an_agent_call_without_new_messages() -> None:
    assert plan_run(None, record("completed"), label="agent 'a'", **AGENT) == StartRun(None)
    assert plan_run(None, None, label="agent 'a'", **AGENT) == StartRun(None)


def test_lists_are_input_only_where_the_shape_says_so() -> None:
    blocks = [{"text": "hi"}]
    assert plan_run(blocks, None, label="agent 'a'", **AGENT) == StartRun(blocks)
    with pytest.raises(ResumeInputError, match="input is a list but not of interruptResponse blocks"):
        plan_run(blocks, None, label="thread 't'", **GRAPH)
    assert plan_run({"x": 1}, record("completed"), label="thread 't'", **GRAPH) == StartRun({"x": 1})
