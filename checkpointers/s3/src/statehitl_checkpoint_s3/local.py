"""Run moto's S3-compatible HTTP server (``moto_server``) on a loopback port, for tests and benchmarks.

The S3 backend is tested and benchmarked over HTTP against a separate server process, not with moto's
in-process mocks, so the requests boto3 builds (conditional headers, checksums, pagination tokens) are
the ones that would go to AWS::

    with MotoServer(log_path) as endpoint_url:
        storage = S3Storage("bucket", endpoint_url=endpoint_url, region_name="us-east-1")

Point every client at that endpoint with ``DUMMY_AWS_ENV`` in the environment (and ``AWS_ENV_TO_CLEAR``
removed from it), and nothing ever reaches AWS. moto is not a dependency of this package: the server
runs ``python -m statehitl_checkpoint_s3.local`` in a subprocess, which needs ``moto[server]`` (the
workspace's dev group has it), so importing this module or the backend never imports moto.

That subprocess is moto's own ``moto.server.main`` with S3's atomic conditional writes. moto_server
checks a PutObject's ``If-None-Match: *`` / ``If-Match: <etag>`` and then stores the object in two
separate steps, on a threaded HTTP server with no lock between them, so two concurrent conditional PUTs
on one key can both pass the check, and racing writers occasionally both win. S3 evaluates the
condition and the write atomically, and the backend's one-winner guarantee rests on exactly that. So
requests that change state (PUT, POST, DELETE) run one at a time; reads and listings stay concurrent.
Everything else is moto's server as shipped.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from statehitl.testing.local_server import free_port, port_taken, stop_process

__all__ = ["AWS_ENV_TO_CLEAR", "DUMMY_AWS_ENV", "MotoServer", "MotoServerError", "free_port", "serve"]

DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",  # never probe an instance role
    "AWS_CONFIG_FILE": os.devnull,  # never pick up a developer's real profile
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
"""Credentials and settings for every client of a local server (and the subprocesses they start).

The key is alphanumeric because DynamoDB Local refuses any other, so the same settings serve both.
"""

AWS_ENV_TO_CLEAR = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")
"""Variables that would send clients to a real account or endpoint despite ``DUMMY_AWS_ENV``."""

_MODULE = "statehitl_checkpoint_s3.local"
"""This module's import name: ``__name__`` is ``__main__`` in the server process."""

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class MotoServerError(RuntimeError):
    """moto is not installed, or moto_server did not start."""


class MotoServer:
    """One moto_server process: ``start()`` returns its endpoint URL, ``stop()`` ends it.

    Also a context manager. Its output goes to ``log``; ``env`` adds to the environment it inherits
    (moto reads its settings there, e.g. ``INITIAL_NO_AUTH_ACTION_COUNT`` to enforce IAM policies).
    ``port=None`` picks a free loopback port; a port someone already listens on is ``MotoServerError``.
    """

    def __init__(self, log: str | os.PathLike[str], *, env: Mapping[str, str] | None = None,
                 startup_timeout: float = 60.0, port: int | None = None) -> None:
        self.log = Path(log)
        self.env = dict(env or {})
        self.startup_timeout = startup_timeout
        self.port: int | None = port
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The server's command line: this interpreter, running this module on ``port``."""
        return [sys.executable, "-m", _MODULE, "-H", "127.0.0.1", "-p", str(self.port)]

    def start(self) -> str:
        """Start the server and wait until it answers HTTP; returns the endpoint URL."""
        if self.process is not None:
            return self.endpoint_url
        if importlib.util.find_spec("moto") is None:
            raise MotoServerError("moto_server needs moto: pip install 'moto[server]'")
        if self.port is None:
            self.port = free_port()
        elif port_taken(self.port):
            raise MotoServerError(f"cannot start moto_server on port {self.port}: something already listens there; "
                                  "pick another port, or none for a free one")
        with self.log.open("wb") as sink:  # the child keeps its own handle; a pipe nobody reads would fill up
            self.process = subprocess.Popen(self.command(), stdout=sink, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env={**os.environ, **self.env})
        try:
            self._wait_until_up(self.process)
        except BaseException:
            self.stop()
            raise
        return self.endpoint_url

    def _wait_until_up(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise MotoServerError(f"moto_server exited with {process.returncode}:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        raise MotoServerError(f"moto_server did not answer on {self.endpoint_url} within {self.startup_timeout}s:\n"
                              f"{self.log.read_text()}")

    def stop(self) -> None:
        """Ask the server to stop (SIGTERM), and kill it if it does not within ten seconds."""
        process, self.process = self.process, None
        stop_process(process)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _serialize_writes(app: WSGIApp) -> WSGIApp:
    """Run state-changing requests of ``app`` one at a time, response body included."""
    writes = threading.Lock()

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in ("PUT", "POST", "DELETE"):
            return app(environ, start_response)
        with writes:
            return list(app(environ, start_response))

    return guarded


def serve(argv: Sequence[str]) -> None:
    """``moto.server.main(argv)`` (``-H HOST -p PORT`` ...) with state-changing requests serialized."""
    import moto.server
    from werkzeug.serving import run_simple

    def run_serialized(host: str, port: int, app: WSGIApp, **options: Any) -> None:
        run_simple(host, port, _serialize_writes(app), **options)

    # main() calls werkzeug's run_simple by this module-level name: the one hook into the server it builds
    moto.server.run_simple = run_serialized  # type: ignore[attr-defined,assignment]
    moto.server.main(list(argv))


if __name__ == "__main__":
    serve(sys.argv[1:])
