"""Where a run happens, and where what it measured goes.

Every results JSON starts with an `environment`: the machine, the versions measured, the scratch
directory (its filesystem sets what an fsync costs) and the load average at the start and the end, since
a busy machine makes the absolute numbers noisy.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def base_environment() -> dict[str, Any]:
    """What every benchmark's JSON records first about where it ran; each script adds its own keys."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
    }


def filesystem(path: str | Path) -> str:
    """The type of the filesystem `path` is on (`ext4`, `tmpfs`, ...), from /proc/mounts; `unknown` elsewhere.

    It sets what an fsync costs: free on tmpfs, a device flush on a disk.
    """
    try:
        mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    real = os.path.realpath(path)
    best = ("", "unknown")
    for mount_point, fstype in mounts:
        inside = real == mount_point or real.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best[0]):
            best = (mount_point, fstype)
    return best[1]


def version(distribution: str) -> str:
    """The installed version of `distribution`, or `unknown`."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@contextlib.contextmanager
def scratch_dir(parent: str | None) -> Iterator[Path]:
    """Temp dir for checkpoint files; `--tmpdir` lets you pick the filesystem (fsync cost)."""
    with tempfile.TemporaryDirectory(prefix="statehitl-bench-", dir=parent) as d:
        yield Path(d)


def write_results(path: Path, payload: dict[str, Any]) -> None:
    """Add the load average at the end to `payload["environment"]`, write the JSON to `path`, and say so."""
    payload["environment"]["loadavg_at_end"] = os.getloadavg()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path}", file=sys.stderr)
