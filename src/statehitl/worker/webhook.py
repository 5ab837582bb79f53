"""Sinks: where a worker's events go. A Python callable, or a webhook URL POSTed JSON signed as Standard
Webhooks says (https://www.standardwebhooks.com), so receivers can verify with the usual libraries.

A webhook is sent the event's JSON (``Event.payload``) as the body, with

- ``webhook-id``: the event's id for receivers (``webhook_id``: ``msg_`` and a digest of the event's
  own id, which is in the body as ``id``), the same on every attempt and from every worker, so a
  receiver that got an event twice (see ``notify.py`` for when) drops the copy;
- ``webhook-timestamp``: the attempt's time, integer epoch seconds;
- ``webhook-signature``: ``v1,`` and the base64 HMAC-SHA256 of ``{webhook-id}.{webhook-timestamp}.{body}``
  under the shared secret (a ``whsec_`` secret is base64 after its prefix, as the libraries take it;
  any other secret is used as its bytes);
- ``X-Statehitl-Event``: the event's kind.

``verify_signature`` is the receiver's check, for Python receivers and the docs: the signature, in
constant time, and a timestamp within ``TOLERANCE`` seconds of now (a captured request replayed later
is refused).

A delivery that fails (no connection, a timeout, a ``5xx``, ``408``, ``425`` or ``429``) is tried again
a few times at once, after a short growing pause (``Retrying``, honouring ``Retry-After``); if the
receiver is still down the event stays in the durable outbox (``notify.py``), which tries again over
hours. Any other answer that is not ``2xx`` (a ``4xx``, a redirect) is final for this attempt: the
outbox tries again later all the same, since a receiver can be fixed. Only the stdlib is used
(``urllib``), in threads of its own, so neither the event loop nor the store's requests (in the loop's
default pool) wait for a slow receiver.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import inspect
import json
import logging
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from statehitl.errors import StatehitlError
from statehitl.worker.events import Event

logger = logging.getLogger("statehitl.worker")

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
EVENT_HEADER = "X-Statehitl-Event"
TOLERANCE = 300.0
"""Seconds a delivery's ``webhook-timestamp`` may be from the receiver's clock (Standard Webhooks' five minutes)."""
_SCHEME = "v1,"
_RETRIED_STATUSES = frozenset({408, 425, 429})


class WebhookDeliveryError(StatehitlError):
    """A sink did not take an event: the receiver refused it, or every attempt of this round failed."""


def webhook_id(event_id: str) -> str:
    """The ``webhook-id`` of an event: ``msg_`` and 32 hex digits of its id's SHA-256 (an event's own id holds
    dots and slashes, which Standard Webhooks keeps out of the signed content's delimiters)."""
    return "msg_" + hashlib.sha256(event_id.encode()).hexdigest()[:32]


def signing_key(secret: bytes) -> bytes:
    """The HMAC key of a shared secret: a ``whsec_`` secret's base64 after the prefix, else the bytes as given."""
    if secret.startswith(b"whsec_"):
        try:
            return base64.b64decode(secret[len(b"whsec_"):], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("a whsec_ secret is base64 after its prefix") from None
    return secret


def sign(secret: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` of ``body``: ``v1,`` and the base64 HMAC-SHA256 of ``{id}.{timestamp}.{body}``."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    return _SCHEME + base64.b64encode(hmac.new(signing_key(secret), content, hashlib.sha256).digest()).decode()


def verify_signature(secret: bytes, body: bytes, headers: Mapping[str, str], *, tolerance: float = TOLERANCE,
                     now: float | None = None) -> bool:
    """Whether a request with ``headers`` (any case) and ``body`` (the raw bytes received, before any JSON
    parsing) is signed with ``secret`` and recent: its ``webhook-timestamp`` within ``tolerance`` seconds of
    ``now`` (a replay of a captured request is refused), one of its ``webhook-signature`` signatures right
    (compared in constant time)."""
    given = {name.lower(): value for name, value in headers.items()}
    msg_id, stamp, signatures = given.get(ID_HEADER), given.get(TIMESTAMP_HEADER), given.get(SIGNATURE_HEADER)
    if not msg_id or not stamp or not signatures or not stamp.isdigit():
        return False
    if abs((time.time() if now is None else now) - int(stamp)) > tolerance:
        return False
    expected = sign(secret, msg_id, int(stamp), body)
    return any(hmac.compare_digest(candidate, expected) for candidate in signatures.split())


@dataclass(frozen=True)
class Retrying:
    """How one delivery round retries at once: ``attempts`` tries in all, pausing ``backoff`` seconds after
    the first failure, doubling up to ``max_backoff`` (each pause drawn between half and all of that, so
    senders spread). A round that fails leaves the event to the outbox's schedule (``notify.py``)."""

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 5.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts!r}")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("backoff and max_backoff must not be negative")

    def pause(self, failures: int, asked: float | None = None) -> float:
        """The pause after the ``failures``-th failed attempt (``asked``: the receiver's ``Retry-After``)."""
        step = min(self.max_backoff, self.backoff * 2 ** (failures - 1))
        wait = random.uniform(step / 2, step)
        return wait if asked is None else min(self.max_backoff, max(wait, asked))


class Webhook:
    """POST each event to ``url`` (``http`` or ``https``), signed with ``secret`` (see the module docstring)."""

    def __init__(self, url: str, secret: bytes, *, retrying: Retrying | None = None, timeout: float = 10.0) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"a webhook URL is http:// or https:// with a host, not {url!r}")
        if not secret:
            raise ValueError(f"the webhook {url} needs a shared secret to sign its events with")
        signing_key(secret)  # a whsec_ secret that is not base64 is refused here, not at the first event
        self.url = url
        self.secret = secret
        self.retrying = retrying or Retrying()
        self.timeout = timeout

    def request(self, event: Event, sent_at: float) -> urllib.request.Request:
        """The signed POST of ``event`` (its body the payload's compact JSON)."""
        body = json.dumps(event.payload(sent_at), separators=(",", ":"), ensure_ascii=False,
                          default=repr).encode()
        msg_id, stamp = webhook_id(event.id), int(sent_at)
        headers = {"Content-Type": "application/json", "User-Agent": "statehitl-worker", ID_HEADER: msg_id,
                   TIMESTAMP_HEADER: str(stamp), SIGNATURE_HEADER: sign(self.secret, msg_id, stamp, body),
                   EVENT_HEADER: event.kind}
        return urllib.request.Request(self.url, data=body, headers=headers, method="POST")

    def _post(self, request: urllib.request.Request) -> tuple[int, float | None]:
        """One attempt: the status (0: no answer) and the receiver's ``Retry-After`` in seconds, if any."""
        try:
            with _OPENER.open(request, timeout=self.timeout) as answer:
                return int(answer.status), None
        except urllib.error.HTTPError as exc:
            return exc.code, _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            logger.debug("webhook %s: no answer (%s)", self.url, exc)
            return 0, None

    async def __call__(self, event: Event) -> None:
        failures = 0
        while True:
            request = self.request(event, time.time())
            status, asked = await asyncio.get_running_loop().run_in_executor(_POSTS, self._post, request)
            if 200 <= status < 300:
                return
            failures += 1
            retried = status == 0 or status >= 500 or status in _RETRIED_STATUSES
            what = "no answer" if status == 0 else f"HTTP {status}"
            if not retried or failures >= self.retrying.attempts:
                raise WebhookDeliveryError(f"webhook {self.url} did not take event {event.id} ({what}, after "
                                           f"{failures} attempt{'s' if failures > 1 else ''} in a row)")
            pause = self.retrying.pause(failures, asked)
            logger.info("webhook %s: %s for event %s; trying again in %.2fs", self.url, what, event.id, pause)
            await asyncio.sleep(pause)

    def __repr__(self) -> str:
        return f"Webhook({self.url!r})"


class CallableSink:
    """A Python callable (sync or async) taking the ``Event``, retried as a webhook is when it raises."""

    def __init__(self, function: Callable[[Event], Any], *, retrying: Retrying | None = None) -> None:
        self.function = function
        self.retrying = retrying or Retrying()

    async def __call__(self, event: Event) -> None:
        failures = 0
        while True:
            try:
                if inspect.iscoroutinefunction(self.function):
                    await self.function(event)
                else:
                    done = await asyncio.to_thread(self.function, event)
                    if inspect.isawaitable(done):
                        await done
                return
            except Exception as exc:
                failures += 1
                if failures >= self.retrying.attempts:
                    raise WebhookDeliveryError(f"sink {self.function!r} failed on event {event.id} {failures} "
                                               f"times; last: {type(exc).__name__}: {exc}") from exc
                await asyncio.sleep(self.retrying.pause(failures))

    def __repr__(self) -> str:
        return f"CallableSink({self.function!r})"


Sink = Webhook | CallableSink | Callable[[Event], Any]
"""What ``on_interrupt=`` and ``on_answer=`` take: a ``Webhook``, or a callable given the ``Event``."""


def sink_id(sink: Callable[[Event], Awaitable[None]]) -> str:
    """What names a sink in the outbox, the same in every worker: a webhook's URL, a callable's qualified name."""
    if isinstance(sink, Webhook):
        return sink.url
    function = sink.function if isinstance(sink, CallableSink) else sink
    module = getattr(function, "__module__", None) or ""
    return f"{module}:{getattr(function, '__qualname__', None) or type(function).__qualname__}"


def as_sink(sink: Sink) -> Callable[[Event], Awaitable[None]]:
    """``sink`` as one awaitable call that retries (a bare callable is wrapped in ``CallableSink``)."""
    if isinstance(sink, Webhook | CallableSink):
        return sink
    if isinstance(sink, str):
        raise TypeError(f"a webhook sink is Webhook({sink!r}, secret=...): its events are signed with a shared secret")
    if not callable(sink):
        raise TypeError(f"a sink is a Webhook or a callable taking the Event, not {type(sink).__name__}")
    return CallableSink(sink)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not a new place to post: urllib would follow a 302 with a GET."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)

_POSTS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="statehitl-webhook")
"""The threads webhook requests wait in: their own, so a receiver that is slow to answer (up to the timeout)
never holds the loop's default pool, where the store's requests run (boto3's, for every resume)."""


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the backoff's own pause will do
