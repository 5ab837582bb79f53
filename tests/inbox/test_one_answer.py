"""One binding answer per interrupt, whichever door it comes through first: the app's own call, the inbox,
its page (the same library call with ``via="page"``), an expiry default. A later different answer is
refused naming who answered first; the same answer again is idempotent; a call without answers applies
what is stored; listings show an answer stored and not yet applied."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from inbox_app import actions, build, build_agent

from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.cli import main
from statehitl.errors import AlreadyAnsweredError, ResumeInputError


def waiting(thread: str, **order: Any) -> Any:
    result = build(thread).invoke({"item": "book", **order}, thread_id=thread)
    assert str(result.status.value) == "interrupted"
    return result.interrupts[0]


def block(interrupt: Any, response: Any, responder: str) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": interrupt.id, "response": response, "responder": responder}}]


def test_an_inbox_answer_binds_the_app_whose_different_answer_is_refused(app_store: str, action_log: Path) -> None:
    asked = waiting("t1")
    inbox.answer(app_store, asked.id, "n", responder="ann")
    with pytest.raises(AlreadyAnsweredError, match=r"already answered by ann \(inbox\) at .* with 'n'"):
        build("t1").invoke(block(asked, "y", "bob"), thread_id="t1")
    assert actions(action_log) == []  # nothing ran
    done = build("t1").invoke(None, thread_id="t1")  # applies what is stored: ann's "n"
    assert done.state.decision == "n"
    [entry] = build("t1").audit("t1")
    assert (entry.responder, entry.response, entry.via) == ("ann", "n", "inbox")


def test_the_same_answer_again_is_idempotent_and_keeps_who_gave_it_first(app_store: str, action_log: Path) -> None:
    asked = waiting("t1")
    inbox.answer(app_store, asked.id, "yes", responder="ann", via="page")
    done = build("t1").invoke(block(asked, "yes", "bob"), thread_id="t1")
    assert done.state.shipped
    assert actions(action_log) == ["t1 ship book 'yes'"]
    [entry] = build("t1").audit("t1")
    assert (entry.responder, entry.via) == ("ann", "page")


def test_an_app_answer_first_then_the_inbox_says_who_answered(app_store: str, action_log: Path) -> None:
    asked = waiting("t1")
    build("t1").invoke(block(asked, "yes", "bob"), thread_id="t1")
    assert inbox.pending(app_store) == []
    with pytest.raises(AlreadyAnsweredError, match="already answered by bob"):  # the thread has finished
        inbox.answer(app_store, asked.id, "n", responder="ann")
    [entry] = build("t1").audit("t1")
    assert (entry.responder, entry.response, entry.via) == ("bob", "yes", "app")


def test_an_expiry_default_binds_a_late_answer(app_store: str, action_log: Path) -> None:
    asked = waiting("t1", expires_in=0.01, on_expire="timed out")
    time.sleep(0.02)
    report = inbox.sweep(app_store)
    assert [i.id for i in report.expired] == [asked.id]
    with pytest.raises(AlreadyAnsweredError, match="its expiry default"):
        build("t1").invoke(block(asked, "yes", "bob"), thread_id="t1")
    assert build("t1").invoke(None, thread_id="t1").state.decision == "timed out"
    [entry] = build("t1").audit("t1")
    assert (entry.responder, entry.via) == ("expiry", "expiry")


def test_answered_not_applied_shows_in_get_state_threads_list_and_the_trail(app_store: str,
                                                                             capsys: pytest.CaptureFixture[str]
                                                                             ) -> None:
    asked = waiting("t1")
    inbox.answer(app_store, asked.id, "yes", responder="ann")
    snapshot = build("t1").get_state("t1")
    assert snapshot.answers[asked.id].responder == "ann"
    assert snapshot.answers[asked.id].response == "yes"
    capsys.readouterr()
    assert main(["threads", "list", "--store", app_store]) == 0
    assert "[answered by ann (inbox), not yet applied]" in capsys.readouterr().out
    rows = inbox.thread_audit_trail(app_store, "t1")
    assert [(r.outcome, r.responder, r.via) for r in rows] == [("answered, not yet applied", "ann", "inbox")]
    assert inbox.pending(app_store) == []
    [stored] = inbox.unapplied(app_store)
    assert (stored.thread_id, stored.id, stored.name, stored.responder, stored.via) == (
        "t1", asked.id, "ship-approval", "ann", "inbox")
    assert main(["inbox", "--store", app_store]) == 0
    listed = capsys.readouterr().out
    assert "answered, not yet applied (1):" in listed
    assert f"{asked.id}  t1" in listed
    assert "by ann (inbox)" in listed
    build("t1").invoke(None, thread_id="t1")
    assert not build("t1").get_state("t1").answers
    assert inbox.unapplied(app_store) == []


def test_a_call_without_answers_on_a_waiting_thread_with_none_stored_says_so(app_store: str) -> None:
    waiting("t1")
    with pytest.raises(ResumeInputError, match="no answer to them is stored"):
        build("t1").invoke(None, thread_id="t1")


def test_a_bare_agent_call_applies_the_answer_the_inbox_stored(app_store: str, action_log: Path) -> None:
    agent = build_agent("s1")
    asked = agent("ship the book").interrupts[0]
    inbox.answer(app_store, asked.id, "yes", responder="ann")
    done = build_agent("s1")()
    assert done.stop_reason == "end_turn"
    assert len(actions(action_log)) == 1
    [entry] = build_agent("s1").audit()
    assert (entry.responder, entry.via) == ("ann", "inbox")


def test_the_cli_answer_then_the_demo_resume_with_another_answer_is_refused_naming_who(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["demo", "--thread", "d1", "--no-wait"]) == 0
    [pending] = inbox.pending("file://.statehitl")
    capsys.readouterr()
    assert main(["inbox", "answer", pending.id, "y", "--as", "ann"]) == 0
    assert main(["demo", "--resume", "d1", "--answer", "n"]) != 0
    err = capsys.readouterr().err
    assert "already answered by ann (inbox)" in err
    assert main(["demo", "--resume", "d1", "--answer", "y"]) == 0  # the same answer: it applies ann's
    [entry] = asyncio.run(Checkpointer.from_url("file://.statehitl").audit("d1"))
    assert (entry.responder, entry.response, entry.via) == ("ann", "y", "inbox")
