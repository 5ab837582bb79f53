"""The inbox page in a real headless Chromium (Debian's ``chromium``, driven by Playwright for Python),
served by a real ``statehitl inbox serve`` process resuming through ``--app inbox_app:build``; the
attacks on it come from a page served on another loopback port."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from inbox_app import actions, build
from served import Served, serve

from statehitl import inbox
from statehitl.inbox.web_hosts import cookie_name

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.slow


@pytest.fixture
def server(app_store: str, action_log: Path) -> Iterator[Served]:
    yield from serve(app_store, action_log)


@pytest.fixture
def token_server(app_store: str, action_log: Path, tmp_path: Path) -> Iterator[Served]:
    token = tmp_path / "token"
    token.write_text("tok-123\n")
    token.chmod(0o600)
    yield from serve(app_store, action_log, "--token-file", str(token))


@pytest.fixture
def identity_server(app_store: str, action_log: Path, tmp_path: Path) -> Iterator[Served]:
    """Tokens that name who holds them: the page answers as the holder."""
    tokens = tmp_path / "tokens"
    tokens.write_text("tok-ann ann finance\ntok-bob bob\n")
    tokens.chmod(0o600)
    yield from serve(app_store, action_log, "--tokens-file", str(tokens))


class Elsewhere:
    """Another site on this host: a page served from another loopback port, whose HTML a test sets."""

    def __init__(self) -> None:
        self.html = ""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = owner.html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def elsewhere() -> Iterator[Elsewhere]:
    site = Elsewhere()
    thread = threading.Thread(target=site.server.serve_forever, daemon=True)
    thread.start()
    yield site
    site.server.shutdown()
    site.server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (./dev.sh test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def waiting(thread: str = "t1", **order: Any) -> str:
    return str(build(thread).invoke({"item": "book", **order}, thread_id=thread).interrupts[0].id)


def test_the_page_lists_a_pending_interrupt(server: Served, browser: Any) -> None:
    iid = waiting("t-list", reason={"question": "Ship the book?"}, expires_in=3600, on_expire="n")
    page = browser.new_page()
    page.goto(server.url + "/")
    card = page.locator(f'.item[data-id="{iid}"]')
    assert card.locator(".name").inner_text() == "ship-approval"
    assert "Ship the book?" in card.locator(".reason").inner_text()
    assert "t-list" in card.inner_text()
    assert "expires: in 59m" in card.inner_text()
    page.close()


def test_answering_from_the_page_resumes_and_acts_once(server: Served, browser: Any, action_log: Path) -> None:
    iid = waiting()
    page = browser.new_page()
    page.goto(server.url + "/")
    form = page.locator(f'.item[data-id="{iid}"] form')
    form.locator("textarea").fill("y")
    form.locator('input[name="__responder"]').fill("ann")
    form.locator("button").click()
    assert page.locator("h1").inner_text() == "Answered"
    assert "the thread resumed and is now completed" in page.locator("#message").inner_text()
    assert actions(action_log) == ["t1 ship book 'y'"]
    page.go_back()
    page.reload()
    assert page.locator("#empty").is_visible()
    page.goto(server.url + "/thread/t1")
    assert "ann" in page.locator("table").inner_text()
    assert "applied" in page.locator("table").inner_text()
    page.close()


def test_two_reviewers_racing_run_the_action_once(server: Served, browser: Any, action_log: Path) -> None:
    iid = waiting()
    reviewers = [browser.new_context() for _ in range(2)]
    pages = [context.new_page() for context in reviewers]
    for page, (answer, name) in zip(pages, [("y", "ann"), ("n", "bob")], strict=True):
        page.goto(server.url + "/")
        form = page.locator(f'.item[data-id="{iid}"] form')
        form.locator("textarea").fill(answer)
        form.locator('input[name="__responder"]').fill(name)
    for page in pages:  # both posts leave before either answer comes back
        page.locator(f'.item[data-id="{iid}"] form button').click(no_wait_after=True)
    for page in pages:
        page.wait_for_selector("#message")
    titles = sorted(page.locator("h1").inner_text() for page in pages)
    assert titles == ["Already answered", "Answered"]
    loser = next(page for page in pages if page.locator("h1").inner_text() == "Already answered")
    assert "was already answered by" in loser.locator("#message").inner_text()
    assert len(actions(action_log)) == 1
    for context in reviewers:
        context.close()


def test_the_token_is_required_then_kept_in_a_cookie(token_server: Served, browser: Any, action_log: Path) -> None:
    iid = waiting()
    context = browser.new_context()
    page = context.new_page()
    denied = page.goto(token_server.url + "/")
    assert denied is not None
    assert denied.status == 401
    page.goto(token_server.url + "/?token=tok-123")
    assert page.url == token_server.url + "/"  # the token is gone from the address bar
    [cookie] = context.cookies()
    assert cookie["name"] == cookie_name(token_server.port)
    assert cookie["value"] != "tok-123"
    assert cookie["httpOnly"]
    assert cookie["sameSite"] == "Strict"
    form = page.locator(f'.item[data-id="{iid}"] form')
    form.locator("textarea").fill('"y"')
    form.locator("button").click()
    assert page.locator("h1").inner_text() == "Answered"
    assert actions(action_log) == ["t1 ship book 'y'"]
    stranger = browser.new_page()
    assert stranger.goto(token_server.url + "/thread/t1").status == 401
    stranger.close()
    context.close()


def test_the_page_answers_as_the_tokens_holder_with_no_name_box(identity_server: Served, browser: Any,
                                                                 app_store: str, action_log: Path) -> None:
    """A token that names ann: the page says so, has no "Your name" box, offers no form for an interrupt
    only bob may answer, and the answer it sends is ann's in the audit trail."""
    mine = waiting("t-mine", responders=["group:finance"])
    theirs = waiting("t-theirs", responders=["bob"])
    context = browser.new_context()
    page = context.new_page()
    page.goto(identity_server.url + "/?token=tok-ann")
    assert page.locator("#identity").inner_text() == "ann (groups: finance)"
    assert page.locator('input[name="__responder"]').count() == 0
    assert "may answer: a member of group finance" in page.locator(f'.item[data-id="{mine}"]').inner_text()
    other = page.locator(f'.item[data-id="{theirs}"]')
    assert other.locator("form").count() == 0
    assert "Only bob may answer; you, ann (groups: finance), may not answer it." in other.inner_text()
    form = page.locator(f'.item[data-id="{mine}"] form')
    form.locator("textarea").fill("y")
    form.locator("button").click()
    assert page.locator("h1").inner_text() == "Answered"
    assert actions(action_log) == ["t-mine ship book 'y'"]
    page.goto(identity_server.url + "/thread/t-mine")
    row = page.locator("table tr").nth(1).inner_text()
    assert "applied" in row
    assert "ann" in row
    [entry] = inbox.thread_audit_trail(app_store, "t-mine")
    assert (entry.responder, entry.via) == ("ann", "page")
    assert [p.id for p in inbox.pending(app_store)] == [theirs]
    context.close()


def test_a_reason_with_a_script_renders_as_text(server: Served, browser: Any) -> None:
    attack = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
    iid = waiting("t-x", reason={"note": attack})
    page = browser.new_page()
    page.goto(server.url + "/")
    assert attack in page.locator(f'.item[data-id="{iid}"] .reason').inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".item img").count() == 0
    page.close()


def test_a_choice_starts_unpicked_and_the_button_waits_for_one(server: Served, browser: Any,
                                                              action_log: Path) -> None:
    """``Literal["approve", "reject"]``: no choice is checked on load and the button is disabled, so no
    click but one on a choice answers; picking one enables it."""
    iid = waiting("t-choice", choice=True)
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(server.url + "/")
    form = page.locator(f'.item[data-id="{iid}"] form')
    radios = form.locator('input[type="radio"][name="response"]')
    assert radios.count() == 2
    assert [radios.nth(n).is_checked() for n in range(2)] == [False, False]
    assert form.locator("select").count() == 0
    assert form.locator("button").is_disabled()
    assert not form.evaluate("form => form.checkValidity()")
    form.locator("label", has_text="reject").click()
    assert form.locator("button").is_enabled()
    form.locator("button").click()
    assert page.locator("h1").inner_text() == "Answered"
    assert actions(action_log) == ["t-choice ship book 'reject'"]
    assert errors == []  # the page's own script and style ran under its policy
    page.close()


def test_the_page_cannot_be_framed_by_another_port(server: Served, browser: Any, elsewhere: Elsewhere,
                                                   app_store: str) -> None:
    """A page on another port of this host frames the inbox to trick a click on it: the frame stays
    empty, and Chromium says the policy refused it."""
    iid = waiting()
    elsewhere.html = f'<!doctype html><title>win a prize</title><iframe id="inbox" src="{server.url}/"></iframe>'
    page = browser.new_page()
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text))
    page.goto(elsewhere.url + "/")
    page.wait_for_load_state("load")
    [frame] = [f for f in page.frames if f is not page.main_frame]
    assert frame.locator(".item").count() == 0
    assert iid not in frame.content()
    assert any("frame-ancestors 'none'" in line or "X-Frame-Options" in line for line in said), said
    page.close()
    assert len(inbox.pending(app_store)) == 1


def test_another_port_of_the_host_cannot_answer_with_the_reviewers_cookie(token_server: Served, browser: Any,
                                                                         elsewhere: Elsewhere, app_store: str,
                                                                         action_log: Path) -> None:
    """The reviewer is logged in (the cookie is the same site for every port of 127.0.0.1): a page on
    another port frames the inbox and posts an answer through the browser. Neither works."""
    iid = waiting()
    context = browser.new_context()
    page = context.new_page()
    page.goto(token_server.url + "/?token=tok-123")
    assert page.locator(f'.item[data-id="{iid}"]').count() == 1
    elsewhere.html = (f'<!doctype html><iframe src="{token_server.url}/"></iframe>'
                      f'<form id="f" method="post" action="{token_server.url}/answer/{iid}">'
                      '<input name="response" value="y"></form>')
    page.goto(elsewhere.url + "/")
    [frame] = [f for f in page.frames if f is not page.main_frame]
    assert frame.locator(".item").count() == 0
    with page.expect_navigation():
        page.evaluate("document.getElementById('f').submit()")
    assert page.url == f"{token_server.url}/answer/{iid}"
    assert "refused" in page.content()
    assert actions(action_log) == []
    assert len(inbox.pending(app_store)) == 1
    context.close()


def test_a_screenshot_of_the_page(server: Served, browser: Any, tmp_path: Path) -> None:
    """The docs' screenshot (docs/inbox.png) is made this way: ``STATEHITL_INBOX_SCREENSHOT=docs/inbox.png``."""
    waiting("refund-7", reason={"question": "Refund $120.00 to Ada?", "customer": "Ada", "amount": 120})
    waiting("deploy-42", item="release 4.2", reason={"question": "Deploy release 4.2 to production?"},
            expires_in=1800, on_expire={"approved": False})
    target = Path(os.environ.get("STATEHITL_INBOX_SCREENSHOT", str(tmp_path / "inbox.png")))
    page = browser.new_page(viewport={"width": 1000, "height": 760})
    page.goto(server.url + "/")
    page.screenshot(path=str(target), full_page=True)
    page.close()
    assert target.read_bytes().startswith(b"\x89PNG")
