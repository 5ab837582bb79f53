"""Cold import: how long a fresh interpreter takes to import a framework, less its own start-up."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.peers import Peer, Row

BASELINE = "pass"
"""What the baseline interpreter runs; its median is subtracted from every import's time."""


def bytecode_cache_env(cache_dir: Path) -> dict[str, str]:
    """Environment for the import subprocesses: .pyc files on, kept in a private dir.

    uv installs packages without compiling them and some environments set
    PYTHONDONTWRITEBYTECODE, so by default every fresh interpreter would
    re-compile every module from source, which measures the compiler, not the
    import. A private PYTHONPYCACHEPREFIX gives both sides a warm bytecode cache
    without writing __pycache__ dirs into src/ or the venv.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache_dir)
    return env


def time_subprocess(code: str, env: dict[str, str]) -> float:
    """Wall time of a fresh interpreter (this venv's python) running `code`."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"`python -c {code!r}` failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def measure_cold_imports(runs: int, snippets: dict[str, str], cache_dir: Path) -> dict[str, list[float]]:
    """Seconds per run of the baseline and of each snippet, interleaved so slow drift (page cache, CPU
    clocks) hits all equally.

    One unrecorded round first fills the bytecode cache, so every recorded run
    is a normal interpreter start with .pyc files and a warm page cache.
    """
    env = bytecode_cache_env(cache_dir)
    codes = {"baseline": BASELINE, **snippets}
    for code in codes.values():
        time_subprocess(code, env)
    samples: dict[str, list[float]] = {name: [] for name in codes}
    for _ in range(runs):
        for name, code in codes.items():
            samples[name].append(time_subprocess(code, env))
    return samples


def cold_import_ms(runs: int, snippets: dict[str, str], workdir: Path) -> tuple[dict[str, list[float]], float]:
    """Cold import times (ms) of each snippet, minus the median baseline; and that median (ms)."""
    raw = measure_cold_imports(runs, snippets, workdir / "pycache")
    baseline = statistics.median(raw["baseline"])
    return {name: [(s - baseline) * 1e3 for s in raw[name]] for name in snippets}, baseline * 1e3


def cold_import_row(
    peer: Peer, name: str, runs: int, snippets: dict[str, str], sides: list[str], workdir: Path
) -> tuple[Row, float]:
    """The row of `snippets` (code per side) for the measured `sides`, reported as done; and the baseline (ms)."""
    ms, baseline_ms = cold_import_ms(runs, {side: snippets[side] for side in sides}, workdir)
    row = peer.row(name, "ms", ms)
    peer.progress(row)
    return row, baseline_ms
