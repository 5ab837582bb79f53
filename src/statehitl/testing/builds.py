"""``build`` functions that misbehave on purpose, to test how your app fares under the inbox and a worker.

A worker (``statehitl worker --app module:build``) calls your ``build(thread_id)`` for every thread it
resumes, and the inbox does with ``--app``. In production ``build`` opens connections, reads
configuration, builds an agent: it can be slow, and it can fail once (a database that is restarting).
Wrap your own ``build`` to see what the worker does then, in the same subprocess your deployment runs:

- ``SlowBuild(build, seconds)`` takes ``seconds`` before every app it builds; a worker keeps resuming
  other threads meanwhile (it calls ``build`` off its event loop).
- ``FailingBuild(build, failures=1)`` raises for the first ``failures`` calls of each thread, then
  builds; a worker tries such a thread again after a growing pause, never in a tight loop, and a
  stream-fed worker without being told of another write. With ``state_dir`` the count is kept in
  files there, so it holds across the processes of a test (a worker restarted, several workers).

Both are plain callables: assign one to a module attribute and name it with ``--app module:attribute``::

    # myapp/testing_build.py
    import os
    from statehitl.testing.builds import FailingBuild
    from myapp.worker import build as real_build

    build = FailingBuild(real_build, failures=1, state_dir=os.environ["FLAKY_BUILD_DIR"])
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

__all__ = ["BuildFailed", "FailingBuild", "SlowBuild"]


class BuildFailed(RuntimeError):
    """What ``FailingBuild`` raises (unless given its own error): a build that failed on purpose."""


class SlowBuild:
    """``build``, taking ``seconds`` (a blocking sleep, as slow I/O in a sync build blocks) before each app."""

    def __init__(self, build: Callable[[str], object], seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"seconds must not be negative, got {seconds!r}")
        self.build = build
        self.seconds = seconds

    def __call__(self, thread_id: str) -> object:
        time.sleep(self.seconds)
        return self.build(thread_id)


class FailingBuild:
    """``build``, raising for the first ``failures`` calls of each thread (``error``, or ``BuildFailed``).

    ``calls`` counts each thread's calls in this process; with ``state_dir`` the count is files in that
    directory (``<thread>.<n>``, created once each), shared by every process that wraps the same way.
    """

    def __init__(self, build: Callable[[str], object], *, failures: int = 1, error: Exception | None = None,
                 state_dir: str | os.PathLike[str] | None = None) -> None:
        if failures < 0:
            raise ValueError(f"failures must not be negative, got {failures!r}")
        self.build = build
        self.failures = failures
        self.error = error
        self.state_dir = None if state_dir is None else Path(state_dir)
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, thread_id: str) -> object:
        call = self._count(thread_id)
        if call <= self.failures:
            raise self.error if self.error is not None else BuildFailed(
                f"build({thread_id!r}) failed on purpose (call {call} of the {self.failures} that fail)")
        return self.build(thread_id)

    def _count(self, thread_id: str) -> int:
        """This call's number for ``thread_id``, from 1."""
        with self._lock:
            self.calls[thread_id] += 1
            if self.state_dir is None:
                return self.calls[thread_id]
        self.state_dir.mkdir(parents=True, exist_ok=True)
        number = 1
        while True:
            try:
                os.close(os.open(self.state_dir / f"{thread_id}.{number}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                return number
            except FileExistsError:
                number += 1
