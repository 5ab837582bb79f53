"""A real ``statehitl inbox serve`` process for the browser and serve tests, resuming through
``--app inbox_app:build`` on the test's store."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from inbox_app import LOG_ENV, STORE_ENV

HERE = Path(__file__).resolve().parent


class Served:
    """The running server: its process, the address it announced, and its stderr (a file, so reading
    it never waits on the process; its warnings are written before the announcement)."""

    def __init__(self, process: subprocess.Popen[str], url: str, port: int, err: IO[str]) -> None:
        self.process = process
        self.url = url
        self.port = port
        self._err = err

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read()


def serve(store: str, log: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """Start the server on a free port with ``extra`` options; stop it (SIGTERM, exit code 0) after."""
    environment = {**os.environ, STORE_ENV: store, LOG_ENV: str(log), "NO_COLOR": "1",
                   "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]), **(env or {})}
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([sys.executable, "-m", "statehitl.cli", "inbox", "serve", "--store", store,
                                    "--port", "0", "--app", "inbox_app:build", *extra],
                                   env=environment, stdout=subprocess.PIPE, stderr=err, text=True)
        started = False
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = re.search(r"at (http://(\S+?):(\d+))/", line)
            if found is None:
                process.kill()
                process.communicate()
                err.seek(0)
                raise AssertionError(f"inbox serve did not start: {line!r} {err.read()}")
            started = True
            yield Served(process, found.group(1), int(found.group(3)), err)
        finally:
            if started:
                process.terminate()
                process.communicate(timeout=30)
                assert process.returncode == 0
            elif process.poll() is None:
                process.kill()
                process.communicate()
