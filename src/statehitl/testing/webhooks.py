"""A webhook receiver for tests: a real HTTP server on loopback that checks each delivery as a receiver
should, keeps what it accepted, and can be down.

A worker's webhooks (``statehitl worker --on-answer URL``) are signed as Standard Webhooks says; the
receiver verifies each request with ``statehitl.worker.verify_signature`` (the signature, and that the
delivery is recent), drops a copy it already took (by ``webhook-id``, as a receiver must: an event can
arrive twice), and answers::

    with WebhookReceiver(b"secret") as receiver:
        receiver.down()                  # refuse everything (503), as a receiver being deployed does
        ... start the worker with --on-answer receiver.url, answer something ...
        receiver.up()                    # the outbox delivers it on its next round
        wait until receiver.events

``down(status=503)`` makes it answer ``status`` to every request until ``up()``; ``hang()`` holds every
request unanswered until ``up()`` or ``down()`` (a receiver that stopped answering: where a test kills
the worker that is delivering); ``fail=[...]`` answers the first requests with those statuses.
``events`` are the payloads it accepted, each once, in order; ``copies`` counts deliveries of an event
it already had, ``bad_signatures`` those it refused.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from statehitl.worker.webhook import ID_HEADER, verify_signature

__all__ = ["WebhookReceiver"]


class WebhookReceiver:
    """See the module docstring. ``url`` is where to send; use it as a context manager (it serves inside)."""

    def __init__(self, secret: bytes, *, fail: Sequence[int] = ()) -> None:
        self.secret = secret
        self.fail = list(fail)
        self.events: list[dict[str, Any]] = []
        self.requests = 0
        self.copies = 0
        self.bad_signatures = 0
        self._down: int | None = None
        self._answering = threading.Event()
        self._answering.set()
        self.held = 0
        """Requests held unanswered by ``hang()`` so far."""
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def down(self, status: int = 503) -> None:
        """Answer ``status`` to every delivery until ``up()`` (held ones too)."""
        with self._lock:
            self._down = status
        self._answering.set()

    def up(self) -> None:
        """Take deliveries again (held ones too)."""
        with self._lock:
            self._down = None
        self._answering.set()

    def hang(self) -> None:
        """Hold every delivery unanswered until ``up()`` or ``down()``."""
        self._answering.clear()

    def ids(self, kind: str | None = None) -> list[str]:
        """The ``id`` of each event accepted (of ``kind``, if given), in order."""
        with self._lock:
            return [e["id"] for e in self.events if kind is None or e["event"] == kind]

    def receive(self, body: bytes, headers: dict[str, str]) -> int:
        """The status to answer a delivery with, keeping its event if accepted."""
        if not self._answering.is_set():
            with self._lock:
                self.held += 1
            self._answering.wait(timeout=120)
        with self._lock:
            self.requests += 1
            status = self._down if self._down is not None else (self.fail.pop(0) if self.fail else 200)
            if status != 200:
                return status
            if not verify_signature(self.secret, body, headers):
                self.bad_signatures += 1
                return 401
            msg_id = {k.lower(): v for k, v in headers.items()}[ID_HEADER]
            if msg_id in self._seen:
                self.copies += 1
                return 200
            self._seen.add(msg_id)
            self.events.append(json.loads(body))
            return 200

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = receiver.receive(body, dict(self.headers.items()))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: a test reads ``events`` and the counts."""

        return Handler
