"""The web page through aiohttp's test client: listing, answering, escaping, the token, same-origin posts,
and schema-driven forms."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from inbox_app import actions, build
from pydantic import BaseModel

from statehitl.checkpoint.engine import Checkpointer
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.inbox.listing import PendingInterrupt
from statehitl.inbox.page import form_response, list_page
from statehitl.inbox.web import COOKIE, make_app


def client_run(store: str, check: Any, **options: Any) -> None:
    async def go() -> None:
        async with TestClient(TestServer(make_app(store, **options))) as client:
            await check(client)

    asyncio.run(go())


def waiting(thread: str = "t1", **order: Any) -> str:
    return build(thread).invoke({"item": "book", **order}, thread_id=thread).interrupts[0].id


def test_the_list_shows_each_reason_escaped(app_store: str) -> None:
    waiting("t1", reason={"note": "<script>alert('x')</script>"})

    async def check(client: TestClient[Any, Any]) -> None:
        page = await client.get("/")
        text = await page.text()
        assert page.status == 200
        assert "<script>alert" not in text
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in text
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]

    client_run(app_store, check)


def test_answering_twice_the_second_sees_already_answered(app_store: str, action_log: Path) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        first, second = await asyncio.gather(
            client.post(f"/answer/{iid}", data={"response": "y", "__responder": "ann"}),
            client.post(f"/answer/{iid}", data={"response": "n", "__responder": "bob"}))
        statuses = sorted([first.status, second.status])
        assert statuses == [200, 409]
        lost = first if first.status == 409 else second
        assert "already answered by" in await lost.text()
        trail = await (await client.get("/thread/t1")).text()
        assert "applied" in trail
        assert ("ann" in trail or "bob" in trail)

    client_run(app_store, check, build=build)
    assert len(actions(action_log)) == 1


def test_the_json_api_answers_and_reports_conflicts(app_store: str, action_log: Path) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        listed = await (await client.get("/api/pending")).json()
        assert [i["id"] for i in listed] == [iid]
        bad = await client.post(f"/api/answer/{iid}", data=b"not json")
        assert bad.status == 400
        unknown = await client.post("/api/answer/nope", json={"response": "y"})
        assert unknown.status == 404
        assert "no pending interrupt" in (await unknown.json())["error"]
        ok = await client.post(f"/api/answer/{iid}", json={"response": True, "responder": "ann"})
        assert ok.status == 200
        assert (await ok.json())["status"] is None
        again = await client.post(f"/api/answer/{iid}", json={"response": False})
        assert again.status == 409
        assert (await again.json())["already_answered"]

    client_run(app_store, check)
    assert actions(action_log) == []


def test_the_token_is_required_and_a_browser_swaps_it_for_a_cookie(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        assert (await client.get("/")).status == 401
        assert (await client.get("/api/pending", headers={"Authorization": "Bearer wrong"})).status == 401
        assert (await client.get("/?token=wrong", allow_redirects=False)).status == 401
        assert (await client.post(f"/api/answer/{iid}", json={"response": "y"})).status == 401
        ok = await client.get("/api/pending", headers={"Authorization": "Bearer s3cret"})
        assert ok.status == 200
        swap = await client.get("/?token=s3cret", allow_redirects=False)
        assert swap.status == 303
        assert swap.headers["Location"] == "/"
        cookie = swap.cookies[COOKIE]
        assert cookie["httponly"]
        assert cookie["samesite"] == "Strict"
        assert (await client.get("/")).status == 200  # the cookie jar now holds it

    client_run(app_store, check, token="s3cret")


def test_a_post_from_another_origin_is_refused(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        refused = await client.post(f"/answer/{iid}", data={"response": "y"}, headers={"Origin": "http://evil.test"})
        assert refused.status == 403

    client_run(app_store, check)
    assert len(asyncio.run(_pending(app_store))) == 1


async def _pending(store: str) -> list[Any]:
    from statehitl.inbox import apending

    return await apending(store)


def test_an_empty_or_unknown_answer_is_refused_and_nothing_is_stored(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        empty = await client.post(f"/answer/{iid}", data={"response": "  "})
        assert empty.status == 400
        assert "empty" in await empty.text()
        gone = await client.post("/answer/v2:0000", data={"response": "y"})
        assert gone.status == 404

    client_run(app_store, check)
    assert len(asyncio.run(_pending(app_store))) == 1


SCHEMA = {"type": "object", "properties": {
    "approved": {"type": "boolean"}, "amount": {"type": "integer", "title": "Amount"},
    "note": {"type": "string"}, "level": {"enum": ["low", "high"]}}, "required": ["amount"]}


def item(schema: dict[str, Any] | None) -> PendingInterrupt:
    return PendingInterrupt("t1", "v2:abc", "q", {"x": 1}, "node", "ask", "M", 0.0, response_schema=schema)


def test_a_response_schema_renders_a_form_and_reads_it_back() -> None:
    page = list_page([item(SCHEMA)], "file://s", resumes=False, now=10.0)
    assert 'type="checkbox" name="field.approved"' in page
    assert 'type="number" step="1" name="field.amount"' in page
    assert "<option value=\"&quot;high&quot;\">high</option>" in page
    assert "<textarea" not in page
    form = {"field.approved": "true", "field.amount": "12", "field.note": "ok", "field.level": '"high"'}
    assert form_response(SCHEMA, form) == {"approved": True, "amount": 12, "note": "ok", "level": "high"}
    assert form_response(SCHEMA, {"field.amount": "3"}) == {"approved": False, "amount": 3}
    with pytest.raises(ValueError, match="amount must be an integer"):
        form_response(SCHEMA, {"field.amount": "lots"})
    assert form_response({"enum": [1, 2]}, {"response": "2"}) == 2
    plain = list_page([item(None)], "file://s", resumes=False, now=10.0)
    assert "<textarea" in plain
    assert form_response(None, {"response": "y"}) == "y"
    assert form_response(None, {"response": '{"a": 1}'}) == {"a": 1}


class Refund(BaseModel):
    approved: bool
    amount: int


class Claim(BaseModel):
    item: str
    decision: dict[str, Any] | None = None


def typed_app(store: str, seen: list[Refund]) -> Any:
    """A graph whose node asks with ``response_type=Refund``: what it is handed back is a ``Refund``."""

    def review(state: Claim, ctx: NodeContext) -> dict[str, Any]:
        answer = ctx.interrupt("refund", reason={"item": state.item}, response_type=Refund)
        seen.append(answer)
        return {"decision": answer.model_dump()}

    g = StateGraph(Claim)
    g.add_node("review", review)
    g.add_edge(START, "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=Checkpointer.from_url(store))


def test_a_typed_interrupt_gets_a_form_whose_answer_reaches_the_node_typed(store: str) -> None:
    seen: list[Refund] = []
    app = typed_app(store, seen)
    [waiting] = app.invoke({"item": "kettle"}, thread_id="c1").interrupts

    async def check(client: TestClient[Any, Any]) -> None:
        page = await (await client.get("/")).text()
        assert 'type="checkbox" name="field.approved"' in page  # the form is the interrupt's schema
        assert 'type="number" step="1" name="field.amount"' in page
        bad = await client.post(f"/answer/{waiting.id}", data={"field.approved": "true", "field.amount": "lots"})
        assert bad.status == 400  # nothing stored: the interrupt is still pending
        assert waiting.id in await (await client.get("/")).text()
        done = await client.post(f"/answer/{waiting.id}",
                                 data={"field.approved": "true", "field.amount": "40", "__responder": "ann"})
        assert done.status == 200, await done.text()

    client_run(store, check, build=lambda thread: typed_app(store, seen))
    assert seen == [Refund(approved=True, amount=40)]
    assert app.get_state("c1").values.decision == {"approved": True, "amount": 40}
    [entry] = app.audit("c1")
    assert (entry.response, entry.responder) == ({"approved": True, "amount": 40}, "ann")
