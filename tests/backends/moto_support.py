"""Run a real ``moto_server`` (moto's S3-compatible HTTP server) on a loopback port for the S3 tests.

The S3 backend is tested over HTTP against a separate server process, not with moto's in-process
mocks, so the requests boto3 builds (conditional headers, checksums, pagination tokens) are the ones
that would go to AWS. Nothing here ever talks to AWS: every client is pointed at the loopback endpoint.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",  # never probe an instance role
    "AWS_CONFIG_FILE": os.devnull,  # never pick up a developer's real profile
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
"""Credentials and settings for every client in the tests (and the subprocesses they start)."""

AWS_ENV_TO_CLEAR = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")

STARTUP_TIMEOUT = 60.0

LAUNCHER = Path(__file__).with_name("moto_serve.py")
"""moto's own ``moto.server.main``, with state-changing requests serialized (see that file for why)."""


def free_port() -> int:
    """A TCP port nothing listens on right now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class MotoServer:
    """One moto server process (``moto_serve.py``); ``endpoint`` is its ``http://127.0.0.1:PORT``."""

    process: subprocess.Popen[bytes]
    endpoint: str
    log: Path

    @classmethod
    def start(cls, log: Path, *, env: dict[str, str] | None = None) -> MotoServer:
        """Start the server and wait until it answers HTTP; its output goes to ``log``."""
        port = free_port()
        with log.open("wb") as sink:  # the child keeps its own handle; a pipe nobody reads would fill up
            process = subprocess.Popen(
                [sys.executable, str(LAUNCHER), "-H", "127.0.0.1", "-p", str(port)],
                stdout=sink,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
            )
        server = cls(process, f"http://127.0.0.1:{port}", log)
        try:
            server._wait_until_up()
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self.process.returncode}:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        raise RuntimeError(f"moto_server did not answer on {self.endpoint} within {STARTUP_TIMEOUT}s:\n"
                           f"{self.log.read_text()}")

    def stop(self) -> None:
        """Ask the server to stop (SIGTERM), and kill it if it does not within ten seconds."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        with contextlib.suppress(OSError):
            if self.process.stdout:
                self.process.stdout.close()
