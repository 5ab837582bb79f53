"""The inbox page in a real headless Chromium (Debian's ``chromium``, driven by Playwright for Python),
served by a real ``statehitl inbox serve`` process resuming through ``--app inbox_app:build``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inbox_app import LOG_ENV, STORE_ENV, actions, build

HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.slow


class Served:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url


def serve(store: str, log: Path, *extra: str) -> Iterator[Served]:
    env = {**os.environ, STORE_ENV: store, LOG_ENV: str(log), "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-m", "statehitl.cli", "inbox", "serve", "--store", store,
                                "--port", "0", "--app", "inbox_app:build", *extra],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
        if found is None:
            process.kill()
            raise AssertionError(f"inbox serve did not start: {line!r} {process.communicate()[1]}")
        yield Served(process, found.group(1))
    finally:
        process.terminate()
        process.communicate(timeout=30)
        assert process.returncode == 0


@pytest.fixture
def server(app_store: str, action_log: Path) -> Iterator[Served]:
    yield from serve(app_store, action_log)


@pytest.fixture
def token_server(app_store: str, action_log: Path) -> Iterator[Served]:
    yield from serve(app_store, action_log, "--token", "tok-123")


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
    assert [c["name"] for c in context.cookies()] == ["statehitl_inbox_token"]
    assert context.cookies()[0]["httpOnly"]
    form = page.locator(f'.item[data-id="{iid}"] form')
    form.locator("textarea").fill('"y"')
    form.locator("button").click()
    assert page.locator("h1").inner_text() == "Answered"
    assert actions(action_log) == ["t1 ship book 'y'"]
    stranger = browser.new_page()
    assert stranger.goto(token_server.url + "/thread/t1").status == 401
    stranger.close()
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
