"""The rule of ``statehitl/__init__.py``'s docstring, held: only public modules have an ``__all__``.

A module is public when a user imports it: pinned by ``test_public_api.py`` or ``test_strands_paths.py``,
at a Strands or LangGraph module's path (``strands.X``/``langgraph.X`` as ``statehitl.X``, the peer
installed beside statehitl), or named by README.md or docs/. An ``__all__`` anywhere else widens the
surface users see for no user: drop it, and import names from the module that defines them.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "src", *sorted((ROOT / "checkpointers").glob("*/src"))]
PINNING = [ROOT / "tests" / "test_public_api.py", ROOT / "tests" / "test_strands_paths.py"]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _modules() -> dict[str, Path]:
    found = {}
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            parts = path.relative_to(source).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _has_all(path: Path) -> bool:
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in node.targets)
               for node in ast.parse(path.read_text()).body)


def _a_peers_path(module: str) -> bool:
    """``statehitl.X`` where Strands or LangGraph has a module ``X`` under its own name."""
    if not module.startswith("statehitl."):
        return False
    tail = module.removeprefix("statehitl")
    for peer in ("strands", "langgraph"):
        try:
            if importlib.util.find_spec(peer + tail) is not None:
                return True
        except ModuleNotFoundError:  # a parent package the peer lacks
            continue
    return False


def _named_by_users(modules: set[str]) -> set[str]:
    """Modules the pinning tests import or name, and those README.md and docs/ import or mention."""
    text = "\n".join(path.read_text() for path in [*PINNING, *DOCS])
    named = set()
    for dotted in re.findall(r"\b((?:statehitl_checkpoint_\w+|statehitl)(?:\.\w+)*)", text):
        parts = dotted.split(".")  # a name in a module (``statehitl.observe.observers``): the module and its parents
        named.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return named & modules


def _public(module: str, named: set[str]) -> bool:
    if any(part.startswith("_") for part in module.split(".")):
        return False
    return "." not in module or module in named or _a_peers_path(module)


def test_only_public_modules_have_an_all() -> None:
    modules = _modules()
    named = _named_by_users(set(modules))
    widened = sorted(m for m, path in modules.items() if _has_all(path) and not _public(m, named))
    assert not widened, ("internal modules with an __all__ (drop it; see statehitl/__init__.py on what is "
                         f"public): {widened}")


def test_the_rule_tells_internal_from_public() -> None:
    named = _named_by_users(set(_modules()))
    assert _public("statehitl.types.tools", named)  # Strands' strands.types.tools
    assert _public("statehitl.graph.message", named)  # LangGraph's langgraph.graph.message
    assert _public("statehitl.worker", named)  # pinned by test_public_api.py
    assert _public("statehitl_checkpoint_s3", named)  # a backend distribution's package
    assert not _public("statehitl.step_run", named)
    assert not _public("statehitl.types._snapshot", named)
