"""Programs LangGraph's pregel tests taught: each imports ``<root>.X`` and runs once with ``langgraph`` and once
with ``statehitl`` as the root; what statehitl's run observes must equal what LangGraph's does."""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any

from typing_extensions import TypedDict

Load = Callable[[str], ModuleType]


def on_both(program: Callable[[Load], Any]) -> Any:
    """The program's observations on LangGraph, which statehitl's must equal."""
    expected = program(lambda path: importlib.import_module(f"langgraph.{path}"))
    assert program(lambda path: importlib.import_module(f"statehitl.{path}")) == expected
    return expected


class Text(TypedDict):
    text: Annotated[str, operator.add]


def drawing_program(load: Load) -> dict[str, Any]:
    """The order of a drawn graph's edges: a finish point's and a dead end's plain edges into ``__end__`` come
    last, while a router's edge to ``__end__`` is listed by source and target like any other."""
    graph = load("graph").StateGraph(Text)
    for name in ("up", "side", "other", "down", "loop"):
        graph.add_node(name, lambda state: {"text": "."})
    graph.set_entry_point("up")
    graph.add_edge("up", "side")
    graph.add_edge("up", "other")
    graph.add_edge(["up", "side"], "down")
    graph.add_edge("down", "loop")
    graph.add_conditional_edges("loop", lambda state: "__end__", {"again": "loop", "done": "__end__"})
    graph.set_finish_point("other")
    drawn = graph.compile().get_graph()
    return {"mermaid": drawn.draw_mermaid(with_styles=False),
            "edges": [(e.source, e.target, e.data, e.conditional) for e in drawn.edges]}


def test_plain_edges_into_end_are_drawn_last() -> None:
    seen = on_both(drawing_program)
    assert seen["edges"][-1] == ("other", "__end__", None, False)
