"""What the local test servers (moto_server for S3, DynamoDB Local) share: a free port, a clean stop.

The backends' ``local`` modules start real servers on loopback for tests and benchmarks; the port and
process handling is the same for both, so it lives here once.
"""

from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A TCP port nothing listens on right now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def port_taken(port: int) -> bool:
    """Whether something listens on loopback ``port`` (``SO_REUSEADDR``: a closed server's TIME_WAIT is no owner)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def stop_process(process: subprocess.Popen[bytes] | subprocess.Popen[str] | None, grace: float = 10) -> None:
    """Ask a server process to stop (SIGTERM), and kill it if it has not within ``grace`` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)
