"""The command that installs an optional part of statehitl, worded for the environment that lacks it.

A "backend missing" message is only worth printing if its command works where it is read, and
``pip install 'statehitl[s3]'`` often does not: a venv made by uv has no pip (and the next ``uv sync``
would remove what pip added anyway), and in a checkout of this repository the backends are workspace
packages that no index serves. So the hint looks at where statehitl runs from:

- a checkout (``dev.sh`` next to ``src/``): ``./dev.sh sync``, which installs the whole workspace,
  every backend and extra, into the checkout's ``.venv``;
- a uv project's venv: ``uv add 'statehitl[s3]'``, which the project's next ``uv sync`` keeps;
- another venv made by uv: ``uv pip install 'statehitl[s3]'``;
- anywhere else: ``pip install 'statehitl[s3]'``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def install_command(extra: str) -> str:
    """The command that installs ``statehitl[extra]`` into the environment this process runs in."""
    return install_command_for(extra, package=Path(__file__).resolve().parent, prefix=Path(sys.prefix),
                               cwd=Path.cwd())


def install_command_for(extra: str, *, package: Path, prefix: Path, cwd: Path) -> str:
    """The command for an environment described by hand: ``package`` is the directory statehitl is
    imported from, ``prefix`` the venv (``sys.prefix``), ``cwd`` where the user will type the command."""
    root = package.parent.parent
    if (root / "dev.sh").is_file() and (root / "checkpointers").is_dir():
        command = f"{'./dev.sh' if _same(cwd, root) else shlex.quote(str(root / 'dev.sh'))} sync"
        venv = root / ".venv"
        if _same(prefix, venv):
            return command
        return f"{command} (it installs into {venv}; run statehitl from there)"
    requirement = shlex.quote(f"statehitl[{extra}]")
    if not _made_by_uv(prefix):
        return f"pip install {requirement}"
    project = prefix.parent
    if (project / "uv.lock").is_file():
        where = "" if _inside(cwd, project) else f"--project {shlex.quote(str(project))} "
        return f"uv add {where}{requirement}"
    return f"uv pip install {requirement}"


def _inside(path: Path, directory: Path) -> bool:
    """Whether ``path`` is ``directory`` or below it (uv finds a project from any directory in it)."""
    try:
        path.resolve().relative_to(directory.resolve())
    except (ValueError, OSError):
        return False
    return True


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _made_by_uv(prefix: Path) -> bool:
    """Whether the venv at ``prefix`` was made by uv, which writes its version into ``pyvenv.cfg``."""
    try:
        lines = (prefix / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return any(line.partition("=")[0].strip() == "uv" for line in lines)
