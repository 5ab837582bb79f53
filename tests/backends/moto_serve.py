"""``python moto_serve.py -H HOST -p PORT``: moto's own server, with S3's atomic conditional writes.

moto_server checks a PutObject's ``If-None-Match: *`` / ``If-Match: <etag>`` and then stores the
object in two separate steps, on a threaded HTTP server with no lock between them, so two concurrent
conditional PUTs on one key can both pass the check (measured here: 20 writers racing on one key
produced two winners in 4 of 1400 races, with If-None-Match and with If-Match). S3 evaluates the
condition and the write atomically, and the backend's one-winner guarantee rests on exactly that. So
this launcher runs ``moto.server.main`` unchanged except that requests which change state (PUT, POST,
DELETE) run one at a time; reads and listings stay concurrent. Everything else is moto's server as
shipped.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

import moto.server
from werkzeug.serving import run_simple

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_writes = threading.Lock()


def serialize_writes(app: WSGIApp) -> WSGIApp:
    """Run state-changing requests of ``app`` one at a time, response body included."""

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in ("PUT", "POST", "DELETE"):
            return app(environ, start_response)
        with _writes:
            return list(app(environ, start_response))

    return guarded


def run_serialized(host: str, port: int, app: WSGIApp, **options: Any) -> None:
    run_simple(host, port, serialize_writes(app), **options)


if __name__ == "__main__":
    moto.server.run_simple = run_serialized  # type: ignore[assignment]
    moto.server.main(sys.argv[1:])
