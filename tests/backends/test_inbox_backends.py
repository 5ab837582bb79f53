"""The inbox on S3 (moto_server) and DynamoDB (DynamoDB Local): ``statehitl inbox`` lists from the thread
index, answers are create-once (the second is "already answered"), the app applies stored answers, and a
sweep applies an expired default once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.cli import main
from statehitl.graph import END, START, NodeContext, StateGraph


class Job(BaseModel):
    task: str
    expires_in: float | None = None
    answer: Any = None


def app_on(url: str, ran: list[str]) -> Any:
    def ask(state: Job, ctx: NodeContext) -> dict[str, Any]:
        options = {"expires_in": state.expires_in, "on_expire": "no"} if state.expires_in else {}
        return {"answer": ctx.interrupt("go-ahead", reason={"task": state.task}, **options)}

    def act(state: Job, ctx: NodeContext) -> dict[str, Any]:
        ran.append(f"{ctx.thread_id} {state.answer}")
        return {}

    g = StateGraph(Job)
    g.add_node("ask", ask)
    g.add_node("act", act)
    g.add_edge(START, "ask")
    g.add_edge("ask", "act")
    g.add_edge("act", END)
    return g.compile(checkpointer=Checkpointer.from_url(url))



def test_list_answer_and_pick_up_on_a_cloud_store(cloud_store_url: str, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    url = cloud_store_url
    monkeypatch.setenv("NO_COLOR", "1")
    ran: list[str] = []
    app = app_on(url, ran)
    first = app.invoke({"task": "deploy"}, thread_id="job-1").interrupts[0]
    app.invoke({"task": "backup", "expires_in": 30}, thread_id="job-2")
    app.invoke({"task": "done soon"}, thread_id="job-3")
    assert main(["inbox", "--store", url]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in listing[1:4]] == ["job-3", "job-2", "job-1"]
    assert "expires" not in listing[3]
    assert "in " in listing[2]
    assert main(["inbox", "answer", first.id, "y", "--as", "ann", "--store", url]) == 0
    assert main(["inbox", "answer", first.id, "n", "--store", url]) == 1
    assert "already answered by ann" in capsys.readouterr().err
    assert main(["inbox", "show", "v2:nope", "--store", url]) == 2
    assert "no pending interrupt has id 'v2:nope'" in capsys.readouterr().err
    assert sorted(p.thread_id for p in inbox.pending(url)) == ["job-2", "job-3"]
    assert ran == []
    assert inbox.resume_answered(app, "job-1").state.answer == "y"
    assert ran == ["job-1 y"]
    report = inbox.sweep(url, app=lambda thread: app_on(url, ran), now=time.time() + 60)
    assert [i.thread_id for i in report.expired] == ["job-2"]
    assert report.resumed == ["job-2"]
    assert inbox.sweep(url, app=lambda thread: app_on(url, ran), now=time.time() + 60).expired == []
    assert ran == ["job-1 y", "job-2 no"]
    assert [p.thread_id for p in inbox.pending(url)] == ["job-3"]
    trail = inbox.thread_audit_trail(url, "job-2")
    assert [(r.outcome, r.via) for r in trail] == [("applied", "expiry")]
