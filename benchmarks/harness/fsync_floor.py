"""The fsync floor: the least a durable write of the same bytes costs on the same disk, timed in the same run.

A framework that fsyncs its checkpoints cannot beat one `write` + `fdatasync` per durable call on the
filesystem it writes to; a framework that never fsyncs (Strands) does not pay it at all. Reporting this
floor beside an on-disk row tells how much of a durable side's time is the disk's and how much its own.
"""

from __future__ import annotations

import os
import time
import weakref
from pathlib import Path

from harness.timing import Trial

_fdatasync = getattr(os, "fdatasync", os.fsync)


def fsync_floor_trial(directory: Path, sizes: list[int]) -> Trial:
    """A new file in `directory`, then per entry of `sizes` one write of that many bytes and one `fdatasync`.

    One entry per durable call of the measured workload (e.g. the two requests of a round trip), each
    the bytes that call wrote; the new file stands for the new session's log, and stays, as the sessions'
    logs do, so the directory grows alike.
    """
    chunks = [b"x" * size for size in sizes]
    directory.mkdir(parents=True, exist_ok=True)

    def trial(label: str) -> float:
        path = directory / f"floor-{label}"
        t0 = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            for chunk in chunks:
                os.write(fd, chunk)
                _fdatasync(fd)
        finally:
            os.close(fd)
        return time.perf_counter() - t0

    return trial


def fsync_floor_in_place_trial(directory: Path, size: int, reserve: int = 1 << 20) -> Trial:
    """One write of `size` bytes and one `fdatasync` per trial, into room an existing file already has.

    The floor of a call that adds to a log which already exists, mid-conversation: the log is there, and a
    durable write that leaves the file's size alone needs no metadata commit (statehitl's file store writes
    zeros ahead of its frames for exactly that, see "The file store" in docs/checkpoints.md). The room is
    made untimed, `reserve` bytes at a time (written and synced), whenever the next write would not fit.
    """
    chunk = b"x" * size
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "floor-in-place", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    state = {"offset": 0, "room": 0}

    def trial(_label: str) -> float:
        if state["offset"] + size > state["room"]:
            grow = max(reserve, size)
            os.pwrite(fd, bytes(grow), state["room"])
            os.fsync(fd)
            state["room"] += grow
        t0 = time.perf_counter()
        os.pwrite(fd, chunk, state["offset"])
        _fdatasync(fd)
        elapsed = time.perf_counter() - t0
        state["offset"] += size
        return elapsed

    weakref.finalize(trial, os.close, fd)  # the file stays open for as long as the trial exists
    return trial
