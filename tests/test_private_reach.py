"""No module reaches into another module's private members: where one needs something of another, that
one gives it a public interface (as ``Orchestrator.run_nested`` does for ``multiagent.nested``).

An AST walk over the sources (the core and each backend distribution): ``obj._name`` where ``obj`` is not
``self`` or ``cls`` and ``_name`` is defined (a function, class, method or assigned attribute or name)
only in other modules of the same distribution, and ``from module import _name``. A name that is
defined in the reaching module too counts as its own.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "src", *sorted((ROOT / "checkpointers").glob("*/src"))]

NOT_PRIVATE = {"_replace", "_asdict", "_fields", "_make"}
"""Public despite the underscore: a named tuple's API (``typing.NamedTuple``), which any caller may use."""

ALLOWED: dict[tuple[str, str], str] = {
    ("statehitl.prebuilt.injected", "type(tool)._run"): "LangChain's BaseTool._run, the method its subclasses "
    "define as their body (LangChain's contract), not statehitl's own _run of the same name",
    ("statehitl.prebuilt.tool_calls", "from langchain_core.tools.base import _DirectlyInjectedToolArg"):
    "the only mark by which langchain-core leaves a parameter typed ToolRuntime (no Annotated) out of the schema "
    "the model sees; LangGraph's ToolRuntime subclasses it too",
}
"""``(module, "obj._name")`` reaches that are legitimate, each with why. Keep it short: the answer to a new
reach is a public interface in the module reached into."""


def _private(name: str) -> bool:
    return name.startswith("_") and name != "_" and not (name.startswith("__") and name.endswith("__"))


def _modules(source: Path) -> dict[str, ast.Module]:
    return {".".join(p.relative_to(source).with_suffix("").parts): ast.parse(p.read_text(), str(p))
            for p in sorted(source.rglob("*.py"))}


def _defined(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Each private name, and the modules that define it."""
    where: dict[str, set[str]] = defaultdict(set)
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                name = node.attr
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.id
            else:
                continue
            if _private(name):
                where[name].add(module)
    return where


def reaches(source: Path) -> list[tuple[str, str, int]]:
    """``(module, what, line)`` for every private reach across modules under ``source``."""
    trees = _modules(source)
    defined = _defined(trees)
    found = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in NOT_PRIVATE:
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                owners = defined.get(node.attr, set())
                if owners and module not in owners:
                    found.append((module, f"{ast.unparse(node.value)}.{node.attr}", node.lineno))
            elif isinstance(node, ast.ImportFrom):
                found.extend((module, f"from {node.module} import {a.name}", node.lineno)
                             for a in node.names if _private(a.name))
    return found


def test_no_module_reaches_into_another_modules_private_members() -> None:
    found = [f"{module}:{line}: {what}" for source in SOURCES for module, what, line in reaches(source)
             if (module, what) not in ALLOWED]
    assert not found, "private members reached from another module (give the owner a public interface):\n" + \
        "\n".join(found)


def test_the_walk_finds_a_reach(tmp_path: Path) -> None:
    """The check can fail: a module that uses another's private method, attribute or name is found."""
    (tmp_path / "owner.py").write_text("class Owner:\n    def _secret(self): ...\n\n_HIDDEN = 1\n")
    (tmp_path / "user.py").write_text("from owner import _HIDDEN\n\ndef use(o):\n    return o._secret(), o._own\n"
                                      "\nclass Mine:\n    _own = 1\n")
    assert reaches(tmp_path) == [("user", "from owner import _HIDDEN", 1), ("user", "o._secret", 4)]
