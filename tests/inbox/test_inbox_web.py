"""The web page through aiohttp's test client on a real loopback server: listing, answering, escaping,
schema-driven forms, and the guard (the token and its cookie, Host, Origin, the forms' CSRF value, the
headers every response carries), attacked with forged Host and Origin headers."""

from __future__ import annotations

import asyncio
import re
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
from statehitl.inbox.web import make_app
from statehitl.inbox.web_hosts import cookie_name


def client_run(store: str, check: Any, **options: Any) -> None:
    async def go() -> None:
        async with TestClient(TestServer(make_app(store, **options))) as client:
            await check(client)

    asyncio.run(go())


def waiting(thread: str = "t1", **order: Any) -> str:
    return build(thread).invoke({"item": "book", **order}, thread_id=thread).interrupts[0].id


async def csrf_of(client: TestClient[Any, Any], **headers: str) -> str:
    """The CSRF value the page's forms carry, read as a browser reads it: from the page."""
    page = await (await client.get("/", headers=headers)).text()
    found = re.search(r'name="__csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


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
        csrf = await csrf_of(client)
        first, second = await asyncio.gather(
            client.post(f"/answer/{iid}", data={"response": "y", "__responder": "ann", "__csrf": csrf}),
            client.post(f"/answer/{iid}", data={"response": "n", "__responder": "bob", "__csrf": csrf}))
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
        bad = await client.post(f"/api/answer/{iid}", data=b"not json", headers={"Content-Type": "application/json"})
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


def test_an_answer_stored_and_not_yet_applied_is_listed_on_the_page_and_in_the_api(app_store: str,
                                                                                   action_log: Path) -> None:
    iid = waiting("t1", reason={"note": "<b>bold</b>"})
    waiting("t2")

    async def check(client: TestClient[Any, Any]) -> None:
        ok = await client.post(f"/api/answer/{iid}", json={"response": "y", "responder": "<ann>"})
        assert ok.status == 200
        page = await (await client.get("/")).text()
        assert "1 pending" in page
        assert 'Answered, not yet applied (1)' in page
        assert f'<li class="unapplied" data-id="{iid}">' in page
        assert "answered by &lt;ann&gt; (page)" in page
        listed = await (await client.get("/api/unapplied")).json()
        assert [(a["thread_id"], a["id"], a["responder"], a["via"]) for a in listed] == [("t1", iid, "<ann>", "page")]

    client_run(app_store, check)
    assert actions(action_log) == []
    build("t1").invoke(None, thread_id="t1")

    async def applied(client: TestClient[Any, Any]) -> None:
        assert "Answered, not yet applied" not in await (await client.get("/")).text()
        assert await (await client.get("/api/unapplied")).json() == []

    client_run(app_store, applied)


def test_the_token_is_required_and_a_browser_swaps_it_for_a_session_cookie(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        assert (await client.get("/")).status == 401
        assert (await client.get("/api/pending", headers={"Authorization": "Bearer wrong"})).status == 401
        assert (await client.get("/api/pending", headers={"Authorization": "Bearer s3cre"})).status == 401
        assert (await client.get("/?token=wrong", allow_redirects=False)).status == 401
        assert (await client.post(f"/api/answer/{iid}", json={"response": "y"})).status == 401
        ok = await client.get("/api/pending", headers={"Authorization": "Bearer s3cret"})
        assert ok.status == 200
        swap = await client.get("/?token=s3cret", allow_redirects=False)
        assert swap.status == 303
        assert swap.headers["Location"] == "/"
        cookie = swap.cookies[cookie_name(client.port or 0)]  # named after the port: cookies are not per port
        assert cookie["httponly"]
        assert cookie["samesite"] == "Strict"
        assert cookie.value != "s3cret"  # a session of this process, never the token itself
        assert (await client.get("/")).status == 200  # the cookie jar now holds it

    client_run(app_store, check, token="s3cret")


def test_the_token_itself_in_a_cookie_or_a_cookie_of_another_port_is_refused(app_store: str) -> None:
    async def check(client: TestClient[Any, Any]) -> None:
        port = client.port or 0
        assert (await client.get("/", headers={"Cookie": f"{cookie_name(port)}=s3cret"})).status == 401
        assert (await client.get("/", headers={"Cookie": "statehitl_inbox_token=s3cret"})).status == 401
        session = (await client.get("/?token=s3cret", allow_redirects=False)).cookies[cookie_name(port)].value
        client.session.cookie_jar.clear()
        other = {"Cookie": f"{cookie_name(port + 1)}={session}"}
        assert (await client.get("/", headers=other)).status == 401
        assert (await client.get("/", headers={"Cookie": f"{cookie_name(port)}={session}"})).status == 200

    client_run(app_store, check, token="s3cret")


def test_a_browser_post_on_the_cookie_needs_this_inbox_as_its_origin_and_the_page_csrf(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        here = f"http://127.0.0.1:{client.port}"
        assert (await client.get("/?token=s3cret")).status == 200  # logged in: the jar holds the session
        csrf = await csrf_of(client)
        answer = {"response": "y", "__csrf": csrf}
        no_origin = await client.post(f"/answer/{iid}", data=answer)
        assert no_origin.status == 403  # a browser always says where a post comes from
        other_port = await client.post(f"/answer/{iid}", data=answer, headers={"Origin": "http://127.0.0.1:1"})
        assert other_port.status == 403  # same host, another port: another origin
        https = await client.post(f"/answer/{iid}", data=answer, headers={"Origin": f"https://127.0.0.1:{client.port}"})
        assert https.status == 403  # the scheme counts too
        no_csrf = await client.post(f"/answer/{iid}", data={"response": "y"}, headers={"Origin": here})
        assert no_csrf.status == 403
        assert "did not come from this inbox" in await no_csrf.text()
        forged = await client.post(f"/answer/{iid}", data={"response": "y", "__csrf": csrf[:-1]},
                                   headers={"Origin": here})
        assert forged.status == 403
        assert len(await _pending(app_store)) == 1
        ok = await client.post(f"/answer/{iid}", data=answer, headers={"Origin": here})
        assert ok.status == 200, await ok.text()

    client_run(app_store, check, token="s3cret")
    assert asyncio.run(_pending(app_store)) == []


def test_a_post_from_another_origin_is_refused(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        csrf = await csrf_of(client)
        for origin in ("http://evil.test", f"http://127.0.0.1:{(client.port or 0) + 1}", "null"):
            refused = await client.post(f"/answer/{iid}", data={"response": "y", "__csrf": csrf},
                                        headers={"Origin": origin})
            assert refused.status == 403, origin
        refused = await client.post(f"/api/answer/{iid}", json={"response": "y"}, headers={"Origin": "http://evil.test"})
        assert refused.status == 403

    client_run(app_store, check)
    assert len(asyncio.run(_pending(app_store))) == 1


def test_a_json_answer_must_say_it_is_json(app_store: str) -> None:
    """A page elsewhere can send a text/plain POST without asking first (no CORS preflight), but not an
    application/json one: the API refuses everything else, so such a post answers nothing."""
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        plain = await client.post(f"/api/answer/{iid}", data=b'{"response": "y"}',
                                  headers={"Content-Type": "text/plain"})
        assert plain.status == 415
        form = await client.post(f"/api/answer/{iid}", data={"response": "y"})
        assert form.status == 415

    client_run(app_store, check)
    assert len(asyncio.run(_pending(app_store))) == 1


def test_dns_rebinding_a_foreign_host_reads_and_answers_nothing(app_store: str) -> None:
    """``evil.test`` resolving to 127.0.0.1: the browser sends ``Host: evil.test:PORT`` and, for posts, the
    matching ``Origin``; both are refused however well they match each other."""
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        evil = {"Host": f"evil.test:{client.port}", "Origin": f"http://evil.test:{client.port}"}
        for path in ("/", "/api/pending", "/thread/t1"):
            read = await client.get(path, headers={"Host": evil["Host"]})
            assert read.status == 421, path
            assert "--allowed-host" in await read.text()
            assert iid not in await read.text()
        assert (await client.post(f"/api/answer/{iid}", json={"response": "y"}, headers=evil)).status == 421
        csrf = await csrf_of(client)
        assert (await client.post(f"/answer/{iid}", data={"response": "y", "__csrf": csrf},
                                  headers=evil)).status == 421
        assert (await client.get("/", headers={"Host": f"127.0.0.1:{(client.port or 0) + 1}"})).status == 421
        assert (await client.get("/", headers={"Host": ""})).status == 421
        for host in (f"127.0.0.1:{client.port}", f"localhost:{client.port}", f"LOCALHOST:{client.port}",
                     f"[::1]:{client.port}"):
            assert (await client.get("/api/pending", headers={"Host": host})).status == 200, host

    client_run(app_store, check)
    assert len(asyncio.run(_pending(app_store))) == 1


def test_an_allowed_host_is_a_proxy_name_for_host_and_origin(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        proxied = {"Host": "inbox.example.com"}
        assert (await client.get("/api/pending", headers=proxied)).status == 200
        assert (await client.get("/api/pending", headers={"Host": "inbox.example.com:8080"})).status == 421
        assert (await client.get("/api/pending", headers={"Host": "example.com"})).status == 421
        csrf = await csrf_of(client, **proxied)
        refused = await client.post(f"/answer/{iid}", data={"response": "y", "__csrf": csrf},
                                    headers={**proxied, "Origin": "https://evil.example.com"})
        assert refused.status == 403
        ok = await client.post(f"/answer/{iid}", data={"response": "y", "__csrf": csrf},
                               headers={**proxied, "Origin": "https://inbox.example.com"})
        assert ok.status == 200, await ok.text()

    client_run(app_store, check, allowed_hosts=["Inbox.Example.com"])
    with pytest.raises(ValueError, match="--allowed-host takes a name"):
        make_app(app_store, allowed_hosts=["https://inbox.example.com"])


def test_every_response_forbids_framing_sniffing_caching_and_foreign_referrers(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        key = {"Authorization": "Bearer s3cret"}
        responses = [
            await client.get("/", headers=key), await client.get("/api/pending", headers=key),
            await client.get("/thread/t1", headers=key), await client.get("/no/such/page", headers=key),
            await client.get("/?token=wrong", allow_redirects=False),
            await client.get("/?token=s3cret", allow_redirects=False),
            await client.get("/", headers={"Host": "evil.test"}),
            await client.post(f"/answer/{iid}", data={"response": "y"}, headers={**key, "Origin": "http://evil.test"}),
        ]
        assert [r.status for r in responses] == [200, 200, 200, 404, 401, 303, 421, 403]
        for response in responses:
            csp = response.headers["Content-Security-Policy"]
            assert "frame-ancestors 'none'" in csp
            assert "default-src 'none'" in csp
            assert "'unsafe-inline'" not in csp
            assert response.headers["X-Frame-Options"] == "DENY"
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert response.headers["Referrer-Policy"] == "same-origin"  # no-referrer makes the page's Origin null
            assert response.headers["Cache-Control"] == "no-store"

    client_run(app_store, check, token="s3cret")


async def _pending(store: str) -> list[Any]:
    from statehitl.inbox import apending

    return await apending(store)


def test_an_empty_or_unknown_answer_is_refused_and_nothing_is_stored(app_store: str) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        csrf = await csrf_of(client)
        empty = await client.post(f"/answer/{iid}", data={"response": "  ", "__csrf": csrf})
        assert empty.status == 400
        assert "empty" in await empty.text()
        gone = await client.post("/answer/v2:0000", data={"response": "y", "__csrf": csrf})
        assert gone.status == 404

    client_run(app_store, check)
    assert len(asyncio.run(_pending(app_store))) == 1


SCHEMA = {"type": "object", "properties": {
    "approved": {"type": "boolean"}, "amount": {"type": "integer", "title": "Amount"},
    "note": {"type": "string"}, "level": {"enum": ["low", "high"]}}, "required": ["amount"]}


def item(schema: dict[str, Any] | None) -> PendingInterrupt:
    return PendingInterrupt("t1", "v2:abc", "q", {"x": 1}, "node", "ask", "M", 0.0, response_schema=schema)


def test_a_response_schema_renders_a_form_and_reads_it_back() -> None:
    page = list_page([item(SCHEMA)], "file://s", resumes=False, csrf="c5rf", now=10.0)
    assert 'type="checkbox" name="field.approved"' in page
    assert 'type="number" step="1" name="field.amount"' in page
    assert '<input type="radio" name="field.level" value="&quot;high&quot;"> high' in page
    assert 'name="__csrf" value="c5rf"' in page
    assert "<textarea" not in page
    form = {"field.approved": "true", "field.amount": "12", "field.note": "ok", "field.level": '"high"'}
    assert form_response(SCHEMA, form) == {"approved": True, "amount": 12, "note": "ok", "level": "high"}
    assert form_response(SCHEMA, {"field.amount": "3"}) == {"approved": False, "amount": 3}
    with pytest.raises(ValueError, match="amount must be an integer"):
        form_response(SCHEMA, {"field.amount": "lots"})
    assert form_response({"enum": [1, 2]}, {"response": "2"}) == 2
    plain = list_page([item(None)], "file://s", resumes=False, csrf="c5rf", now=10.0)
    assert "<textarea" in plain
    assert form_response(None, {"response": "y"}) == "y"
    assert form_response(None, {"response": '{"a": 1}'}) == {"a": 1}


def test_a_choice_has_no_default_and_must_be_one_offered() -> None:
    """``Literal["approve", "deny"]``: radios none of which is checked (a select would post its first
    option, the approval, for a click that picked nothing), and a post that picked none answers nothing."""
    choice = {"enum": ["approve", "deny"], "type": "string"}
    page = list_page([item(choice)], "file://s", resumes=False, csrf="c5rf", now=10.0)
    assert page.count('type="radio" name="response"') == 2
    assert page.count(" required>") == 2
    assert "checked" not in page
    assert "<select" not in page
    with pytest.raises(ValueError, match='pick one of the choices for the response: "approve", "deny"'):
        form_response(choice, {})
    with pytest.raises(ValueError, match="not one of the choices"):
        form_response(choice, {"response": '"maybe"'})
    with pytest.raises(ValueError, match="not one of the choices for level"):
        form_response(SCHEMA, {"field.amount": "1", "field.level": '"mid"'})
    assert form_response(SCHEMA, {"field.amount": "1"}) == {"approved": False, "amount": 1}  # optional: unset
    assert form_response(choice, {"response": '"deny"'}) == "deny"


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
        csrf = await csrf_of(client)
        bad = await client.post(f"/answer/{waiting.id}", data={"field.approved": "true", "field.amount": "lots",
                                                               "__csrf": csrf})
        assert bad.status == 400  # nothing stored: the interrupt is still pending
        assert waiting.id in await (await client.get("/")).text()
        done = await client.post(f"/answer/{waiting.id}", data={"field.approved": "true", "field.amount": "40",
                                                                "__responder": "ann", "__csrf": csrf})
        assert done.status == 200, await done.text()

    client_run(store, check, build=lambda thread: typed_app(store, seen))
    assert seen == [Refund(approved=True, amount=40)]
    assert app.get_state("c1").values.decision == {"approved": True, "amount": 40}
    [entry] = app.audit("c1")
    assert (entry.response, entry.responder) == ({"approved": True, "amount": 40}, "ann")


def test_the_library_refuses_an_open_non_loopback_bind_before_binding(app_store: str) -> None:
    from statehitl.inbox.web import serve

    with pytest.raises(ValueError, match=r"--host 0\.0\.0\.0 is reachable from other machines"):
        serve(app_store, host="0.0.0.0", port=0, announce=lambda line: pytest.fail(f"it served: {line}"))
