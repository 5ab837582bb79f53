"""Every door checks the same things in the same order: who answers first (a refusal is audited and reveals
nothing), then the answer's type, then whether another answer came first; and a repeat of the same answer
is told whose answer binds. The library, the terminal (``statehitl inbox answer``) and the page over real
HTTP (a ``statehitl inbox serve`` process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inbox_app import actions, build
from test_who_may_answer import FINANCE, request, running, tokens_file, trail, waiting  # noqa: F401 (a fixture)

from statehitl import inbox
from statehitl.cli import main
from statehitl.errors import ResponderNotAllowedError

pytestmark = pytest.mark.slow


def test_a_refused_responder_learns_nothing_of_an_earlier_answer_at_any_door(
        app_store: str, action_log: Path, tokens_file: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    iid = waiting()
    inbox.answer(app_store, iid, "y", responder="cat", groups=["finance"], comment="invoice 7")  # stored, not applied

    with pytest.raises(ResponderNotAllowedError) as library:
        inbox.answer(app_store, iid, "n", responder="bob", groups=["ops"])
    assert main(["inbox", "answer", iid, "n", "--as", "bob", "--store", app_store]) == 2
    terminal = capsys.readouterr()
    with running(app_store, action_log, "--tokens-file", str(tokens_file)) as served:
        status, page = request(served, "POST", f"/api/answer/{iid}", {"response": "n"}, Authorization="Bearer tok-bob")
    assert status == 403
    assert json.loads(page)["not_allowed"] is True
    for told in (str(library.value), terminal.out + terminal.err, page):
        assert "may be answered only by ann or a member of group finance" in told
        assert "cat" not in told
        assert "already" not in told
        assert "invoice" not in told

    assert trail(app_store) == [("refused", "bob", "inbox"), ("refused", "bob", "inbox"), ("refused", "bob", "page")]
    assert inbox.resume_answered(build("t1"), "t1").status.value == "completed"  # the first answer still binds
    assert actions(action_log) == ["t1 ship book 'y'"]


def test_a_repeat_of_the_same_answer_is_told_whose_answer_binds(app_store: str, action_log: Path,
                                                               tokens_file: Path,  # noqa: F811
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    iid = waiting(responders=None)
    first = inbox.answer(app_store, iid, "y", responder="ann")
    assert first.first
    assert first.bound_by() is None
    again = inbox.answer(app_store, iid, "y", responder="dan")
    assert not again.first
    assert again.answer.responder == "ann"
    assert again.bound_by().startswith("the same answer was given first by ann (inbox) at ")
    assert main(["inbox", "answer", iid, "y", "--as", "eve", "--store", app_store]) == 0
    assert "the same answer was given first by ann (inbox)" in capsys.readouterr().out
    with running(app_store, action_log, "--tokens-file", str(tokens_file)) as served:
        status, text = request(served, "POST", f"/api/answer/{iid}", {"response": "y"}, Authorization="Bearer tok-bob")
    assert status == 200, text
    reply = json.loads(text)
    assert (reply["first"], reply["responder"], reply["via"]) == (False, "ann", "inbox")
    assert "the same answer was given first by ann (inbox)" in reply["message"]
    inbox.resume_answered(build("t1"), "t1")
    assert [(e.outcome, e.responder) for e in build("t1").audit("t1")] == [("applied", "ann")]
