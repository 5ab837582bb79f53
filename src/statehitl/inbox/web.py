"""``statehitl inbox serve``: the inbox as a small web page, on aiohttp.

aiohttp because it is one well-kept asyncio package that is both the HTTP server and its test client,
so the page runs on the same event loop as the engine's async calls, with no ASGI server beside it.

Routes: ``GET /`` the list with a form per interrupt; ``POST /answer/{id}`` answers (the first answer
wins, a later one gets "already answered", 409); ``GET /thread/{thread}`` the thread's audit trail;
``GET /api/pending`` and ``POST /api/answer/{id}`` the same as JSON, and ``GET /api/unapplied`` the answers
stored and not yet applied (also listed on the page).

Safety, in the order ``_guard`` applies it (docs/inbox.md, "Security", says the same to users):

- ``Host`` must be one of this server's own names (``_Names``): the address the connection reached,
  ``127.0.0.1``/``localhost``/``[::1]`` with the port when that address is loopback, the bound host, or
  an ``allowed_hosts`` name; anything else is 421. A DNS-rebinding page (``evil.test`` resolving to
  127.0.0.1) therefore reads and answers nothing, although its requests are same-origin to the browser.
- With a token, every request needs ``Authorization: Bearer <token>`` or the session cookie a browser
  gets by opening ``/?token=<token>`` once (then redirected to ``/``, so the token leaves the address
  bar). The cookie holds a random per-process session value, never the token; it is HttpOnly,
  SameSite=Strict and named after the port, because browsers send a host's cookies to all its ports.
- Who answers comes from the same authentication (``identity.py``): the token's holder when the tokens
  name people, or a reverse proxy's ``identity_header`` when the operator asked for one (then every
  request must carry it). Once known, the page has no name box and the JSON API ignores a body's
  ``responder``; unknown, a typed name is a label for the trail that never satisfies ``responders=``.
- A post carrying ``Origin`` must come from one of the names above (scheme, host and port), never
  compared with the request's own ``Host``; a post on the cookie must carry it (browsers always do).
  A form post also needs the page's per-process CSRF value, and a JSON answer must say
  ``Content-Type: application/json``, which no other origin can send without a CORS preflight this
  server never grants.
- Every response forbids framing (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``) and caching,
  and gives no other site a referrer; the page's policy lets only its own stylesheet and script run
  (``page.py``), and every value shown is HTML-escaped.

``serve`` refuses a non-loopback address without a token unless told ``insecure_no_token``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from aiohttp import web

from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import (
    AlreadyAnsweredError,
    InboxError,
    ResponderNotAllowedError,
    StatehitlError,
    UnknownInboxItemError,
)
from statehitl.inbox.apps import AppBuilder
from statehitl.inbox.audit import athread_audit_trail
from statehitl.inbox.identity import ANONYMOUS, Identity, from_headers, header_name
from statehitl.inbox.listing import PendingInterrupt, afind_answerable, apending, aunapplied, open_store, scan
from statehitl.inbox.page import (
    CONTENT_SECURITY_POLICY,
    CSRF_FIELD,
    RESPONDER_FIELD,
    audit_page,
    form_response,
    list_page,
    message_page,
)
from statehitl.inbox.service import Answered, answer_pending

_SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Sent on every response, errors and redirects included (a refusal must not be framable either).

No page address (a thread id) leaves for another site as a referrer. The policy is ``same-origin``
rather than ``no-referrer`` because under ``no-referrer`` a browser sends ``Origin: null`` with the
page's own form posts, which the origin check could then only refuse, or accept from anywhere (a
sandboxed frame sends ``null`` too)."""


@dataclass(frozen=True)
class _Token:
    """One token the inbox takes, the session value a browser gets for it, and who holds it."""

    token: str
    session: str
    """The cookie's value: random per process, so the cookie (which browsers also send to this host's
    other ports) never carries the token itself, and dies with the process."""
    identity: Identity


@dataclass(frozen=True)
class _Secrets:
    """What the guard checks against, fixed for the life of the app."""

    tokens: tuple[_Token, ...]
    csrf: str
    """The answer forms' hidden value: only a page read from this inbox can know it."""
    bind: str | None
    allowed: frozenset[str]
    identity_header: str | None = None
    """The header a reverse proxy names the user in (None: identities come from tokens, if at all)."""
    groups_header: str | None = None

    def token(self, given: str) -> _Token | None:
        """The token ``given`` is, compared with every token in constant time (no early exit)."""
        return self._matching(given, lambda candidate: candidate.token)

    def session(self, given: str) -> _Token | None:
        """The token whose session value ``given`` is, compared likewise."""
        return self._matching(given, lambda candidate: candidate.session)

    def _matching(self, given: str, secret: Callable[[_Token], str]) -> _Token | None:
        found = None
        for candidate in self.tokens:  # every one, even after a match: the time says nothing of which
            if _same(given, secret(candidate)):
                found = candidate
        return found


_STORE: web.AppKey[Checkpointer] = web.AppKey("store", Checkpointer)
_LABEL: web.AppKey[str] = web.AppKey("label", str)
_BUILD: web.AppKey[Any] = web.AppKey("build", object)
_SECRETS: web.AppKey[_Secrets] = web.AppKey("secrets", _Secrets)
_IDENTITY: Any = web.RequestKey("identity", Identity) if hasattr(web, "RequestKey") else "statehitl.identity"
"""Where ``_guard`` leaves the request's ``Identity`` for the handlers: a typed key where aiohttp has them
(recent versions warn about plain ones), else a plain one (``aiohttp>=3.9`` is what the extra asks for)."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def cookie_name(port: int) -> str:
    """The session cookie of the inbox on ``port``: cookies are not port-isolated, so two inboxes (or an
    inbox and another local app) on one host would otherwise overwrite each other's."""
    return f"statehitl_inbox_{port}"


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_error(host: str, token: str | bool | None, insecure_no_token: bool) -> str | None:
    """Why serving on ``host`` this way is refused (None: it is not): a non-loopback address without a
    token (``token``: the token, or whether there is one) lets anyone who reaches it read every reason
    and answer, so that takes an explicit opt-in. A proxy's identity header is no token: anyone who
    reaches the port directly can send it."""
    if not token and not is_loopback(host) and not insecure_no_token:
        return (f"--host {host} is reachable from other machines, and without a token anyone who reaches it can "
                "answer: give a token (--token-file PATH or STATEHITL_INBOX_TOKEN), or --insecure-no-token to "
                "serve it open anyway")
    return None


def allowed_host_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` as the ``Host`` values they allow (lowercased); ``ValueError`` for one that is not a host
    name with an optional port (a URL, a path, a space), since it could never match."""
    allowed = set()
    for name in names:
        host = name.strip().lower()
        if not host or any(c in host for c in "/?#@ \t") or host.startswith(":"):
            raise ValueError(f"--allowed-host takes a name as the Host header carries it (inbox.example.com, "
                             f"inbox.example.com:8443), got {name!r}")
        allowed.add(host)
    return frozenset(allowed)


def make_app(store: str | Checkpointer, *, token: str | None = None, tokens: Mapping[str, Identity] | None = None,
             identity_header: str | None = None, groups_header: str | None = None, build: AppBuilder | None = None,
             bind: str | None = None, allowed_hosts: Iterable[str] = ()) -> web.Application:
    """The aiohttp application over ``store`` (what ``serve`` runs; tests drive it directly too).

    ``token`` is one token that names nobody; ``tokens`` maps each token to who holds it
    (``identity.parse_tokens``), and the page then answers as them. ``identity_header`` (with
    ``groups_header``) takes who the user is from a reverse proxy's header instead: every request must
    carry it. ``bind`` is the host it is served on (its name is then a valid ``Host``, e.g. ``0.0.0.0``
    as announced); ``allowed_hosts`` adds names such as a reverse proxy's (``allowed_host_names``).
    """
    if token is not None and tokens is not None:
        raise ValueError("give the inbox one token (token=) or a map of them (tokens=), not both")
    held = dict(tokens) if tokens is not None else ({} if token is None else {token: ANONYMOUS})
    if tokens is not None and not tokens:
        raise ValueError("tokens= holds no token")
    if any(not t for t in held):
        raise ValueError("the inbox token must not be empty")
    if identity_header is not None and any(i.known for i in held.values()):
        raise ValueError("identities come from the tokens or from the proxy's header, not both: give tokens that "
                         "name nobody with identity_header=")
    if groups_header is not None and identity_header is None:
        raise ValueError("groups_header= needs identity_header=, the header that names the user")
    app = web.Application(middlewares=[_guard])
    app[_STORE] = open_store(store)
    app[_LABEL] = store if isinstance(store, str) else repr(store)
    app[_BUILD] = build
    app[_SECRETS] = _Secrets(
        tuple(_Token(t, secrets.token_urlsafe(32), i) for t, i in held.items()), secrets.token_urlsafe(32),
        None if bind is None else bind.lower(), allowed_host_names(allowed_hosts),
        None if identity_header is None else header_name(identity_header, "identity_header="),
        None if groups_header is None else header_name(groups_header, "groups_header="))
    app.on_response_prepare.append(_secure_headers)
    app.router.add_get("/", _index)
    app.router.add_post("/answer/{id}", _answer_form)
    app.router.add_get("/thread/{thread}", _thread)
    app.router.add_get("/api/pending", _api_pending)
    app.router.add_get("/api/unapplied", _api_unapplied)
    app.router.add_post("/api/answer/{id}", _api_answer)
    return app


async def _secure_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(_SECURITY_HEADERS)


def _same(given: str, expected: str) -> bool:
    """Constant time, whatever the lengths: both sides are hashed first, so neither a prefix nor the
    length of the secret shows in how long a refusal takes."""
    return hmac.compare_digest(hashlib.sha256(given.encode()).digest(), hashlib.sha256(expected.encode()).digest())


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True)
class _Names:
    """The ``Host`` values (and so the origins) this server answers to on one connection."""

    hosts: frozenset[str]
    port: int
    proxied: frozenset[str]

    @classmethod
    def of(cls, request: web.Request) -> _Names | None:
        """From the address the connection reached (None: the socket is gone). That address is the
        bound one, or, on a wildcard bind, the interface used; an IP literal is safe to accept, since a
        rebinding page's requests carry its own domain name."""
        sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
        if not isinstance(sockname, tuple) or len(sockname) < 2:
            return None
        try:
            address = ipaddress.ip_address(str(sockname[0]).split("%", 1)[0])
        except ValueError:
            return None
        port = int(sockname[1])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        found = request.app[_SECRETS]
        local = {str(address)}
        if address.is_loopback:
            local |= {"127.0.0.1", "localhost", "::1"}
        if found.bind:
            local.add(found.bind.strip("[]"))
        hosts = {_host_port(h, port) for h in local}
        if port == 80:  # a browser leaves the default port out of Host and Origin
            hosts |= {f"[{h}]" if ":" in h else h for h in local}
        return cls(frozenset(hosts), port, found.allowed)

    def allows_host(self, host: str) -> bool:
        return host.lower() in self.hosts or host.lower() in self.proxied

    def allows_origin(self, origin: str) -> bool:
        """Exactly one of these origins: ``http://`` a local name (this server speaks plain HTTP), or
        ``http(s)://`` an allowed name (a proxy may add TLS). ``null`` (a sandboxed frame) is none."""
        scheme, _, rest = origin.lower().partition("://")
        if scheme == "http" and rest in self.hosts:
            return True
        return scheme in ("http", "https") and rest in self.proxied

    def describe(self) -> str:
        return ", ".join(sorted(self.hosts | self.proxied))


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The host, the token (if any) and the origin rules, before any handler runs."""
    names = _Names.of(request)
    host = request.headers.get("Host", "")
    if names is None or not names.allows_host(host):
        shown = names.describe() if names is not None else "its own address"
        return web.Response(status=421, text=f"refused: this inbox answers to {shown}, not to Host {host!r}; a "
                                             "reverse proxy's name needs --allowed-host NAME")
    found = request.app[_SECRETS]
    on_cookie = False
    identity = ANONYMOUS
    if found.tokens:
        offered = request.query.get("token")
        if offered is not None and request.method == "GET" and request.path == "/":
            swapped = found.token(offered)
            if swapped is None:
                return _denied()
            response = web.Response(status=303, headers={"Location": "/"})  # the token leaves the address bar
            response.set_cookie(cookie_name(names.port), swapped.session, httponly=True, samesite="Strict", path="/")
            return response
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            held = found.token(header[len("Bearer "):])
        else:
            held = found.session(request.cookies.get(cookie_name(names.port), ""))
            on_cookie = held is not None
        if held is None:
            return _denied()
        identity = held.identity
    if found.identity_header is not None:
        proxied = from_headers(request.headers, found.identity_header, found.groups_header)
        if proxied is None:
            return web.Response(status=401, text=f"this inbox takes who you are from the {found.identity_header} "
                                                 "header its reverse proxy sets, and this request has none")
        identity = proxied
    request[_IDENTITY] = identity
    if request.method == "POST":
        origin = request.headers.get("Origin")
        if origin is None and on_cookie:
            return _refused("a browser's post without an Origin header")
        if origin is not None and not names.allows_origin(origin):
            return _refused(f"a post from {origin}, which is not this inbox ({names.describe()})")
    return await handler(request)


def _denied() -> web.Response:
    return web.Response(status=401, text="this inbox needs its token: open /?token=... once, or send "
                                         "'Authorization: Bearer ...'", headers={"WWW-Authenticate": "Bearer"})


def _refused(why: str) -> web.Response:
    return web.Response(status=403, text=f"refused: {why}")


def _html(body: str, status: int = 200) -> web.Response:
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")


async def _index(request: web.Request) -> web.Response:
    looked = await scan(request.app[_STORE])
    return _html(list_page(looked.pending, request.app[_LABEL], resumes=request.app[_BUILD] is not None,
                           csrf=request.app[_SECRETS].csrf, identity=_identity(request), unapplied=looked.unapplied,
                           unreadable=looked.unreadable))


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
    bound = done.bound_by()
    if bound is not None:
        said = f"{said}: {bound}"
    if done.status is not None:
        return f"{said}; the thread resumed and is now {done.status}."
    return f"{said}; the answer is stored, and a worker (statehitl worker) or the app's next call applies it."


async def _answer_form(request: web.Request) -> web.Response:
    form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    if not _same(form.get(CSRF_FIELD, ""), request.app[_SECRETS].csrf):
        return _html(message_page("Not answered", "This form did not come from this inbox's page: reload the "
                                                  "inbox and answer from there.", error=True), 403)
    identity = _identity(request)
    try:
        item = await afind_answerable(request.app[_STORE], request.match_info["id"])
        response = form_response(item.response_schema, form)
        responder, groups = _responder(identity, item, form.get(RESPONDER_FIELD))
        done = await answer_pending(request.app[_STORE], item, response, responder=responder, groups=groups,
                                    build=request.app[_BUILD], via="page")
    except ResponderNotAllowedError as exc:
        return _html(message_page("Not yours to answer", _not_allowed(exc, identity), error=True), 403)
    except AlreadyAnsweredError as exc:
        return _html(message_page("Already answered", str(exc), error=True), 409)
    except UnknownInboxItemError as exc:
        return _html(message_page("Not pending", str(exc), error=True), 404)
    except (ValueError, StatehitlError) as exc:
        return _html(message_page("Not answered", str(exc), error=True), 400)
    return _html(message_page("Answered", _done(done)))


def _identity(request: web.Request) -> Identity:
    found = request.get(_IDENTITY)
    return found if isinstance(found, Identity) else ANONYMOUS


def _responder(identity: Identity, item: PendingInterrupt, typed: str | None) -> tuple[str | None, tuple[str, ...]]:
    """Who answers, as far as the inbox knows: the identity its authentication gave, whatever the request
    says; else the name typed in, a label for the trail that vouches for nobody, so an interrupt that
    names who may answer gets an answer from nobody named (refused: the page does not know who you are)."""
    if identity.known:
        return identity.name, identity.groups
    label = (typed or "").strip() or None
    return (None if item.responders else label), ()


def _not_allowed(exc: ResponderNotAllowedError, identity: Identity) -> str:
    if identity.known:
        return str(exc)
    return (f"{exc}. This inbox does not know who you are: a name typed in vouches for nobody, so only an inbox "
            "served with --tokens-file (tokens that name people) or --identity-header (behind a proxy that "
            "signs users in) can answer it")


async def _api_pending(request: web.Request) -> web.Response:
    return web.json_response([asdict(i) for i in await apending(request.app[_STORE])])


async def _api_unapplied(request: web.Request) -> web.Response:
    return web.json_response([asdict(a) for a in await aunapplied(request.app[_STORE])])


async def _api_answer(request: web.Request) -> web.Response:
    if request.content_type != "application/json":
        return web.json_response({"error": "send the answer as Content-Type: application/json"}, status=415)
    try:
        body = await request.json()
    except ValueError:
        return web.json_response({"error": "the body must be JSON: {\"response\": ..., \"responder\": ...}"},
                                 status=400)
    if not isinstance(body, dict) or "response" not in body:
        return web.json_response({"error": "the body must be a JSON object with a 'response'"}, status=400)
    identity = _identity(request)
    typed = body.get("responder")
    try:
        item = await afind_answerable(request.app[_STORE], request.match_info["id"])
        responder, groups = _responder(identity, item, typed if isinstance(typed, str) else None)
        done = await answer_pending(request.app[_STORE], item, body["response"], responder=responder, groups=groups,
                                    build=request.app[_BUILD], via="page")
    except ResponderNotAllowedError as exc:
        return web.json_response({"error": _not_allowed(exc, identity), "not_allowed": True}, status=403)
    except AlreadyAnsweredError as exc:
        return web.json_response({"error": str(exc), "already_answered": True}, status=409)
    except UnknownInboxItemError as exc:
        return web.json_response({"error": str(exc)}, status=404)
    except (InboxError, StatehitlError, ValueError) as exc:
        return web.json_response({"error": str(exc)}, status=400)
    return web.json_response({"thread_id": done.interrupt.thread_id, "interrupt_id": done.interrupt.id,
                              "status": done.status, "message": _done(done), "first": done.first,
                              "responder": done.answer.responder, "via": done.answer.via})


def serve(store: str, *, host: str = "127.0.0.1", port: int = 8421, token: str | None = None,
          tokens: Mapping[str, Identity] | None = None, identity_header: str | None = None,
          groups_header: str | None = None, build: AppBuilder | None = None, allowed_hosts: Iterable[str] = (),
          insecure_no_token: bool = False, announce: Callable[[str], None] = print) -> None:
    """Serve the inbox until interrupted (Ctrl-C, SIGTERM); ``announce`` gets the address once it listens.

    ``ValueError`` before binding anything for a non-loopback ``host`` without a token, unless
    ``insecure_no_token`` says that is meant (``exposure_error``). ``tokens``, ``identity_header`` and
    ``groups_header`` say who answers (``make_app``).
    """
    refused = exposure_error(host, token is not None or bool(tokens), insecure_no_token)
    if refused is not None:
        raise ValueError(refused)
    app = make_app(store, token=token, tokens=tokens, identity_header=identity_header, groups_header=groups_header,
                   build=build, bind=host, allowed_hosts=allowed_hosts)
    asyncio.run(_serve(app, store, host, port, token=token is not None or bool(tokens), announce=announce))


async def _serve(app: web.Application, store: str, host: str, port: int, *, token: bool,
                 announce: Callable[[str], None]) -> None:
    import signal

    runner = web.AppRunner(app, access_log=None)
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
        hint = "/?token=..." if token else "/"
        announce(f"inbox for {store} at http://{shown}:{bound[1]}{hint} (Ctrl-C to stop)")
        await stop.wait()
    finally:
        await runner.cleanup()
