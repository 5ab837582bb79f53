"""``statehitl draw MODULE:ATTR`` in-process through ``main([...])``."""

from __future__ import annotations

import sys
import textwrap

import pytest
from cli_support import assert_one_line_error

from statehitl.cli.demo import build_graph

MODULE = textwrap.dedent(
    """
    from pydantic import BaseModel

    from statehitl.graph import END, START, StateGraph


    class S(BaseModel):
        n: int = 0


    def make_graph():
        g = StateGraph(S, name="Tiny")
        g.add_node("one", lambda s: {"n": s.n + 1})
        g.add_node("two", lambda s: None)
        g.add_edge(START, "one")
        g.add_conditional_edges("one", lambda s: "two" if s.n < 3 else END, ["two", END])
        g.add_edge("two", "one")
        return g


    graph = make_graph()
    app = graph.compile()
    machine = app.machine
    nested = type("Holder", (), {"app": app})


    def make_app():
        return make_graph().compile()


    def needs_args(x, y=1):
        return graph


    def returns_number():
        return 3


    def explodes():
        raise RuntimeError("boom")


    def broken_graph():
        g = StateGraph(S)
        g.add_node("one", lambda s: None)
        g.add_edge("one", END)
        return g


    number = 3
    """
)


@pytest.fixture
def user_module(workdir, monkeypatch):
    """A module in the working directory, importable by draw (which adds the cwd to sys.path)."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # draw may add the cwd; undo it afterwards
    name = f"drawme_{workdir.name.replace('-', '_')}"
    (workdir / f"{name}.py").write_text(MODULE)
    yield name
    sys.modules.pop(name, None)


def test_draw_the_demo_graph_builder(cli):
    done = cli("draw", "statehitl.cli.demo:build_graph")

    assert done.code == 0, done.err
    assert done.out == build_graph().compile().draw_mermaid()
    assert done.out.startswith("flowchart TD\n")
    assert '    n0["intake"]' in done.out
    assert "    __start__ --> n0" in done.out
    assert "    n1 -.-> n2" in done.out  # assess ..> approve: chosen by the state


def test_draw_the_workflow_module_directly(cli):
    assert cli("draw", "statehitl.cli.refund:build_graph").out == build_graph().compile().draw_mermaid()


def test_draw_as_text(cli):
    done = cli("draw", "statehitl.cli.demo:build_graph", "--format", "text")

    assert done.code == 0
    assert done.out.splitlines()[:3] == ["  START   ──▶ intake", "  intake  ──▶ assess", "  assess  ┈┈▶ pay | approve"]


@pytest.mark.parametrize("attr", ["graph", "app", "machine", "make_graph", "make_app", "nested.app"])
def test_draw_every_kind_of_target(cli, user_module, attr):
    done = cli("draw", f"{user_module}:{attr}")

    assert done.code == 0, done.err
    assert done.out.startswith("flowchart TD\n")
    assert '    n0["one"]' in done.out
    assert "    n0 -.-> __end__" in done.out
    assert "    n1 --> n0" in done.out


def test_text_diagram_of_a_loop(cli, user_module):
    done = cli("draw", f"{user_module}:graph", "--format", "text")

    assert done.out.splitlines()[:3] == ["  START ──▶ one", "  one   ┈┈▶ two | END", "  two   ──▶ one"]


@pytest.mark.parametrize(("target", "fragments"), [
    ("statehitl.cli.demo", ["MODULE:ATTR"]),
    (":build_graph", ["MODULE:ATTR"]),
    ("no_such_module_xyz:app", ["cannot import module 'no_such_module_xyz'"]),
    ("statehitl.cli.demo:nope", ["has no attribute 'nope'"]),
    ("statehitl.cli.refund:AUTO_APPROVE_LIMIT", ["not something drawable"]),
])
def test_bad_targets(cli, target, fragments):
    assert_one_line_error(cli("draw", target), *fragments)


@pytest.mark.parametrize(("attr", "fragments"), [
    ("needs_args", ["needs arguments (x)"]),
    ("returns_number", ["a callable returning int", "not something drawable"]),
    ("number", ["is int"]),
    ("explodes", ["RuntimeError: boom", "for the traceback, run: python -c"]),
    ("broken_graph", ["has no entry"]),
])
def test_bad_targets_in_a_user_module(cli, user_module, attr, fragments):
    assert_one_line_error(cli("draw", f"{user_module}:{attr}"), *fragments)


def test_a_module_that_fails_to_import(cli, workdir, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    (workdir / "broken_import_mod.py").write_text("import definitely_not_installed_xyz\n")
    try:
        assert_one_line_error(cli("draw", "broken_import_mod:app"), "importing 'broken_import_mod' failed",
                              "definitely_not_installed_xyz")
    finally:
        sys.modules.pop("broken_import_mod", None)
