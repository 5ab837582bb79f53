"""``statehitl inbox serve``: the inbox as a small web page, on aiohttp.

aiohttp because it is one well-kept asyncio package that is both the HTTP server and its test client,
so the page runs on the same event loop as the engine's async calls, with no ASGI server beside it.

Routes: ``GET /`` the list with a form per interrupt; ``POST /answer/{id}`` answers (the first answer
wins, a later one gets "already answered", 409); ``GET /thread/{thread}`` the thread's audit trail;
``GET /api/pending`` and ``POST /api/answer/{id}`` the same as JSON.

Safety: loopback by default. With a token every request needs ``Authorization: Bearer <token>`` or the
cookie a browser gets by opening ``/?token=<token>`` once (it is then redirected to ``/``, so the token
leaves the address bar; the cookie is HttpOnly and SameSite=Strict). Posts whose ``Origin`` is another
site are refused, so a page elsewhere cannot answer through a reviewer's browser. Every value shown is
HTML-escaped (``page.py``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import AlreadyAnsweredError, InboxError, StatehitlError, UnknownInboxItemError
from statehitl.inbox.apps import AppBuilder
from statehitl.inbox.audit import athread_audit_trail
from statehitl.inbox.listing import afind_pending, apending, open_store
from statehitl.inbox.page import audit_page, form_response, list_page, message_page
from statehitl.inbox.service import Answered, aanswer, answer_pending

__all__ = ["COOKIE", "make_app", "serve"]

COOKIE = "statehitl_inbox_token"
_STORE: web.AppKey[Checkpointer] = web.AppKey("store", Checkpointer)
_LABEL: web.AppKey[str] = web.AppKey("label", str)
_BUILD: web.AppKey[Any] = web.AppKey("build", object)
_TOKEN: web.AppKey[Any] = web.AppKey("token", object)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def make_app(store: str | Checkpointer, *, token: str | None = None,
             build: AppBuilder | None = None) -> web.Application:
    """The aiohttp application over ``store`` (what ``serve`` runs; tests drive it directly too)."""
    if token is not None and not token:
        raise ValueError("the inbox token must not be empty")
    app = web.Application(middlewares=[_guard])
    app[_STORE] = open_store(store)
    app[_LABEL] = store if isinstance(store, str) else repr(store)
    app[_BUILD] = build
    app[_TOKEN] = token
    app.router.add_get("/", _index)
    app.router.add_post("/answer/{id}", _answer_form)
    app.router.add_get("/thread/{thread}", _thread)
    app.router.add_get("/api/pending", _api_pending)
    app.router.add_post("/api/answer/{id}", _api_answer)
    return app


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The token (if any) and the same-origin rule for posts, before any handler runs."""
    token: str | None = request.app[_TOKEN]
    if token is not None:
        offered = request.query.get("token")
        if offered is not None and request.method == "GET" and request.path == "/":
            if not hmac.compare_digest(offered.encode(), token.encode()):
                return _denied()
            response = web.Response(status=303, headers={"Location": "/"})  # the token leaves the address bar
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
            return response
        header = request.headers.get("Authorization", "")
        given = header[len("Bearer "):] if header.startswith("Bearer ") else request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(given.encode(), token.encode()):
            return _denied()
    if request.method == "POST":
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            return web.Response(status=403, text=f"refused: a post from {origin} to this inbox")
    return await handler(request)


def _denied() -> web.Response:
    return web.Response(status=401, text="this inbox needs its token: open /?token=... once, or send "
                                         "'Authorization: Bearer ...'", headers={"WWW-Authenticate": "Bearer"})


def _html(body: str, status: int = 200) -> web.Response:
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8",
                        headers={"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                                            "form-action 'self'", "X-Content-Type-Options": "nosniff",
                                 "Cache-Control": "no-store"})


async def _index(request: web.Request) -> web.Response:
    items = await apending(request.app[_STORE])
    return _html(list_page(items, request.app[_LABEL], resumes=request.app[_BUILD] is not None))


async def _thread(request: web.Request) -> web.Response:
    thread = request.match_info["thread"]
    try:
        rows = await athread_audit_trail(request.app[_STORE], thread)
    except StatehitlError as exc:
        return _html(message_page("Unknown thread", str(exc), error=True), 404)
    return _html(audit_page(thread, rows))


def _done(done: Answered) -> str:
    item = done.interrupt
    said = f"Answered {item.name} on thread {item.thread_id} with {json.dumps(done.answer.response)}"
    if done.status is not None:
        return f"{said}; the thread resumed and is now {done.status}."
    return f"{said}; the answer is stored and the app applies it on its next resume_answered call."


async def _answer_form(request: web.Request) -> web.Response:
    form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    try:
        item = await afind_pending(request.app[_STORE], request.match_info["id"])
        response = form_response(item.response_schema, form)
        done = await answer_pending(request.app[_STORE], item, response,
                                    responder=form.get("__responder", "").strip() or None, build=request.app[_BUILD])
    except AlreadyAnsweredError as exc:
        return _html(message_page("Already answered", str(exc), error=True), 409)
    except UnknownInboxItemError as exc:
        return _html(message_page("Not pending", str(exc), error=True), 404)
    except (ValueError, StatehitlError) as exc:
        return _html(message_page("Not answered", str(exc), error=True), 400)
    return _html(message_page("Answered", _done(done)))


async def _api_pending(request: web.Request) -> web.Response:
    return web.json_response([asdict(i) for i in await apending(request.app[_STORE])])


async def _api_answer(request: web.Request) -> web.Response:
    try:
        body = await request.json()
    except ValueError:
        return web.json_response({"error": "the body must be JSON: {\"response\": ..., \"responder\": ...}"},
                                 status=400)
    if not isinstance(body, dict) or "response" not in body:
        return web.json_response({"error": "the body must be a JSON object with a 'response'"}, status=400)
    responder = body.get("responder")
    try:
        done = await aanswer(request.app[_STORE], request.match_info["id"], body["response"],
                             responder=(responder if isinstance(responder, str) else None) or None,
                             build=request.app[_BUILD])
    except AlreadyAnsweredError as exc:
        return web.json_response({"error": str(exc), "already_answered": True}, status=409)
    except UnknownInboxItemError as exc:
        return web.json_response({"error": str(exc)}, status=404)
    except (InboxError, StatehitlError, ValueError) as exc:
        return web.json_response({"error": str(exc)}, status=400)
    return web.json_response({"thread_id": done.interrupt.thread_id, "interrupt_id": done.interrupt.id,
                              "status": done.status, "message": _done(done)})


def serve(store: str, *, host: str = "127.0.0.1", port: int = 8421, token: str | None = None,
          build: AppBuilder | None = None, announce: Callable[[str], None] = print) -> None:
    """Serve the inbox until interrupted (Ctrl-C, SIGTERM); ``announce`` gets the address once it listens."""
    asyncio.run(_serve(store, host, port, token, build, announce))


async def _serve(store: str, host: str, port: int, token: str | None, build: AppBuilder | None,
                 announce: Callable[[str], None]) -> None:
    import signal

    runner = web.AppRunner(make_app(store, token=token, build=build), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in str(bound[0]) else bound[0]
        hint = "/?token=..." if token is not None else "/"
        announce(f"inbox for {store} at http://{shown}:{bound[1]}{hint} (Ctrl-C to stop)")
        await stop.wait()
    finally:
        await runner.cleanup()
