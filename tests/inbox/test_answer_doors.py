"""Every order of two doors answering the same interrupt differently: the first answer binds, the second is
refused at its own door (an error, an exit status, a 409, an expiry that stores nothing), the action runs
once with the first answer, and the audit trail has one row naming the first responder and door."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from inbox_app import actions, build

from statehitl import inbox
from statehitl.cli import main
from statehitl.errors import AlreadyAnsweredError, UnknownInboxItemError
from statehitl.inbox.web import make_app

DOORS = ("app", "inbox", "cli", "page", "expiry")
DEADLINE = 0.3
"""Seconds each interrupt waits before its expiry default falls due (the expiry door)."""
DEFAULT = "timed out"


def answer_at(door: str, store: str, interrupt: Any, response: str) -> str | None:
    """Answer through ``door``; None if it took the answer, else what refused it (its error or status)."""
    if door == "app":
        block = {"interruptResponse": {"interruptId": interrupt.id, "response": response, "responder": "ann"}}
        try:
            build("t1").invoke([block], thread_id="t1")
        except AlreadyAnsweredError as refused:
            return str(refused)
        return None
    if door == "inbox":
        try:
            inbox.answer(store, interrupt.id, response, responder="ann")
        except (AlreadyAnsweredError, UnknownInboxItemError) as refused:
            return str(refused)
        return None
    if door == "cli":
        return None if main(["inbox", "answer", interrupt.id, response, "--as", "ann", "--store", store]) == 0 \
            else "the command failed"
    if door == "page":
        return asyncio.run(_post(store, interrupt.id, response))
    time.sleep(max(0.0, interrupt.expires_at - time.time()) + 0.01)
    return None if [i.id for i in inbox.sweep(store).expired] == [interrupt.id] else "no expiry default stored"


async def _post(store: str, interrupt_id: str, response: str) -> str | None:
    async with TestClient(TestServer(make_app(store))) as client:
        posted = await client.post(f"/api/answer/{interrupt_id}", json={"response": response, "responder": "ann"})
        return None if posted.status == 200 else f"HTTP {posted.status}: {await posted.text()}"


WHO = {"app": ("ann", "app"), "inbox": ("ann", "inbox"), "cli": ("ann", "inbox"), "page": ("ann", "page"),
       "expiry": ("expiry", "expiry")}


@pytest.mark.parametrize(("first", "second"), list(itertools.permutations(DOORS, 2)))
def test_the_first_door_binds_and_the_second_is_refused(first: str, second: str, app_store: str,
                                                        action_log: Path) -> None:
    asked = build("t1").invoke({"item": "book", "expires_in": DEADLINE, "on_expire": DEFAULT},
                               thread_id="t1").interrupts[0]
    first_response = DEFAULT if first == "expiry" else f"yes from {first}"
    assert answer_at(first, app_store, asked, first_response) is None
    assert answer_at(second, app_store, asked, f"no from {second}") is not None
    if first != "app":  # the app's own call applied its answer; any other door's is applied by the next call
        build("t1").invoke(None, thread_id="t1")
    assert actions(action_log) == [f"t1 ship book {first_response!r}"]
    [entry] = build("t1").audit("t1")
    assert (entry.responder, entry.via, entry.response, entry.outcome) == (*WHO[first], first_response, "applied")
