"""The README's commands on a copy of the repository: none of them undoes what another installed.

The copy gets its own ``.venv`` (from uv's cache, so this does not touch the shared one), set up as
``./dev.sh test`` leaves it (the whole workspace) plus one package no command asks for, standing for
the peers ``./dev.sh bench`` adds. Then the README's other commands run, in order, as a user types them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600  # a safety net against hangs; an install from uv's cache takes seconds
KEPT = "import statehitl_checkpoint_s3, statehitl_checkpoint_dynamodb, importlib.metadata as m; m.version('planted')"


def uv() -> list[str]:
    """uv as dev.sh finds it: on PATH, else as python3's module."""
    found = shutil.which("uv")
    return [found] if found else ["python3", "-m", "uv"]


def copy_repo(into: Path) -> Path:
    """What ``uv sync`` and ``dev.sh`` need of the repository, without its venv, caches or stores."""
    into.mkdir()
    for name in ("pyproject.toml", "uv.lock", "README.md", "dev.sh"):
        shutil.copy2(ROOT / name, into / name)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", ".statehitl")
    for name in ("src", "checkpointers"):
        shutil.copytree(ROOT / name, into / name, ignore=junk)
    return into


def plant(venv: Path) -> None:
    """A distribution no command of the workspace asks for (as the bench group's peers are to the others)."""
    site = next(venv.glob("lib/python3*/site-packages"))
    info = site / "planted-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("planted-1.0.dist-info/METADATA,,\nplanted-1.0.dist-info/INSTALLER,,\n"
                                 "planted-1.0.dist-info/RECORD,,\n")


def test_the_readme_commands_keep_what_the_others_installed(tmp_path: Path) -> None:
    repo = copy_repo(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    env["NO_COLOR"] = "1"

    def run(*args: str, stdin: str = "") -> str:
        done = subprocess.run(list(args), cwd=repo, env=env, input=stdin, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
        assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done.stdout

    def still_installed(after: str) -> None:
        done = subprocess.run([str(repo / ".venv/bin/python"), "-c", KEPT], capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
        assert done.returncode == 0, f"after {after}: {done.stderr}"

    run(*uv(), "sync", "--quiet", "--all-packages")  # what ./dev.sh test installs
    plant(repo / ".venv")
    still_installed("the setup")

    demo = run("./dev.sh", "demo", "--thread", "t-readme", stdin="y\n")  # printf 'y\n' | ./dev.sh demo
    assert "Refund of $120.00 paid to Ada Lovelace (approved)." in demo
    still_installed("./dev.sh demo")

    listed = run("./dev.sh", "cli", "threads", "list")
    assert listed.splitlines()[1].split()[:2] == ["t-readme", "completed"]
    still_installed("./dev.sh cli threads list")

    run("./dev.sh", "sync")  # what the "install this" hints of a checkout say (statehitl._install)
    still_installed("./dev.sh sync")
    assert (repo / ".venv").resolve() != Path(sys.prefix).resolve()  # the shared venv was not touched
