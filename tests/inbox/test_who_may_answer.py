"""Who may answer, through the inbox's doors: the library (``responder=``, ``groups=``), the terminal
(``--as NAME --group G``, which trusts its user), an expiry sweep (always allowed), and the page, which
takes who answers from its authentication: tokens that name people (``tokens=``, ``--tokens-file``), or a
reverse proxy's header (``--identity-header``), never from a box the user types in. Each refusal binds
nothing and is in the thread's audit trail; the page is driven over real HTTP (aiohttp's test server on
loopback, and a real ``statehitl inbox serve`` process)."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from inbox_app import actions, build
from served import Served, serve

from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.cli import main
from statehitl.errors import AlreadyAnsweredError, ResponderNotAllowedError
from statehitl.inbox.identity import ANONYMOUS, Identity, parse_tokens
from statehitl.inbox.web import make_app

FINANCE = ["ann", "group:finance"]
TOKENS = {"tok-ann": Identity("ann"), "tok-bob": Identity("bob", ("ops",)), "tok-cat": Identity("cat", ("finance",)),
          "tok-anon": ANONYMOUS}


def waiting(thread: str = "t1", **order: Any) -> str:
    return str(build(thread).invoke({"item": "book", "responders": FINANCE, **order}, thread_id=thread)
               .interrupts[0].id)


def trail(store: str, thread: str = "t1") -> list[tuple[str, str | None, str | None]]:
    return [(e.outcome, e.responder, e.via) for e in asyncio.run(Checkpointer.from_url(store).audit(thread))]


# -- the library and the terminal ------------------------------------------------------------------


def test_the_library_refuses_a_responder_not_named_and_a_later_allowed_answer_binds(app_store: str,
                                                                                     action_log: Path) -> None:
    iid = waiting()
    [item] = inbox.pending(app_store)
    assert item.responders == FINANCE
    with pytest.raises(ResponderNotAllowedError, match="may be answered only by ann or a member of group finance"):
        inbox.answer(app_store, iid, "y", responder="bob", groups=["ops"], build=build)
    assert [p.id for p in inbox.pending(app_store)] == [iid]  # still waiting: nothing bound
    assert actions(action_log) == []
    done = inbox.answer(app_store, iid, "n", responder="cat", groups=["finance"], build=build)
    assert done.status == "completed"
    assert actions(action_log) == ["t1 ship book 'n'"]
    assert trail(app_store) == [("refused", "bob", "inbox"), ("applied", "cat", "inbox")]
    rows = inbox.thread_audit_trail(app_store, "t1")
    assert [(r.outcome, r.responder) for r in rows] == [("refused", "bob"), ("applied", "cat")]


def test_a_refusal_after_an_allowed_answer_is_stored_says_nothing_of_it(app_store: str) -> None:
    iid = waiting()
    inbox.answer(app_store, iid, "n", responder="ann")  # stored, not applied
    from statehitl.inbox.answers import answer_waiting

    checkpointer = Checkpointer.from_url(app_store)
    with pytest.raises(ResponderNotAllowedError) as refused:
        asyncio.run(answer_waiting(checkpointer, "t1", iid, "y", responder="mallory"))
    assert "'n'" not in str(refused.value)
    with pytest.raises(AlreadyAnsweredError, match=r"already answered by ann \(inbox\)"):
        asyncio.run(answer_waiting(checkpointer, "t1", iid, "y", responder="cat", groups=["finance"]))
    assert build("t1").invoke(None, thread_id="t1").state.decision == "n"


def test_the_terminal_answers_as_its_user_and_says_who_may(app_store: str, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           action_log: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    iid = waiting()
    build("t0").invoke({"item": "pen"}, thread_id="t0")  # anyone may answer this one
    capsys.readouterr()
    assert main(["inbox", "--store", app_store]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "THREAD", "NAME", "AGE", "EXPIRES", "WHO", "REASON"]
    assert "ann, group:finance" in next(line for line in lines if iid in line)
    assert "anyone" in next(line for line in lines if "t0" in line)
    assert main(["inbox", "show", iid, "--store", app_store]) == 0
    assert "may answer  ann or a member of group finance" in capsys.readouterr().out
    assert main(["inbox", "answer", iid, "y", "--as", "bob", "--store", app_store]) == 2
    err = capsys.readouterr().err
    assert "bob (in no group) may not" in err
    assert err.count("\n") == 1
    assert main(["inbox", "answer", iid, "y", "--store", app_store]) == 2
    assert "an answer that names no responder may not" in capsys.readouterr().err
    assert main(["inbox", "answer", iid, "y", "--as", "dan", "--group", "finance", "--app", "inbox_app:build",
                 "--store", app_store]) == 0
    assert "resumed thread t1: completed" in capsys.readouterr().out
    assert actions(action_log) == ["t1 ship book 'y'"]
    assert main(["threads", "audit", "t1", "--store", app_store]) == 0
    out = capsys.readouterr().out
    assert "refused  ship-approval  by bob (inbox), who may not answer it" in out
    assert "refused  ship-approval  by (nobody named) (inbox), who may not answer it" in out
    assert "applied  ship-approval  by dan" in out


def test_an_expiry_default_is_always_allowed(app_store: str, action_log: Path) -> None:
    iid = waiting(expires_in=0.01, on_expire="timed out")
    time.sleep(0.02)
    report = inbox.sweep(app_store, app=build)
    assert [i.id for i in report.expired] == [iid]
    assert report.resumed == ["t1"]
    assert actions(action_log) == ["t1 ship book 'timed out'"]
    assert trail(app_store) == [("applied", "expiry", "expiry")]


def test_only_the_interrupts_own_default_passes_as_expiry(app_store: str) -> None:
    iid = waiting(expires_in=3600, on_expire="timed out")
    with pytest.raises(ResponderNotAllowedError, match="expiry"):  # "expiry" is a name like any other here
        inbox.answer(app_store, iid, "y", responder="expiry", via="expiry")
    assert trail(app_store) == [("refused", "expiry", "expiry")]


# -- the page, over HTTP ----------------------------------------------------------------------------


def client_run(store: str, check: Any, **options: Any) -> None:
    async def go() -> None:
        async with TestClient(TestServer(make_app(store, **options))) as client:
            await check(client)

    asyncio.run(go())


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def csrf_of(client: TestClient[Any, Any], **headers: str) -> tuple[str, str]:
    """The page as a browser reads it, and the CSRF value its forms carry."""
    page = await (await client.get("/", headers=headers)).text()
    found = re.search(r'name="__csrf" value="([^"]+)"', page)
    return page, (found.group(1) if found else "")


def test_the_page_answers_as_the_tokens_holder_with_no_name_box(app_store: str, action_log: Path) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        page, csrf = await csrf_of(client, **bearer("tok-ann"))
        assert 'name="__responder"' not in page
        assert '<span id="identity">ann</span>' in page
        assert "may answer: ann or a member of group finance" in page
        posted = await client.post(f"/answer/{iid}", headers=bearer("tok-ann"),
                                   data={"response": "y", "__responder": "mallory", "__csrf": csrf})
        assert posted.status == 200, await posted.text()

    client_run(app_store, check, tokens=TOKENS, build=build)
    assert actions(action_log) == ["t1 ship book 'y'"]
    assert trail(app_store) == [("applied", "ann", "page")]  # the token's holder, not the name posted


def test_the_page_refuses_a_token_holder_not_named_and_audits_it(app_store: str, action_log: Path) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        page, _ = await csrf_of(client, **bearer("tok-bob"))
        _, csrf = await csrf_of(client, **bearer("tok-ann"))  # the server's one value: bob can read it elsewhere
        card = page[page.index(f'data-id="{iid}"'):]
        assert "Only ann or a member of group finance may answer; you, bob (groups: ops), may not" in card
        assert f'action="answer/{iid}"' not in page  # no form for what bob may not answer
        posted = await client.post(f"/answer/{iid}", headers=bearer("tok-bob"),
                                   data={"response": "y", "__csrf": csrf})
        assert posted.status == 403
        assert "bob (groups: ops) may not" in await posted.text()
        api = await client.post(f"/api/answer/{iid}", headers=bearer("tok-bob"), json={"response": "y",
                                                                                        "responder": "ann"})
        assert api.status == 403
        body = await api.json()
        assert body["not_allowed"] is True
        assert "bob (groups: ops) may not" in body["error"]  # the body's "responder" is not who answers
        member = await client.post(f"/api/answer/{iid}", headers=bearer("tok-cat"), json={"response": "n"})
        assert member.status == 200, await member.text()
        listed = await (await client.get("/api/pending", headers=bearer("tok-cat"))).json()
        assert listed == []

    client_run(app_store, check, tokens=TOKENS, build=build)
    assert actions(action_log) == ["t1 ship book 'n'"]
    assert trail(app_store) == [("refused", "bob", "page"), ("refused", "bob", "page"), ("applied", "cat", "page")]


def test_a_page_that_does_not_know_who_answers_never_satisfies_responders(app_store: str,
                                                                         action_log: Path) -> None:
    restricted = waiting("t1")
    open_to_all = str(build("t2").invoke({"item": "pen"}, thread_id="t2").interrupts[0].id)

    async def check(client: TestClient[Any, Any]) -> None:
        page, csrf = await csrf_of(client, **bearer("tok-anon"))
        assert "this inbox does not know who you are" in page
        assert f'action="answer/{restricted}"' not in page
        assert page.count('name="__responder"') == 1  # the open interrupt's form keeps its label box
        typed = await client.post(f"/answer/{restricted}", headers=bearer("tok-anon"),
                                  data={"response": "y", "__responder": "ann", "__csrf": csrf})
        assert typed.status == 403
        assert "a name typed in vouches for nobody" in await typed.text()
        api = await client.post(f"/api/answer/{restricted}", headers=bearer("tok-anon"),
                                json={"response": "y", "responder": "ann"})
        assert api.status == 403
        labelled = await client.post(f"/api/answer/{open_to_all}", headers=bearer("tok-anon"),
                                     json={"response": "y", "responder": "ann"})
        assert labelled.status == 200

    client_run(app_store, check, tokens=TOKENS, build=build)
    assert trail(app_store, "t1") == [("refused", None, "page"), ("refused", None, "page")]
    assert trail(app_store, "t2") == [("applied", "ann", "page")]
    assert actions(action_log) == ["t2 ship pen 'y'"]


def test_behind_a_proxy_the_identity_header_says_who_answers(app_store: str, action_log: Path) -> None:
    iid = waiting()
    proxy = {"X-Forwarded-User": "dan", "X-Forwarded-Groups": " ops , finance "}

    async def check(client: TestClient[Any, Any]) -> None:
        missing = await client.get("/api/pending")
        assert missing.status == 401
        assert "X-Forwarded-User" in await missing.text()
        outsider = await client.post(f"/api/answer/{iid}", headers={"X-Forwarded-User": "eve"},
                                     json={"response": "y", "responder": "ann"})
        assert outsider.status == 403
        page, _ = await csrf_of(client, **proxy)
        assert '<span id="identity">dan (groups: ops, finance)</span>' in page
        ok = await client.post(f"/api/answer/{iid}", headers=proxy, json={"response": "y"})
        assert ok.status == 200, await ok.text()

    client_run(app_store, check, identity_header="X-Forwarded-User", groups_header="X-Forwarded-Groups", build=build)
    assert trail(app_store) == [("refused", "eve", "page"), ("applied", "dan", "page")]
    assert actions(action_log) == ["t1 ship book 'y'"]


def test_the_cookie_a_token_swaps_for_keeps_its_holder(app_store: str, action_log: Path) -> None:
    iid = waiting()

    async def check(client: TestClient[Any, Any]) -> None:
        swap = await client.get("/?token=tok-cat", allow_redirects=False)
        assert swap.status == 303
        page, csrf = await csrf_of(client)  # on the cookie now
        assert '<span id="identity">cat (groups: finance)</span>' in page
        origin = {"Origin": f"http://127.0.0.1:{client.port}"}
        posted = await client.post(f"/answer/{iid}", headers=origin, data={"response": "y", "__csrf": csrf})
        assert posted.status == 200, await posted.text()

    client_run(app_store, check, tokens=TOKENS, build=build)
    assert trail(app_store) == [("applied", "cat", "page")]


@pytest.mark.parametrize(("options", "message"), [
    ({"token": "a", "tokens": {"b": ANONYMOUS}}, "not both"),
    ({"tokens": {}}, "holds no token"),
    ({"tokens": TOKENS, "identity_header": "X-User"}, "not both"),
    ({"groups_header": "X-Groups"}, "needs identity_header"),
    ({"identity_header": "X User"}, "an HTTP header name"),
])
def test_identity_options_that_cannot_work_are_refused(app_store: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_app(app_store, **options)


# -- the tokens file ----------------------------------------------------------------------------------


def test_a_tokens_file_in_lines_or_json() -> None:
    text = "# who may use the inbox\ntok-1 ann\n\ntok-2 bob finance,group:ops\ntok-3\n"
    assert parse_tokens(text, "f") == {"tok-1": Identity("ann"), "tok-2": Identity("bob", ("finance", "ops")),
                                       "tok-3": ANONYMOUS}
    as_json = json.dumps([{"token": "tok-1", "name": "ann"}, {"token": "tok-2", "name": "bob", "groups": ["finance"]},
                          {"token": "tok-3"}])
    assert parse_tokens(as_json, "f") == {"tok-1": Identity("ann"), "tok-2": Identity("bob", ("finance",)),
                                          "tok-3": ANONYMOUS}


@pytest.mark.parametrize(("text", "message"), [
    ("tok-1 ann\ntok-1 bob\n", "f, line 2: this token is given twice"),
    ("tok-1 ann finance extra\n", "f, line 1: expected 'TOKEN [NAME [GROUP,GROUP...]]'"),
    ("tok-1 group:finance\n", "is a group"),
    ("tok-1 ann finance,,ops\n", "a name must be a non-empty string"),
    ("# nothing\n", "f holds no token"),
    ('[{"token": "a b", "name": "ann"}]', "entry 1: a token must be a non-empty string without spaces"),
    ('[{"token": "t", "name": "ann", "role": "admin"}]', "entry 1: expected"),
    ('[{"token": "t", "name": "ann", "groups": "finance"}]', "groups must be a list"),
    ("[not json", "f is not valid JSON"),
])
def test_a_tokens_file_that_cannot_work_is_refused_naming_where(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_tokens(text, "f")


# -- a real `statehitl inbox serve` ------------------------------------------------------------------

running = contextmanager(serve)


def request(served: Served, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        data = None if body is None else json.dumps(body)
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text("tok-ann ann\ntok-bob bob ops\n")
    path.chmod(0o600)
    return path


@pytest.mark.slow
def test_inbox_serve_with_a_tokens_file(app_store: str, action_log: Path, tokens_file: Path) -> None:
    iid = waiting()
    with running(app_store, action_log, "--tokens-file", str(tokens_file)) as served:
        assert request(served, "GET", "/api/pending")[0] == 401
        status, text = request(served, "POST", f"/api/answer/{iid}", {"response": "y", "responder": "ann"},
                               Authorization="Bearer tok-bob")
        assert status == 403
        assert "bob (groups: ops) may not" in text
        status, text = request(served, "POST", f"/api/answer/{iid}", {"response": "y"}, Authorization="Bearer tok-ann")
        assert status == 200, text
        assert served.stderr() == ""
    assert actions(action_log) == ["t1 ship book 'y'"]
    assert trail(app_store) == [("refused", "bob", "page"), ("applied", "ann", "page")]


@pytest.mark.slow
def test_inbox_serve_behind_a_proxy_and_a_named_single_token(app_store: str, action_log: Path,
                                                             tmp_path: Path) -> None:
    iid = waiting()
    with running(app_store, action_log, "--identity-header", "X-Forwarded-User", "--groups-header",
                 "X-Forwarded-Groups") as served:
        assert request(served, "GET", "/api/pending")[0] == 401
        status, text = request(served, "POST", f"/api/answer/{iid}", {"response": "n"},
                               **{"X-Forwarded-User": "cat", "X-Forwarded-Groups": "finance"})
        assert status == 200, text
    assert trail(app_store) == [("applied", "cat", "page")]
    single = tmp_path / "one-token"
    single.write_text("tok-9 ann\n")
    single.chmod(0o600)
    iid = waiting("t2")
    with running(app_store, action_log, "--token-file", str(single)) as served:
        status, text = request(served, "POST", f"/api/answer/{iid}", {"response": "y", "responder": "eve"},
                               Authorization="Bearer tok-9")
        assert status == 200, text
    assert trail(app_store, "t2") == [("applied", "ann", "page")]


@pytest.mark.parametrize(("args", "message"), [
    (["--tokens-file", "TOKENS", "--token-file", "TOKENS"], "give the token one way"),
    (["--tokens-file", "BAD"], "--tokens-file BAD, line 2: this token is given twice"),
    (["--token-file", "TWO"], "holds more than one line"),
    (["--groups-header", "X-Groups"], "--groups-header needs --identity-header"),
    (["--tokens-file", "TOKENS", "--identity-header", "X-User"], "not both"),
    (["--identity-header", "X User"], "--identity-header takes an HTTP header name"),
])
def test_bad_identity_options_are_one_line_and_exit_2(app_store: str, tmp_path: Path, args: list[str], message: str,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    for name, text in (("TOKENS", "tok-1 ann\n"), ("BAD", "tok-1 ann\ntok-1 bob\n"), ("TWO", "tok-1\ntok-2\n")):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o600)
    capsys.readouterr()
    assert main(["inbox", "serve", "--port", "0", *args, "--store", app_store]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
