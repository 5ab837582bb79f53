"""Sinks: where a worker's events go. A Python callable, or a webhook URL POSTed JSON signed with HMAC.

A webhook is sent the event's JSON (``Event.payload``) as the body, with

- ``X-Statehitl-Signature: sha256=<hex>``, the HMAC-SHA256 of the exact body bytes under the shared
  secret (the header names its scheme, so another can follow without breaking receivers);
- ``X-Statehitl-Event`` (the kind) and ``X-Statehitl-Event-Id`` (the event's id, also in the body),
  so a receiver that got an event twice (see ``notify.py`` for when) can tell.

The body holds ``sent_at``, so a receiver that also refuses old bodies is safe from replays of a
captured request. ``verify_signature`` is the receiver's check, for Python receivers and the docs.

A delivery that fails (no connection, a timeout, a ``5xx``, ``408``, ``425`` or ``429``) is tried again
after an exponentially growing pause (honouring ``Retry-After``), up to ``attempts`` tries; any other
answer that is not ``2xx`` is final, since sending the same request again would get the same answer. A
callable sink is retried the same way when it raises. Only the stdlib is used (``urllib``), in a worker
thread, so the event loop keeps resuming threads while a slow receiver answers.
"""

from __future__ import annotations

import asyncio
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from statehitl.errors import StatehitlError
from statehitl.worker.events import Event

__all__ = [
    "EVENT_HEADER", "EVENT_ID_HEADER", "SIGNATURE_HEADER", "CallableSink", "Retrying", "Sink", "Webhook",
    "WebhookDeliveryError", "as_sink", "sign", "verify_signature",
]

logger = logging.getLogger("statehitl.worker")

SIGNATURE_HEADER = "X-Statehitl-Signature"
EVENT_HEADER = "X-Statehitl-Event"
EVENT_ID_HEADER = "X-Statehitl-Event-Id"
_SCHEME = "sha256="
_RETRIED_STATUSES = frozenset({408, 425, 429})


class WebhookDeliveryError(StatehitlError):
    """A sink did not take an event: the receiver refused it for good, or every attempt failed."""


def sign(secret: bytes, body: bytes) -> str:
    """The signature header's value for ``body``: ``sha256=`` and the hex HMAC-SHA256 under ``secret``."""
    return _SCHEME + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    """Whether ``header`` (the request's ``X-Statehitl-Signature``) signs ``body`` (the raw bytes received,
    before any JSON parsing) under ``secret``; compared in constant time."""
    if not header or not header.startswith(_SCHEME):
        return False
    return hmac.compare_digest(header, sign(secret, body))


@dataclass(frozen=True)
class Retrying:
    """How a sink retries: ``attempts`` tries in all, pausing ``backoff`` seconds after the first failure,
    doubling up to ``max_backoff`` (each pause drawn between half and all of that, so senders spread)."""

    attempts: int = 6
    backoff: float = 0.5
    max_backoff: float = 30.0

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
        self.url = url
        self.secret = secret
        self.retrying = retrying or Retrying()
        self.timeout = timeout

    def request(self, event: Event, sent_at: float) -> urllib.request.Request:
        """The signed POST of ``event`` (its body the payload's compact JSON)."""
        body = json.dumps(event.payload(sent_at), separators=(",", ":"), ensure_ascii=False,
                          default=repr).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "statehitl-worker",
                   SIGNATURE_HEADER: sign(self.secret, body), EVENT_HEADER: event.kind, EVENT_ID_HEADER: event.id}
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
            status, asked = await asyncio.to_thread(self._post, self.request(event, time.time()))
            if 200 <= status < 300:
                return
            failures += 1
            retried = status == 0 or status >= 500 or status in _RETRIED_STATUSES
            what = "no answer" if status == 0 else f"HTTP {status}"
            if not retried or failures >= self.retrying.attempts:
                raise WebhookDeliveryError(f"webhook {self.url} did not take event {event.id} ({what}, after "
                                           f"{failures} attempt{'s' if failures > 1 else ''})")
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


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the backoff's own pause will do
