"""The page, its API and the terminal, given the id of an interrupt another reviewer answered and whose thread then
ran to its end, say who answered first (409, exit code 1), not that no interrupt has that id. Deterministic:
answer, resume to completion, answer again."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from inbox_app import actions, build

from statehitl import inbox
from statehitl.cli import main
from statehitl.inbox.web import make_app


def test_the_page_and_its_api_answer_409_naming_the_first_answer(app_store: str, action_log: Path) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id

    async def check() -> None:
        async with TestClient(TestServer(make_app(app_store, build=build))) as client:
            page = await (await client.get("/")).text()  # bob opens the page while it waits
            csrf = re.search(r'name="__csrf" value="([^"]+)"', page)
            assert csrf is not None
            done = await inbox.aanswer(app_store, iid, "yes", responder="ann", build=build)
            assert done.status == "completed"
            form = await client.post(f"/answer/{iid}", data={"response": "no", "__responder": "bob",
                                                             "__csrf": csrf.group(1)})
            assert form.status == 409
            assert "already answered by ann (inbox)" in await form.text()
            api = await client.post(f"/api/answer/{iid[:9]}", json={"response": "no", "responder": "bob"})
            assert api.status == 409
            body = await api.json()
            assert body["already_answered"]
            assert "already answered by ann (inbox)" in body["error"]

    asyncio.run(check())
    assert actions(action_log) == ["t1 ship book 'yes'"]


def test_the_terminal_says_who_answered_first(app_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id
    assert inbox.answer(app_store, iid, "yes", responder="ann", build=build).status == "completed"
    capsys.readouterr()
    assert main(["inbox", "answer", iid, "no", "--as", "bob", "--store", app_store]) == 1
    assert "already answered by ann (inbox)" in capsys.readouterr().err
    assert main(["inbox", "show", iid[:9], "--store", app_store]) == 1
    assert "already answered by ann (inbox)" in capsys.readouterr().err
