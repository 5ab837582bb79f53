"""The machine: validation at compile time, drawing, and what it reads from handlers and routers."""

from __future__ import annotations

import functools
from typing import Literal

import pytest
from pydantic import BaseModel

from statehitl.errors import GraphValidationError
from statehitl.graph import END, START, StateGraph
from statehitl.machine import Edge, Machine, NodeSpec
from statehitl.routers import Router


class S(BaseModel):
    n: int = 0


def noop(state: S) -> None:
    return None


def spec(name: str) -> NodeSpec:
    return NodeSpec.from_callable(name, noop)


def graph(*nodes: str) -> StateGraph[S]:
    g = StateGraph(S)
    for name in nodes:
        g.add_node(name, noop)
    return g


# -- compile errors ---------------------------------------------------------------------------------


def test_edge_to_unknown_node_names_it_and_the_known_nodes() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_edge("a", "ghost")
    with pytest.raises(GraphValidationError, match=r"Found edge ending at unknown node `ghost`") as err:
        g.compile()
    assert "known nodes: ['a']" in str(err.value)


def test_edge_from_unknown_node_is_an_error() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_edge("a", END)
    g.add_edge("ghost", "a")
    with pytest.raises(GraphValidationError, match=r"Found edge starting at unknown node 'ghost'"):
        g.compile()


def test_unreachable_node_is_named() -> None:
    with pytest.raises(GraphValidationError, match=r"\['island'\] cannot be reached from START"):
        Machine([spec("a"), spec("island")], [Edge(START, "a"), Edge("a", END), Edge("island", END)])


def test_node_without_path_to_end_is_named() -> None:
    with pytest.raises(GraphValidationError, match=r"\['sink'\] have no path to END"):
        Machine([spec("a"), spec("sink")], [Edge(START, "a"), Edge("a", "sink"), Edge("a", END)])


def test_closed_loop_has_no_path_to_end() -> None:
    with pytest.raises(GraphValidationError, match=r"\['a', 'b'\] have no path to END"):
        Machine([spec("a"), spec("b")], [Edge(START, "a"), Edge("a", "b"), Edge("b", "a")])


def test_a_superstep_machine_lets_branches_end_anywhere_and_nodes_wait_for_a_send() -> None:
    """LangGraph's rules: a node without a way out ends its branch; a node no edge reaches may be sent to."""
    g = graph("a", "sink", "island")
    g.add_edge(START, "a")
    g.add_edge("a", "sink")
    assert g.compile().machine.supersteps


def test_duplicate_node_name_is_refused_when_added() -> None:
    g = graph("a")
    with pytest.raises(GraphValidationError, match=r"Node `a` already present"):
        g.add_node("a", noop)


def test_duplicate_node_name_is_refused_by_the_machine() -> None:
    with pytest.raises(GraphValidationError, match=r"duplicate node name 'a'"):
        Machine([spec("a"), spec("a")], [Edge(START, "a"), Edge("a", END)])


@pytest.mark.parametrize("name", [START, END])
def test_reserved_names_are_refused_when_added(name: str) -> None:
    with pytest.raises(GraphValidationError, match=rf"Node `{name}` is reserved"):
        graph().add_node(name, noop)


@pytest.mark.parametrize("name", [START, END])
def test_reserved_names_are_refused_by_the_machine(name: str) -> None:
    with pytest.raises(GraphValidationError, match=rf"node name '{name}' is reserved"):
        Machine([spec(name)])


def test_missing_entry_edge() -> None:
    g = graph("a")
    g.add_edge("a", END)
    with pytest.raises(GraphValidationError, match=r"Graph must have an entrypoint: 'SGraph' has no entry; add"):
        g.compile()


def test_no_nodes() -> None:
    with pytest.raises(GraphValidationError, match=r"has no nodes"):
        StateGraph(S).compile()


def test_nothing_leaves_end_and_nothing_enters_start() -> None:
    with pytest.raises(GraphValidationError, match=r"nothing can leave END"):
        Machine([spec("a")], [Edge(START, "a"), Edge("a", END), Edge(END, "a")])
    with pytest.raises(GraphValidationError, match=r"nothing can enter START"):
        Machine([spec("a")], [Edge(START, "a"), Edge("a", END), Edge("a", START)])


def test_conditional_edge_to_unknown_node_from_path_map() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "x", {"x": "ghost", "y": END})
    with pytest.raises(GraphValidationError, match=r"At 'a' node, 'x' branch found unknown target 'ghost'"):
        g.compile()


def test_conditional_edge_to_unknown_node_from_literal_annotation() -> None:
    def route(state: S) -> Literal["ghost", "__end__"]:
        return "__end__"

    g = graph("a")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route)
    with pytest.raises(GraphValidationError, match=r"'ghost' is not a node"):
        g.compile()


def test_conditional_edges_from_unknown_node() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_edge("a", END)
    g.add_conditional_edges("ghost", lambda s: END)
    with pytest.raises(GraphValidationError, match=r"Found edge starting at unknown node 'ghost'"):
        g.compile()


def test_known_router_targets_count_for_reachability() -> None:
    def route(state: S) -> Literal["b", "__end__"]:
        return "b"

    router = Router("a", route, ("b", END))
    with pytest.raises(GraphValidationError, match=r"\['c'\] cannot be reached"):
        Machine([spec("a"), spec("b"), spec("c")], [Edge(START, "a"), Edge("b", END), Edge("c", END)], [router])


def test_non_callable_handler_and_missing_handler() -> None:
    with pytest.raises(GraphValidationError, match=r"handler must be callable"):
        graph().add_node("a", "not a function")  # type: ignore[arg-type]
    with pytest.raises(GraphValidationError, match=r"needs a handler"):
        graph().add_node("a")
    with pytest.raises(GraphValidationError, match=r"path must be callable"):
        graph("a").add_conditional_edges("a", "b")  # type: ignore[arg-type]


def test_a_valid_graph_compiles() -> None:
    g = graph("a", "b")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b" if s.n else END)
    g.add_edge("b", "a")
    app = g.compile()
    assert list(app.machine.nodes) == ["a", "b"]
    assert "CompiledStateGraph" in repr(app)


# -- routers at run time ----------------------------------------------------------------------------


def test_router_value_missing_from_path_map_is_a_clear_error() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "maybe", {"yes": END, "no": END})
    with pytest.raises(GraphValidationError, match=r"returned 'maybe', which is not a key of its path map"):
        g.compile().invoke({})


def test_router_choosing_an_unknown_node_is_a_clear_error() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "nowhere")
    with pytest.raises(GraphValidationError, match=r"chose 'nowhere', which is not a node"):
        g.compile().invoke({})


def test_router_returning_a_non_name_is_a_clear_error() -> None:
    g = graph("a")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: None)
    with pytest.raises(GraphValidationError, match=r"returned None; it must return node names"):
        g.compile().invoke({})


def test_router_resolve_forms() -> None:
    assert Router("a", lambda s: "b").resolve(None) == ["b"]
    assert Router("a", lambda s: ["b", "c"]).resolve(None) == ["b", "c"]
    assert Router("a", lambda s: ("b",)).resolve(None) == ["b"]
    assert Router("a", lambda s: True, path_map={True: "b", False: END}).resolve(None) == ["b"]


# -- what the machine reads from handlers -----------------------------------------------------------


def test_context_argument_is_detected_from_the_signature() -> None:
    def one(state):
        return None

    def two(state, ctx):
        return None

    async def two_async(state, ctx):
        return None

    class Callable:
        async def __call__(self, state):
            return None

    assert NodeSpec.from_callable("x", one).takes_context is False
    assert NodeSpec.from_callable("x", two).takes_context is True
    assert NodeSpec.from_callable("x", lambda *args: None).takes_context is True
    assert NodeSpec.from_callable("x", functools.partial(two, ctx=None)).takes_context is False
    assert NodeSpec.from_callable("x", two_async).is_async is True
    assert NodeSpec.from_callable("x", Callable()).is_async is True
    assert NodeSpec.from_callable("x", Callable()).takes_context is False
    assert NodeSpec.from_callable("x", one).is_async is False


def _decorated(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize(
    ("handler", "takes_context"),
    [
        (lambda state, ctx=None: None, True),
        (lambda state, /, ctx: None, True),
        (lambda state, *, ctx: None, False),  # keyword-only: never passed positionally
        (lambda state, **kwargs: None, False),
        (lambda state, *rest: None, True),
        (lambda: None, False),
        (_decorated(lambda state, ctx: None), True),  # what the wrapper reports, not its *args
        (_decorated(lambda state: None), False),
    ],
)
def test_context_detection_reads_signatures_as_inspect_does(handler, takes_context: bool) -> None:
    assert NodeSpec.from_callable("x", handler).takes_context is takes_context
    assert NodeSpec.from_callable("x", handler).is_async is False


def test_add_node_with_a_function_uses_its_name() -> None:
    def classify(state: S) -> None:
        return None

    g = StateGraph(S)
    g.add_node(classify)
    g.set_entry_point("classify")
    g.set_finish_point("classify")
    assert list(g.compile().machine.nodes) == ["classify"]


def test_blockers_follow_forward_edges_and_ignore_back_edges() -> None:
    machine = Machine(
        [spec(n) for n in ("a", "b", "b2", "c", "d", "loop")],
        [
            Edge(START, "a"), Edge("a", "b"), Edge("a", "c"), Edge("b", "b2"), Edge("b2", "d"),
            Edge("c", "d"), Edge("d", "loop"), Edge("loop", "d"), Edge("loop", END),
        ],
    )
    # the join d waits for everything upstream of it, on both branches
    assert machine.blockers["d"] == {"a", "b", "b2", "c"}
    # loop -> d goes back round the cycle: d never waits for loop, loop waits for d
    assert machine.blockers["loop"] == {"a", "b", "b2", "c", "d"}
    assert machine.blockers["a"] == frozenset()


def test_blockers_of_a_join_inside_a_loop() -> None:
    machine = Machine(
        [spec(n) for n in ("a", "c", "b")],
        [Edge(START, "a"), Edge(START, "c"), Edge("a", "b"), Edge("c", "b"), Edge("b", "a"), Edge("b", END)],
    )
    # c reaches a only round the loop, so the two start nodes do not wait for each other
    assert machine.blockers == {"a": frozenset(), "c": frozenset(), "b": {"a", "c"}}


def test_fingerprint_is_stable_and_tracks_shape() -> None:
    def build(extra: bool) -> str:
        g = graph("a", "b")
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", END)
        if extra:
            g.add_edge("a", END)
        return g.compile().machine.fingerprint

    assert build(False) == build(False)
    assert build(False) != build(True)


# -- drawing ----------------------------------------------------------------------------------------


def refund_graph() -> StateGraph[S]:
    def route(state: S) -> Literal["review", "pay", "__end__"]:
        return "review"

    g = graph("classify", "review", "pay", 'say "hi"')
    g.add_edge(START, "classify")
    g.add_conditional_edges("classify", route)
    g.add_edge("review", "pay")
    g.add_edge("pay", 'say "hi"')
    g.add_edge('say "hi"', END)
    return g


def test_draw_mermaid(snapshot) -> None:
    text = refund_graph().compile().draw_mermaid()
    assert text == snapshot
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    assert "    __start__ --> n0" in lines  # a plain edge is solid
    assert "    n0 -.-> n1" in lines  # a conditional one is dotted
    assert '    n3["say #quot;hi#quot;"]' in lines  # quotes in names are escaped
    assert text.endswith("\n")


def test_draw_mermaid_of_router_without_known_targets_shows_every_possibility() -> None:
    g = graph("a", "b")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: END)
    g.add_edge("b", END)
    lines = g.compile().draw_mermaid().splitlines()
    assert {"    n0 -.-> n0", "    n0 -.-> n1", "    n0 -.-> __end__"} <= set(lines)
