""""Install this" hints: each one a command that works where it is printed (statehitl._install)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from statehitl._install import install_command, install_command_for
from statehitl.checkpoint import Checkpointer
from statehitl.errors import CheckpointerNotFoundError
from statehitl.session import S3SessionManager

ROOT = Path(__file__).resolve().parents[1]


def checkout(tmp_path: Path) -> Path:
    """A directory laid out as a checkout of this repository, with its uv venv."""
    root = tmp_path / "repo"
    (root / "src" / "statehitl").mkdir(parents=True)
    (root / "checkpointers").mkdir()
    (root / "dev.sh").write_text("#!/bin/sh\n")
    venv(root / ".venv", uv=True)
    return root


def venv(prefix: Path, *, uv: bool) -> Path:
    prefix.mkdir(parents=True)
    made_by = "uv = 0.13.9\n" if uv else ""
    (prefix / "pyvenv.cfg").write_text(f"home = /usr/bin\nimplementation = CPython\n{made_by}version_info = 3.11.7\n")
    return prefix


def installed(tmp_path: Path) -> Path:
    """Where an installer puts statehitl in a venv: no dev.sh two levels up."""
    package = tmp_path / "site-packages" / "statehitl"
    package.mkdir(parents=True)
    return package


def test_a_checkout_says_dev_sh_sync(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    package, prefix = root / "src" / "statehitl", root / ".venv"

    assert install_command_for("s3", package=package, prefix=prefix, cwd=root) == "./dev.sh sync"
    elsewhere = install_command_for("s3", package=package, prefix=prefix, cwd=tmp_path)
    assert elsewhere == f"{root / 'dev.sh'} sync"


def test_a_checkout_run_from_another_venv_says_where_dev_sh_installs(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    other = venv(tmp_path / "other-venv", uv=False)

    hint = install_command_for("dynamodb", package=root / "src" / "statehitl", prefix=other, cwd=root)

    assert hint == f"./dev.sh sync (it installs into {root / '.venv'}; run statehitl from there)"


def test_a_uv_project_says_uv_add(tmp_path: Path) -> None:
    project = tmp_path / "app"
    prefix = venv(project / ".venv", uv=True)
    (project / "uv.lock").write_text("version = 1\n")
    (project / "pkg").mkdir()
    package = installed(tmp_path)

    assert install_command_for("s3", package=package, prefix=prefix, cwd=project / "pkg") == "uv add 'statehitl[s3]'"
    assert install_command_for("s3", package=package, prefix=prefix, cwd=tmp_path) == (
        f"uv add --project {project} 'statehitl[s3]'"
    )


def test_a_venv_made_by_uv_outside_a_project_says_uv_pip(tmp_path: Path) -> None:
    prefix = venv(tmp_path / "env", uv=True)

    hint = install_command_for("bedrock", package=installed(tmp_path), prefix=prefix, cwd=tmp_path)

    assert hint == "uv pip install 'statehitl[bedrock]'"


@pytest.mark.parametrize("made", ["plain venv", "no venv"])
def test_anywhere_else_says_pip_install(tmp_path: Path, made: str) -> None:
    prefix = venv(tmp_path / "env", uv=False) if made == "plain venv" else tmp_path / "usr"

    hint = install_command_for("dynamodb", package=installed(tmp_path), prefix=prefix, cwd=tmp_path)

    assert hint == "pip install 'statehitl[dynamodb]'"


def test_this_checkout_is_recognized() -> None:
    """The suite runs from the repository's own .venv (./dev.sh test), so the hints name dev.sh."""
    hint = install_command("s3")
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not run from {ROOT / '.venv'}")
    assert hint in ("./dev.sh sync", f"{ROOT / 'dev.sh'} sync")


def test_missing_backend_messages_carry_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.metadata.entry_points", lambda **kwargs: [])
    with pytest.raises(CheckpointerNotFoundError) as err:
        Checkpointer.from_url("s3://bucket")
    assert str(err.value).endswith(f"; install it with: {install_command('s3')}")

    monkeypatch.setitem(sys.modules, "statehitl_checkpoint_s3", None)  # as if not installed
    with pytest.raises(CheckpointerNotFoundError) as err:
        S3SessionManager(session_id="s", bucket="b")
    assert str(err.value) == f"S3SessionManager needs the S3 backend; install it with: {install_command('s3')}"
