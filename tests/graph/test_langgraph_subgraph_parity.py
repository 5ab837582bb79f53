"""Subgraphs as LangGraph users see them, run on LangGraph and on statehitl and compared (as in
``test_langgraph_parity``): namespaces, graphs compiled with ``checkpointer=True`` invoked in a node's code,
breakpoints compiled into a subgraph, and subgraph snapshots and configs that address a subgraph's
checkpoint.

Task ids differ by design (LangGraph's are uuids, statehitl's name the step and the task), so a namespace
is compared by its shape: each part cut after its node's name, ``"node:"`` for a run of a subgraph and
``"node"`` for a subgraph that keeps its state; checkpoint ids are compared by what they name.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from test_langgraph_parity import config, langgraph_names, plain, statehitl_names


def shape(namespace: tuple[str, ...] | str) -> tuple[str, ...]:
    """A namespace with the task ids cut off (``("sub:<id>", "1")`` -> ``("sub:", "1")``)."""
    parts = namespace.split("|") if isinstance(namespace, str) else namespace
    return tuple(p.partition(":")[0] + (":" if ":" in p else "") for p in parts if p)


class Log(TypedDict):
    log: Annotated[list, operator.add]


def recorder(name: str, calls: list[str] | None = None) -> Any:
    def node(state: Log) -> dict[str, Any]:
        if calls is not None:
            calls.append(name)
        return {"log": [name]}

    node.__name__ = name
    return node


# -- the programs -----------------------------------------------------------------------------------


def stateful_graphs_invoked_in_code(lg: SimpleNamespace) -> list[Any]:
    """Graphs compiled with ``checkpointer=True`` invoked in a node's code keep their state in the parent's
    thread from one parent run to the next, each by its call's order (no mixing); a stateless one starts
    afresh every time; their chunks stream under LangGraph's namespaces."""
    fruit = lg.StateGraph(Log)
    fruit.add_node("fruit", recorder("fruit"))
    fruit.add_edge(lg.START, "fruit")
    fruit_app = fruit.compile(checkpointer=True)
    veggie = lg.StateGraph(Log)
    veggie.add_node("veggie", recorder("veggie"))
    veggie.add_edge(lg.START, "veggie")
    veggie_app = veggie.compile(checkpointer=True)
    fresh = lg.StateGraph(Log)
    fresh.add_node("fresh", recorder("fresh"))
    fresh.add_edge(lg.START, "fresh")
    fresh_app = fresh.compile()
    seen: list[Any] = []

    def call_all(state: Log) -> dict[str, Any]:
        round_ = f"r{len(state['log'])}"
        seen.append([fruit_app.invoke({"log": [round_]})["log"], fresh_app.invoke({"log": [round_]})["log"],
                     veggie_app.invoke({"log": [round_]})["log"]])
        return {"log": [round_]}

    parent = lg.StateGraph(Log)
    parent.add_node("call_all", call_all)
    parent.add_edge(lg.START, "call_all")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    c = config("stateful-in-code")
    results = [app.invoke({"log": []}, c), app.invoke({"log": []}, c)]
    streamed = [(shape(ns), chunk) for ns, chunk in app.stream({"log": []}, c, stream_mode="updates",
                                                                subgraphs=True)]
    return [results, seen, streamed]


def stateful_graph_in_code_asks(lg: SimpleNamespace) -> list[Any]:
    """A graph compiled with ``checkpointer=True`` in a node's code that asks: the parent stops, the resume
    goes on inside it, and its next call (the next parent run) goes on from the state it ended with."""
    calls: list[str] = []

    def ask(state: Log) -> dict[str, Any]:
        calls.append("ask")
        return {"log": [f"ask={lg.interrupt(len(state['log']))}"]}

    inner = lg.StateGraph(Log)
    inner.add_node("pre", recorder("pre", calls))
    inner.add_node("ask", ask)
    inner.add_edge(lg.START, "pre")
    inner.add_edge("pre", "ask")
    wrapper = inner.compile(checkpointer=True)

    def call_inner(state: Log) -> dict[str, Any]:
        calls.append("call_inner")
        return {"log": [len(wrapper.invoke({"log": ["in"]})["log"])]}

    parent = lg.StateGraph(Log)
    parent.add_node("call_inner", call_inner)
    parent.add_edge(lg.START, "call_inner")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    c = config("asks-in-code")
    return [app.invoke({"log": []}, c), app.invoke(lg.Command(resume="a"), c),
            app.invoke({"log": []}, c), app.invoke(lg.Command(resume="b"), c), list(calls)]


def namespaces_nodes_see(lg: SimpleNamespace) -> list[Any]:
    """A node's ``config["configurable"]["checkpoint_ns"]`` is its own task's namespace, after the namespace
    of the subgraph it runs in; stream namespaces of subgraph nodes and of graphs invoked in code."""
    seen: list[Any] = []

    def look(name: str) -> Any:
        def node(state: Log, config: RunnableConfig) -> dict[str, Any]:
            seen.append((name, shape(config["configurable"]["checkpoint_ns"]),
                         shape(config["metadata"]["langgraph_checkpoint_ns"])))
            return {"log": [name]}

        return node

    inner = lg.StateGraph(Log)
    inner.add_node("i1", look("i1"))
    inner.add_edge(lg.START, "i1")
    inner_app = inner.compile()
    kept = lg.StateGraph(Log)
    kept.add_node("k1", look("k1"))
    kept.add_edge(lg.START, "k1")
    kept_app = kept.compile(checkpointer=True)

    def code(state: Log) -> dict[str, Any]:
        inner_app.invoke({"log": []})
        inner_app.invoke({"log": []})
        return {"log": ["code"]}

    parent = lg.StateGraph(Log)
    parent.add_node("top", look("top"))
    parent.add_node("sub", inner_app)
    parent.add_node("kept", kept_app)
    parent.add_node("code", code)
    parent.add_edge(lg.START, "top")
    parent.add_edge("top", "sub")
    parent.add_edge("sub", "kept")
    parent.add_edge("kept", "code")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    streamed = [(shape(ns), chunk) for ns, chunk in app.stream({"log": []}, config("ns"), stream_mode="updates",
                                                                subgraphs=True)]
    return [streamed, seen]


class Key(TypedDict):
    my_key: Annotated[str, operator.add]


def breakpoints_in_subgraphs(lg: SimpleNamespace) -> list[Any]:
    """``interrupt_before``/``interrupt_after`` compiled into a subgraph (two levels down too) stop the
    parent with nothing to answer; a finished sibling's write is kept and shown; ``invoke(None)`` goes on."""
    calls: list[str] = []

    def add(text: str) -> Any:
        def node(state: Key) -> dict[str, Any]:
            calls.append(text)
            return {"my_key": text}

        return node

    grandchild = lg.StateGraph(Key)
    grandchild.add_node("g1", add(" g1"))
    grandchild.add_node("g2", add(" g2"))
    grandchild.add_edge(lg.START, "g1")
    grandchild.add_edge("g1", "g2")
    child = lg.StateGraph(Key)
    child.add_node("grandchild", grandchild.compile(interrupt_before=["g2"]))
    child.add_node("c2", add(" c2"))
    child.add_edge(lg.START, "grandchild")
    child.add_edge("grandchild", "c2")
    after = lg.StateGraph(Key)
    after.add_node("a1", add(" a1"))
    after.add_node("a2", add(" a2"))
    after.add_edge(lg.START, "a1")
    after.add_edge("a1", "a2")
    parent = lg.StateGraph(Key)
    parent.add_node("child", child.compile())
    parent.add_node("sibling", add(" sibling"))
    parent.add_node("after", after.compile(interrupt_after=["a1"]))
    parent.add_edge(lg.START, "child")
    parent.add_edge(lg.START, "sibling")
    parent.add_edge(["child", "sibling"], "after")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    c = config("nested-breakpoints")
    seen: list[Any] = [app.invoke({"my_key": ""}, c)]
    state = app.get_state(c)
    seen.append((state.next, state.values, state.interrupts))
    seen.append(app.invoke(None, c))
    seen.append(app.get_state(c).next)
    seen.append(list(app.stream(None, c, stream_mode="updates")))
    seen.append(sorted(calls))
    return seen


PROGRAMS = [stateful_graphs_invoked_in_code, stateful_graph_in_code_asks, namespaces_nodes_see,
            breakpoints_in_subgraphs]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
