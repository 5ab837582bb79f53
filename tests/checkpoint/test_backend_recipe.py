"""docs/backends.md, "Write your own backend", run exactly as written: its backend package, its
``pyproject.toml`` entry point and its test module are taken from the page, installed into a
directory the way an installer would, and run with pytest through the whole conformance kit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from statehitl.testing.conformance import StorageConformance

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "backends.md"
SECTION = "## Write your own backend"
FILES = {"statehitl_checkpoint_dict/__init__.py", "pyproject.toml", "tests/test_dict_storage.py"}
BLOCK = re.compile(r"^```(?:python|toml)\n# (?P<path>\S+)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def recipe() -> dict[str, str]:
    """The section's code blocks that open with ``# <path>``, by path (the rest of each block is the file)."""
    text = DOC.read_text()
    assert SECTION in text, f"{DOC} has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return {m["path"]: m["body"] for m in BLOCK.finditer(section)}


def install(files: dict[str, str], into: Path) -> None:
    """Write the files, and the ``.dist-info`` a wheel install would, with the pyproject's entry points."""
    for path, body in files.items():
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_text(body)
    project = tomllib.loads(files["pyproject.toml"])["project"]
    info = into / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = "".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in project["entry-points"].items()
    )
    (info / "entry_points.txt").write_text(groups)


def test_the_documented_backend_passes_the_conformance_kit(tmp_path: Path) -> None:
    files = recipe()
    assert set(files) == FILES
    install(files, tmp_path)
    # The project's lint rules, except import grouping: in the reader's project statehitl is third-party.
    sources = sorted(path for path in FILES if path.endswith(".py"))
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
         "--ignore", "I001", *sources],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-W", "error", "-p", "no:cacheprovider", "tests/test_dict_storage.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    own = files["tests/test_dict_storage.py"].count("\ndef test_")
    assert summary.startswith(f"{kit_size() + own} passed in "), f"the kit did not run whole: {summary}"


def kit_size() -> int:
    """How many tests ``StorageConformance`` gives a subclass (each parametrized one counted per case)."""
    total = 0
    for name in dir(StorageConformance):
        if name.startswith("test_"):
            cases = 1
            for mark in getattr(getattr(StorageConformance, name), "pytestmark", []):
                if mark.name == "parametrize":
                    cases *= len(mark.args[1])
            total += cases
    return total
