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


def breakpoint_in_a_subgraph_streamed(lg: SimpleNamespace) -> list[Any]:
    """A subgraph's breakpoint in a streamed run: the subgraph's chunks up to it under its namespace, no task
    result or interrupt for the stopped subgraph node, and the step's end as the parent's last chunks (the
    finished sibling's values, then an empty ``__interrupt__``). Compared by namespace, in order within each
    (the two siblings run side by side)."""

    def add(text: str) -> Any:
        def node(state: Key) -> dict[str, Any]:
            return {"my_key": state["my_key"] + text}

        return node

    child = lg.StateGraph(Key)
    child.add_node("c1", add(" c1"))
    child.add_node("c2", add(" c2"))
    child.add_edge(lg.START, "c1")
    child.add_edge("c1", "c2")
    parent = lg.StateGraph(Key)
    parent.add_node("child", child.compile(interrupt_before=["c2"]))
    parent.add_node("sibling", add(" sibling"))
    parent.add_edge(lg.START, "child")
    parent.add_edge(lg.START, "sibling")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    by_namespace: dict[tuple[str, ...], list[Any]] = {}
    for ns, mode, chunk in app.stream({"my_key": ""}, config("streamed-breakpoint"),
                                      stream_mode=["updates", "values", "tasks"], subgraphs=True):
        shown = {k: v for k, v in chunk.items() if k in ("name", "result", "interrupts")} if mode == "tasks" \
            else chunk
        by_namespace.setdefault(shape(ns), []).append((mode, shown))
    return [by_namespace]


class Value(TypedDict):
    value: Annotated[list, operator.add]


def _asking_graph(lg: SimpleNamespace, called: list[str], **compile: Any) -> Any:
    """``step_a``, then two nodes that each ask a question (LangGraph's time-travel tests' subgraph)."""

    def step_a(state: Value) -> dict[str, Any]:
        called.append("step_a")
        return {"value": ["step_a"]}

    def ask(name: str) -> Any:
        def node(state: Value) -> dict[str, Any]:
            called.append(name)
            return {"value": [f"{name}:{lg.interrupt(name + '?')}"]}

        return node

    g = lg.StateGraph(Value)
    g.add_node("step_a", step_a)
    g.add_node("ask_1", ask("ask_1"))
    g.add_node("ask_2", ask("ask_2"))
    g.add_edge(lg.START, "step_a")
    g.add_edge("step_a", "ask_1")
    g.add_edge("ask_1", "ask_2")
    return g.compile(**compile)


def _wrapped(lg: SimpleNamespace, name: str, sub: Any, **compile: Any) -> Any:
    g = lg.StateGraph(Value)
    g.add_node(name, sub)
    g.add_edge(lg.START, name)
    return g.compile(**compile)


def described(snapshot: Any) -> Any:
    """What a subgraph snapshot shows, ids left out: its values, next tasks and their interrupts, the shape
    of its namespace and checkpoint map, and (recursively) its tasks' snapshots."""
    configurable = snapshot.config["configurable"]
    mapped = configurable.get("checkpoint_map", {})
    metadata = snapshot.metadata or {}
    return (snapshot.values, snapshot.next, shape(configurable["checkpoint_ns"]), sorted(map(shape, mapped)),
            mapped.get(configurable["checkpoint_ns"]) == configurable.get("checkpoint_id"),
            metadata.get("step"), sorted(map(shape, metadata.get("parents", {}))),
            [i.value for i in snapshot.interrupts],
            [(t.name, [i.value for i in t.interrupts], described(t.state) if hasattr(t.state, "next") else t.state)
             for t in snapshot.tasks])


def subgraph_snapshots_three_levels(lg: SimpleNamespace) -> list[Any]:
    """``get_state(config, subgraphs=True)`` fills each subgraph task's ``state`` with its snapshot, level
    under level, each with a config naming its checkpoint (``checkpoint_ns``, ``checkpoint_id``,
    ``checkpoint_map``); ``get_state`` with that config reads the same snapshot."""
    called: list[str] = []
    inner = _asking_graph(lg, called, checkpointer=True)
    middle = _wrapped(lg, "inner", inner, checkpointer=True)
    app = _wrapped(lg, "outer", middle, checkpointer=lg.InMemorySaver())
    c = config("three-levels")
    seen: list[Any] = [app.invoke({"value": []}, c)]
    for answer in ("a1", None):
        state = app.get_state(c, subgraphs=True)
        (task,) = state.tasks
        middle_state = task.state
        inner_state = middle_state.tasks[0].state
        seen.append(described(middle_state))
        seen.append(described(app.get_state(inner_state.config)))
        seen.append(described(app.get_state(middle_state.config, subgraphs=True)))
        seen.append(sorted(app.get_state(c).tasks[0].state["configurable"]))
        if answer is not None:
            seen.append(app.invoke(lg.Command(resume=answer), c))
    return seen


def time_travel_to_a_subgraph_checkpoint(lg: SimpleNamespace) -> list[Any]:
    """``invoke(None, subgraph config)`` goes back to where the subgraph stood: the parent forks at the
    checkpoint that runs it, the subgraph's finished nodes do not run again and its question is asked
    again; the new answers bind on the new branch, the old branch is kept."""
    called: list[str] = []
    executor = _asking_graph(lg, called, checkpointer=True)
    app = _wrapped(lg, "executor", executor, checkpointer=lg.InMemorySaver())
    c = config("travel")
    app.invoke({"value": []}, c)
    at_first = app.get_state(c, subgraphs=True).tasks[0].state.config
    seen: list[Any] = [app.invoke(lg.Command(resume="a1"), c), app.invoke(lg.Command(resume="a2"), c)]
    called.clear()
    seen += [app.invoke(None, at_first), list(called)]
    history = list(app.get_state_history(c))
    seen.append([(s.metadata["source"], s.next, s.values) for s in history])
    seen.append(history[0].parent_config["configurable"]["checkpoint_id"] == at_first["configurable"][
        "checkpoint_map"][""])
    called.clear()
    seen += [app.invoke(lg.Command(resume="b1"), c), app.invoke(lg.Command(resume="b2"), c), list(called)]
    seen.append([(s.metadata["source"], s.next, s.values) for s in app.get_state_history(c)])
    return seen


def edit_a_subgraph_checkpoint(lg: SimpleNamespace) -> list[Any]:
    """``update_state(subgraph config, values)`` edits the subgraph's state where it stopped; running from
    the config it returns asks the subgraph's question again on the edited state, and the answer goes on
    to the end of the subgraph and of its parent."""
    called: list[str] = []
    executor = _asking_graph(lg, called, checkpointer=True)

    def post(state: Value) -> dict[str, Any]:
        called.append("post")
        return {"value": ["post"]}

    parent = lg.StateGraph(Value)
    parent.add_node("executor", executor)
    parent.add_node("post", post)
    parent.add_edge(lg.START, "executor")
    parent.add_edge("executor", "post")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    c = config("edit")
    app.invoke({"value": []}, c)
    sub = app.get_state(c, subgraphs=True).tasks[0].state.config
    edited = app.update_state(sub, {"value": ["edited"]})
    seen: list[Any] = [shape(edited["configurable"]["checkpoint_ns"]), app.get_state(edited).values]
    called.clear()
    seen += [app.invoke(None, edited), list(called)]
    seen += [app.invoke(lg.Command(resume="x"), edited), app.invoke(lg.Command(resume="y"), c), list(called)]
    return seen


def replays_rerun_subgraphs(lg: SimpleNamespace) -> list[Any]:
    """Replaying a parent checkpoint runs a subgraph node from its start: a stateless one afresh, one
    compiled with ``checkpointer=True`` from the state it had before that step."""
    seen: list[Any] = []
    for keeps in (False, True):
        called: list[str] = []
        sub = lg.StateGraph(Value)
        sub.add_node("count", lambda s, called=called: called.append("count") or {"value": [len(s["value"])]})
        sub.add_edge(lg.START, "count")
        app = _wrapped(lg, "sub", sub.compile(checkpointer=True if keeps else None),
                       checkpointer=lg.InMemorySaver())
        c = config(f"replay-{keeps}")
        app.invoke({"value": ["a"]}, c)
        app.invoke({"value": ["b"]}, c)
        before = next(s for s in app.get_state_history(c) if s.next == ("sub",))
        seen += [app.invoke(None, before.config), list(called)]
    return seen


def snapshot_of_a_graph_invoked_in_code(lg: SimpleNamespace) -> list[Any]:
    """A graph invoked in a node's code that stopped inside shows as that task's ``state`` too."""
    called: list[str] = []
    inner = _asking_graph(lg, called)

    def wrapper(state: Value) -> dict[str, Any]:
        return {"value": inner.invoke({"value": ["in"]})["value"]}

    app = _wrapped(lg, "wrapper", wrapper, checkpointer=lg.InMemorySaver())
    c = config("in-code")
    seen: list[Any] = [app.invoke({"value": []}, c)]
    state = app.get_state(c, subgraphs=True)
    seen.append(described(state.tasks[0].state))
    seen.append(app.invoke(lg.Command(resume="a1"), c))
    return seen


def debug_stream_of_subgraphs(lg: SimpleNamespace) -> list[Any]:
    """``stream_mode="debug"`` (and ``"tasks"``) with ``subgraphs=True``: the subgraphs' task and checkpoint
    chunks under their namespaces, in the order they happen."""
    child = lg.StateGraph(Log)
    child.add_node("c_one", recorder("c_one"))
    child.add_edge(lg.START, "c_one")
    parent = lg.StateGraph(Log)
    parent.add_node("p_one", recorder("p_one"))
    parent.add_node("p_two", child.compile())
    parent.add_edge(lg.START, "p_one")
    parent.add_edge("p_one", "p_two")
    grand = lg.StateGraph(Log)
    grand.add_node("gp_one", recorder("gp_one"))
    grand.add_node("gp_two", parent.compile())
    grand.add_edge(lg.START, "gp_one")
    grand.add_edge("gp_one", "gp_two")
    app = grand.compile(checkpointer=lg.InMemorySaver())
    seen: list[Any] = []
    for ns, chunk in app.stream({"log": []}, config("debug"), stream_mode="debug", subgraphs=True):
        payload = chunk["payload"]
        if chunk["type"] == "checkpoint":
            seen.append((shape(ns), chunk["step"], "checkpoint", payload["values"], payload["next"],
                         payload["metadata"]["source"], shape(payload["config"]["configurable"]["checkpoint_ns"])))
        else:
            seen.append((shape(ns), chunk["step"], chunk["type"], payload["name"], payload.get("result")))
    tasks = [(shape(ns), chunk["name"], chunk.get("result")) for ns, chunk in
             app.stream({"log": []}, config("tasks"), stream_mode="tasks", subgraphs=True)]
    return [seen, tasks]


def edit_a_subgraph_checkpoint_as_a_node(lg: SimpleNamespace) -> list[Any]:
    """``update_state(subgraph config, values, as_node=...)``: the subgraph moves on as if that node of its
    own had written ``values``, and runs from there."""
    called: list[str] = []
    app = _wrapped(lg, "executor", _asking_graph(lg, called, checkpointer=True), checkpointer=lg.InMemorySaver())
    c = config("edit-as-node")
    app.invoke({"value": []}, c)
    sub = app.get_state(c, subgraphs=True).tasks[0].state.config
    edited = app.update_state(sub, {"value": ["as ask_1"]}, as_node="ask_1")
    state = app.get_state(edited)
    called.clear()
    return [(state.values, state.next), app.invoke(None, edited), app.invoke(lg.Command(resume="z"), c),
            list(called)]


def breakpoint_in_a_graph_invoked_in_code(lg: SimpleNamespace) -> list[Any]:
    """A breakpoint compiled into a graph invoked in a node's code stops the parent there too."""
    inner = lg.StateGraph(Log)
    inner.add_node("i1", recorder("i1"))
    inner.add_node("i2", recorder("i2"))
    inner.add_edge(lg.START, "i1")
    inner.add_edge("i1", "i2")
    inner_app = inner.compile(interrupt_before=["i2"])

    def code(state: Log) -> dict[str, Any]:
        return {"log": inner_app.invoke({"log": []})["log"]}

    app = lg.StateGraph(Log)
    app.add_node("code", code)
    app.add_edge(lg.START, "code")
    graph = app.compile(checkpointer=lg.InMemorySaver())
    c = config("code-breakpoint")
    return [graph.invoke({"log": []}, c), graph.get_state(c).next, graph.invoke(None, c)]


def graph_with_its_own_saver_invoked_in_code(lg: SimpleNamespace) -> list[Any]:
    """A graph compiled with a saver of its own, invoked in a node's code without naming a thread, runs as that
    node's subgraph (LangGraph's parent lends it its saver): it asks, the resume goes on inside it (its first
    node does not run again), the next parent run starts it afresh, and its own saver holds nothing. Under a
    parent with no saver it still runs, up to its question."""
    calls: list[str] = []

    def ask(state: Log) -> dict[str, Any]:
        calls.append("ask")
        return {"log": [f"ask={lg.interrupt('name?')}"]}

    inner = lg.StateGraph(Log)
    inner.add_node("pre", recorder("pre", calls))
    inner.add_node("ask", ask)
    inner.add_edge(lg.START, "pre")
    inner.add_edge("pre", "ask")
    own = lg.InMemorySaver()
    sub = inner.compile(checkpointer=own)

    def call_inner(state: Log) -> dict[str, Any]:
        calls.append("call_inner")
        return {"log": sub.invoke({"log": ["in"]})["log"]}

    parent = lg.StateGraph(Log)
    parent.add_node("call_inner", call_inner)
    parent.add_edge(lg.START, "call_inner")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    c = config("own-saver-in-code")
    return [app.invoke({"log": []}, c), app.invoke(lg.Command(resume="ann"), c), app.invoke({"log": []}, c),
            list(calls), len(list(own.list(None))), parent.compile().invoke({"log": []})]


PROGRAMS = [graph_with_its_own_saver_invoked_in_code, stateful_graphs_invoked_in_code, stateful_graph_in_code_asks,
            namespaces_nodes_see,
            breakpoints_in_subgraphs, subgraph_snapshots_three_levels, time_travel_to_a_subgraph_checkpoint,
            edit_a_subgraph_checkpoint, edit_a_subgraph_checkpoint_as_a_node, replays_rerun_subgraphs,
            snapshot_of_a_graph_invoked_in_code, breakpoint_in_a_graph_invoked_in_code, debug_stream_of_subgraphs,
            breakpoint_in_a_subgraph_streamed]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
