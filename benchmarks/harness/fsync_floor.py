"""The fsync floor: the least a durable write of the same bytes costs on the same disk, timed in the same run.

A framework that fsyncs its checkpoints cannot beat one `write` + `fdatasync` per durable call on the
filesystem it writes to; a framework that never fsyncs (Strands) does not pay it at all. Reporting this
floor beside an on-disk row tells how much of a durable side's time is the disk's and how much its own.
"""

from __future__ import annotations

import os
import time
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
