"""Programs LangGraph's pregel tests taught: each imports ``<root>.X`` and runs once with ``langgraph`` and once
with ``statehitl`` as the root; what statehitl's run observes must equal what LangGraph's does."""

from __future__ import annotations

import asyncio
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
    last, while a router's edge to ``__end__`` is listed by source and target like any other; the labels of
    ``add_node(destinations={node: label})`` on their edges."""
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
    labelled = load("graph").StateGraph(Text)
    labelled.add_node("pick", lambda state: load("types").Command(goto="left"),
                      destinations={"left": "L", "right": "R"})
    labelled.add_node("left", lambda state: {"text": "l"}).add_node("right", lambda state: {"text": "r"})
    labelled.add_edge("__start__", "pick")
    return {"mermaid": drawn.draw_mermaid(with_styles=False),
            "edges": [(e.source, e.target, e.data, e.conditional) for e in drawn.edges],
            "labelled": [(e.source, e.target, e.data, e.conditional) for e in labelled.compile().get_graph().edges]}


def test_plain_edges_into_end_are_drawn_last() -> None:
    seen = on_both(drawing_program)
    assert seen["edges"][-1] == ("other", "__end__", None, False)


def exit_durability_program(load: Load) -> list[Any]:
    """``durability="exit"`` saves only the checkpoint a run stops on: no input or first-step checkpoint, the
    steps still counted, each run's checkpoint following the last one saved."""
    graph = load("graph").StateGraph(Text)
    for name in ("a", "b", "c"):
        graph.add_node(name, lambda state, name=name: {"text": name})
    graph.add_edge("__start__", "a").add_edge("a", "b").add_edge("b", "c")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver(), interrupt_after=["a"])
    config = {"configurable": {"thread_id": "t"}}
    seen: list[Any] = []
    for given in ({"text": "x"}, None, {"text": "y"}):
        seen.append(app.invoke(given, config, durability="exit"))
        history = list(app.get_state_history(config))
        ids = [snapshot.config["configurable"]["checkpoint_id"] for snapshot in history]
        seen.append([(s.values, s.next, s.metadata["source"], s.metadata["step"],
                      ids.index(s.parent_config["configurable"]["checkpoint_id"]) if s.parent_config else None)
                     for s in history])
    return seen


def test_an_exit_run_shows_only_where_it_stopped() -> None:
    seen = on_both(exit_durability_program)
    assert [len(history) for history in seen[1::2]] == [1, 2, 3]


def drain_program(load: Load) -> list[Any]:
    """``RunControl.request_drain()`` stops a run before its next step with ``GraphDrained`` (its reason in the
    message), the thread saved where it stopped, so ``invoke(None)`` goes on; drained before it began, nothing
    runs; asked in the last step, the run finishes."""
    runtime, errors = load("runtime"), load("errors")
    seen: list[Any] = []

    def build(control: Any) -> Any:
        graph = load("graph").StateGraph(Text)
        graph.add_node("first", lambda state: control.request_drain("sigterm") or {"text": "1"})
        graph.add_node("second", lambda state: {"text": "2"})
        graph.add_edge("__start__", "first").add_edge("first", "second")
        return graph

    for checkpointer in (None, load("checkpoint.memory").InMemorySaver()):
        control = runtime.RunControl()
        app = build(control).compile(checkpointer=checkpointer)
        config = {"configurable": {"thread_id": "t"}}
        try:
            seen.append(app.invoke({"text": ">"}, config, control=control))
        except errors.GraphDrained as drained:
            seen.append(("drained", str(drained), control.drain_requested, control.drain_reason))
        if checkpointer is not None:
            seen.append((app.get_state(config).values, app.get_state(config).next))
            seen.append(app.invoke(None, config))
    ended = runtime.RunControl()
    last = load("graph").StateGraph(Text)
    last.add_node("only", lambda state: ended.request_drain() or {"text": "!"})
    last.add_edge("__start__", "only")
    seen.append(last.compile().invoke({"text": ""}, control=ended))
    early = runtime.RunControl()
    early.request_drain("before")
    try:
        seen.append(build(early).compile().invoke({"text": ""}, control=early))
    except errors.GraphDrained as drained:
        seen.append(("drained", str(drained)))
    return seen


def test_a_drained_run_stops_between_steps() -> None:
    seen = on_both(drain_program)
    assert seen[0][0] == "drained"


def failed_task_program(load: Load) -> list[Any]:
    """A failed step's task shows its error as LangGraph shows a stored one, the exception's repr (a str), in
    ``get_state`` and in the history, before and after ``invoke(None)`` retried it."""
    calls: list[int] = []

    def flaky(state: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Simulated failure")
        return {"text": "ok"}

    graph = load("graph").StateGraph(Text)
    graph.add_node("flaky", flaky)
    graph.add_edge("__start__", "flaky")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    seen: list[Any] = []
    try:
        app.invoke({"text": ""}, config)
    except RuntimeError as error:
        seen.append(repr(error))
    seen.append([(t.name, t.error) for t in app.get_state(config).tasks])
    seen.append(app.invoke(None, config))
    seen.append([[(t.name, t.error) for t in s.tasks] for s in app.get_state_history(config)])
    return seen


def test_a_failed_task_shows_its_error_as_text() -> None:
    seen = on_both(failed_task_program)
    assert seen[1] == [("flaky", "RuntimeError('Simulated failure')")]


def one_argument(current: Any) -> Any:
    return current


class BadReducer(TypedDict):
    hello: Annotated[str, one_argument]


def error_words_program(load: Load) -> list[Any]:
    """Errors carry LangGraph's words, which programs match on: two plain writes of one key in a step, two
    Overwrites of one channel in a step, a reducer that does not take two arguments, removing a message the
    channel does not hold. Observed: the error's type and whether LangGraph's phrase is in its message."""
    from langchain_core.messages import AIMessage, RemoveMessage

    graph_module, types = load("graph"), load("types")
    seen: list[Any] = []

    def outcome(call: Callable[[], Any], phrase: str) -> None:
        try:
            call()
            seen.append("no error")
        except Exception as error:  # the observation is the error itself
            seen.append((type(error).__name__, phrase in str(error)))

    class Plain(TypedDict):
        hello: str

    both = graph_module.StateGraph(Plain)
    both.add_node("a", lambda state: {"hello": "a"}).add_node("b", lambda state: {"hello": "b"})
    both.add_edge("__start__", "a").add_edge("__start__", "b")
    outcome(lambda: both.compile().invoke({"hello": ""}), "At key 'hello'")

    overwrites = graph_module.StateGraph(Text)
    overwrites.add_node("a", lambda state: {"text": types.Overwrite("a")})
    overwrites.add_node("b", lambda state: {"text": types.Overwrite("b")})
    overwrites.add_edge("__start__", "a").add_edge("__start__", "b")
    outcome(lambda: overwrites.compile().invoke({"text": ""}), "Can receive only one Overwrite value per super-step.")

    outcome(lambda: graph_module.StateGraph(BadReducer), "Invalid reducer")
    add_messages = load("graph.message").add_messages
    outcome(lambda: add_messages([AIMessage("hi", id="1")], [RemoveMessage(id="2")]),
            "Attempting to delete a message with an ID that doesn't exist")
    return seen


def test_errors_carry_langgraphs_words() -> None:
    seen = on_both(error_words_program)
    assert all(observed != "no error" and observed[1] for observed in seen)


def task_results_program(load: Load) -> list[Any]:
    """A past checkpoint's tasks carry what they wrote (``task.result``): the input as ``__start__`` wrote it,
    each node's update (``{}`` for a node that wrote nothing, without where a ``Command`` sent it); the
    checkpoint whose step has not run, None."""
    types = load("types")

    def one(state: Any) -> Any:
        return types.Command(update={"text": "1"}, goto="quiet")

    graph = load("graph").StateGraph(Text)
    graph.add_node("one", one).add_node("quiet", lambda state: None)
    graph.add_edge("__start__", "one")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"text": ">"}, config)
    seen = [[(t.name, t.result) for t in s.tasks] for s in app.get_state_history(config)]
    app.update_state(config, {"text": "!"}, as_node="one")
    seen.append([(t.name, t.result) for t in app.get_state(config).tasks])
    seen.append([[(t.name, t.result) for t in s.tasks] for s in app.get_state_history(config, limit=2)])
    return seen


def test_past_tasks_show_what_they_wrote() -> None:
    seen = on_both(task_results_program)
    assert seen[3] == [("__start__", {"text": ">"})]


def input_update_program(load: Load) -> list[Any]:
    """``update_state(..., as_node="__input__")`` shows only an input checkpoint (the input is ``__start__``'s
    to write) until a run applies it; a ``__start__`` update then writes its values in place of that input (a
    step-0 ``"update"``), and ``invoke(None)`` runs from there; a thread whose input is run directly shows the
    run's step-0 ``"loop"`` checkpoint."""
    graph = load("graph").StateGraph(Text)
    graph.add_node("agent", lambda state: {"text": "a"}).add_node("tool", lambda state: {"text": "t"})
    graph.add_edge("__start__", "agent").add_edge("agent", "tool")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())

    def history(config: dict[str, Any]) -> list[Any]:
        snapshots = list(app.get_state_history(config))
        ids = [s.config["configurable"]["checkpoint_id"] for s in snapshots]
        return [(s.values, s.next, s.metadata["step"], s.metadata["source"], [(t.name, t.result) for t in s.tasks],
                 ids.index(s.parent_config["configurable"]["checkpoint_id"]) if s.parent_config else None)
                for s in snapshots]

    seen: list[Any] = []
    replaced = {"configurable": {"thread_id": "replaced"}}
    app.update_state(replaced, {"text": "in"}, as_node="__input__")
    seen.append((app.get_state(replaced).values, app.get_state(replaced).next, history(replaced)))
    app.update_state(replaced, {"text": "in2"}, as_node="__start__")
    seen.append(history(replaced))
    seen.append((app.invoke(None, replaced), history(replaced)))
    direct = {"configurable": {"thread_id": "direct"}}
    app.update_state(direct, {"text": "in"}, as_node="__input__")
    seen.append((app.invoke(None, direct), history(direct)))
    return seen


def test_an_input_update_waits_for_its_run() -> None:
    seen = on_both(input_update_program)
    assert len(seen[0][2]) == 1


class Mapped(TypedDict, total=False):
    text: str
    side: str
    items: Annotated[list, operator.add]  # type: ignore[type-arg]


def bulk_supersteps_program(load: Load) -> list[Any]:
    """``bulk_update_state``'s supersteps: each one checkpoint, as if its nodes had run in one step (their next
    tasks planned together, an update as a node with pending Sends taking the next of them); a superstep of
    several updates names a node for each; two plain writes of a key in one superstep are refused; no
    superstep, or an empty one, is a ``ValueError``."""
    types, graph_module = load("types"), load("graph")

    def fan(state: Any) -> Any:
        return types.Command(goto=[types.Send("item", {"i": 0}), types.Send("item", {"i": 1})], update={"text": "map"})

    graph = graph_module.StateGraph(Mapped)
    graph.add_node("agent", lambda state: {"text": "agent"}).add_node("fan", fan)
    graph.add_node("item", lambda state: {"items": [state["i"]]}).add_node("side", lambda state: {"side": "s"})
    graph.add_edge("__start__", "agent").add_edge("agent", "fan").add_edge("agent", "side")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    update = types.StateUpdate
    config = {"configurable": {"thread_id": "bulk"}}
    app.bulk_update_state(config, [
        [update({"text": "in"}, "__input__")], [update({"text": "in"}, "__start__")], [update({"text": "a"}, "agent")],
        [update(types.Command(goto=[types.Send("item", {"i": 0}), types.Send("item", {"i": 1})],
                              update={"text": "map"}), "fan"), update({"side": "s"}, "side")],
        [update({"items": [0]}, "item"), update({"items": [1]}, "item")]])
    seen: list[Any] = [[(s.values, s.next, s.metadata["step"], s.metadata["source"],
                         [(t.name, t.result) for t in s.tasks]) for s in app.get_state_history(config)]]
    for bad in ([[update({"text": "x"}, None), update({"side": "y"}, None)]],
                [[update({"text": "x"}, "agent"), update({"text": "y"}, "side")]], [], [[]]):
        try:
            app.bulk_update_state(config, bad)
            seen.append("no error")
        except (ValueError, load("errors").InvalidUpdateError) as error:
            seen.append(type(error).__name__)
    seen.append(len(list(app.get_state_history(config))))
    return seen


def test_a_bulk_superstep_is_one_checkpoint() -> None:
    seen = on_both(bulk_supersteps_program)
    assert len(seen[0]) == 5


def xray_program(load: Load) -> list[Any]:
    """``get_graph(xray=)`` draws a subgraph node as the subgraph's own nodes (``node:inner``), ``True`` every
    level deep and a number that many, with the subgraph's ``__start__``/``__end__`` left out where LangGraph
    trims them (one edge, and another node then starts or ends it)."""
    graph_module = load("graph")

    def looped(name: str, inner: Any) -> Any:
        graph = graph_module.StateGraph(Text)
        graph.add_node(f"{name}_one", lambda state: {"text": "."}).add_node(f"{name}_two", inner)
        graph.add_edge("__start__", f"{name}_one").add_edge(f"{name}_two", f"{name}_one")
        graph.add_conditional_edges(f"{name}_one", lambda state: "1", {"0": f"{name}_two", "1": "__end__"})
        return graph.compile()

    nested = looped("gp", looped("p", looped("c", lambda state: {"text": "!"})))
    sinks_inner = graph_module.StateGraph(Text)
    for name in ("one", "two", "three"):
        sinks_inner.add_node(name, lambda state: {"text": "."})
    sinks_inner.add_edge("__start__", "one").add_conditional_edges("one", lambda state: "two", ["two", "three"])
    sinks = graph_module.StateGraph(Text)
    sinks.add_node("uno", lambda state: {"text": "."}).add_node("inner", sinks_inner.compile())
    sinks.add_edge("__start__", "uno").add_edge("uno", "inner")
    return [app.get_graph(xray=xray).draw_mermaid(with_styles=False)
            for app, xray in ((nested, True), (nested, 1), (nested, False), (sinks.compile(), True))]


def test_xray_draws_subgraphs_in_place() -> None:
    seen = on_both(xray_program)
    assert "gp_two\\3ap_two\\3ac_one" in seen[0]


def invoked_parent_command_program(load: Load) -> list[Any]:
    """A graph invoked in a node's code whose node returns ``Command(graph=Command.PARENT, ...)`` hands that
    Command to the node, which the parent graph applies as the node's own (update, then goto), sync or async."""
    types, graph_module = load("types"), load("graph")

    def hand_up(state: Any) -> Any:
        return types.Command(update={"text": "<"}, goto="there", graph=types.Command.PARENT)

    inner = graph_module.StateGraph(Text)
    inner.add_node("hand_up", hand_up).add_edge("__start__", "hand_up")
    compiled = inner.compile()

    def calls(state: Any) -> Any:
        return compiled.invoke(state)

    async def acalls(state: Any) -> Any:
        return await compiled.ainvoke(state)

    seen = []
    for node in (calls, acalls):
        outer = graph_module.StateGraph(Text)
        outer.add_node("child", node, destinations=("here", "there"))
        outer.add_node("here", lambda state: {"text": "h"}).add_node("there", lambda state: {"text": "t"})
        outer.add_edge("__start__", "child")
        app = outer.compile()

        async def both(app: Any = app) -> Any:
            return await app.ainvoke({"text": ">"}), [chunk async for chunk in app.astream({"text": ">"})]

        seen.append(asyncio.run(both()))
        if node is calls:
            seen.append((app.invoke({"text": ">"}), list(app.stream({"text": ">"}))))
    return seen


def test_a_command_for_the_parent_from_an_invoked_graph() -> None:
    seen = on_both(invoked_parent_command_program)
    assert seen[0][0] == {"text": "><t"}


def streamed_checkpoints_program(load: Load) -> list[Any]:
    """The checkpoints a ``"debug"`` stream sends are the history's, ids and parents included, whatever the
    durability (``"sync"`` writes a run's beginning before its first step)."""
    graph = load("graph").StateGraph(Text)
    graph.add_node("one", lambda state: {"text": "1"}).add_node("two", lambda state: {"text": "2"})
    graph.add_edge("__start__", "one").add_edge("one", "two")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    seen = []
    for durability in ("sync", "async"):
        config = {"configurable": {"thread_id": durability}}
        events = [e["payload"] for e in app.stream({"text": ">"}, config, stream_mode="debug", durability=durability)
                  if e["type"] == "checkpoint"]
        history = list(reversed(list(app.get_state_history(config))))
        ids = [s.config["configurable"]["checkpoint_id"] for s in history]

        def at(config: Any, ids: list[str] = ids) -> Any:
            return None if config is None else ids.index(config["configurable"]["checkpoint_id"])

        seen.append([(at(e["config"]), at(e["parent_config"]), e["metadata"]["step"], e["next"]) for e in events])
        seen.append([(at(s.config), at(s.parent_config), s.metadata["step"], list(s.next)) for s in history])
    return seen


def test_streamed_checkpoints_are_the_historys() -> None:
    seen = on_both(streamed_checkpoints_program)
    assert seen[0] == seen[1]


def config_metadata_program(load: Load) -> list[Any]:
    """A node's ``config["metadata"]`` repeats the run's ids its ``configurable`` holds (``thread_id``,
    ``run_id``, ``assistant_id``, ``graph_id``, ``task_id``), never its other keys, and a ``"messages"`` chunk's
    metadata does too; the run's own ``metadata`` wins."""
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableConfig

    seen: list[Any] = []

    def node(state: Any, config: RunnableConfig) -> Any:
        seen.append(sorted((k, v) for k, v in config["metadata"].items() if not k.startswith("langgraph_")))
        return {"messages": [AIMessage("hi", id="1")]}

    graph = load("graph").StateGraph(load("graph.message").MessagesState)
    graph.add_node("node", node).add_edge("__start__", "node")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    config = {"configurable": {"thread_id": "t", "run_id": "r", "assistant_id": "a", "graph_id": "g",
                               "task_id": "k", "model": "m", "api_key": "secret", "nested": {"x": 1}},
              "metadata": {"mine": 1, "graph_id": "own"}}
    chunks = list(app.stream({"messages": []}, config, stream_mode="messages"))
    seen.append([sorted((k, v) for k, v in metadata.items() if not k.startswith(("langgraph_", "ls_")))
                 for _, metadata in chunks])
    return seen


def test_a_nodes_metadata_repeats_the_runs_ids() -> None:
    seen = on_both(config_metadata_program)
    assert ("run_id", "r") in seen[0]


def execution_info_program(load: Load) -> list[Any]:
    """``runtime.execution_info.checkpoint_ns`` is the node call's own namespace (``node:<task id>``), a
    subgraph node's after its subgraph's (``outer:<task id>|inner:<task id>``), holding its ``task_id``."""
    seen: list[Any] = []

    def note(state: Any, runtime: Any) -> Any:
        info = runtime.execution_info
        parts = info.checkpoint_ns.split("|")
        seen.append(([p.partition(":")[0] for p in parts], info.task_id in parts[-1], info.thread_id))
        return {"text": "."}

    inner = load("graph").StateGraph(Text)
    inner.add_node("inner_node", note).add_edge("__start__", "inner_node")
    outer = load("graph").StateGraph(Text)
    outer.add_node("main_node", note).add_node("sub", inner.compile())
    outer.add_edge("__start__", "main_node").add_edge("main_node", "sub")
    outer.compile(checkpointer=load("checkpoint.memory").InMemorySaver()).invoke(
        {"text": ""}, {"configurable": {"thread_id": "t"}})
    return seen


def test_execution_info_names_the_calls_namespace() -> None:
    seen = on_both(execution_info_program)
    assert seen[1][0] == ["sub", "inner_node"]


class Holder:
    def __init__(self, payload: Any) -> None:
        self.payload = payload


MODULE_GRAPH: Any = None


def detection_program(load: Load) -> list[Any]:
    """Which graph ``compiled.nodes[name].subgraphs`` finds in a node's function: one it captures, or one a
    function defined in it reaches from a captured holder; not a global only a function defined in it names."""
    graph_module = load("graph")

    def leaf(name: str) -> Any:
        graph = graph_module.StateGraph(Text)
        graph.add_node("x", lambda state: {"text": "."}).add_edge("__start__", "x")
        return graph.compile(name=name)

    global MODULE_GRAPH
    MODULE_GRAPH = leaf("module_global")
    holder = Holder(leaf("captured"))

    def global_in_nested(state: Any) -> Any:
        def inner() -> Any:
            return MODULE_GRAPH.invoke(state)

        return inner()

    def captured_in_nested(state: Any) -> Any:
        def inner() -> Any:
            return holder.payload.invoke(state)

        return inner()

    found = []
    for node in (global_in_nested, captured_in_nested):
        graph = graph_module.StateGraph(Text)
        graph.add_node("n", node).add_edge("__start__", "n")
        subgraphs = graph.compile().nodes["n"].subgraphs
        found.append(getattr(subgraphs[0], "name", "?") if subgraphs else None)
    return found


def test_subgraph_detection_reads_what_langgraph_reads() -> None:
    assert on_both(detection_program) == [None, "captured"]


def copy_with_updates_program(load: Load) -> list[Any]:
    """``update_state(config, [StateUpdate(...)], as_node="__copy__")`` copies the checkpoint and applies the
    updates as the copy's next step, in one call; a copy of a checkpoint that follows none has no parent."""
    types = load("types")
    graph = load("graph").StateGraph(Text)
    graph.add_node("one", lambda state: {"text": "1"}).add_node("two", lambda state: {"text": "2"})
    graph.add_edge("__start__", "one").add_edge("one", "two")
    app = graph.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"text": ">"}, config)
    first = list(app.get_state_history(config))[-1]
    seen: list[Any] = [app.invoke(None, app.update_state(first.config, [types.StateUpdate({"text": "*"}, "__start__")],
                                                         as_node="__copy__"))]
    snapshots = list(app.get_state_history(config))
    ids = [s.config["configurable"]["checkpoint_id"] for s in snapshots]
    seen.append([(s.values, s.next, s.metadata["step"], s.metadata["source"], [(t.name, t.result) for t in s.tasks],
                  ids.index(s.parent_config["configurable"]["checkpoint_id"]) if s.parent_config else None)
                 for s in snapshots])
    return seen


def test_a_copy_takes_its_updates_in_one_call() -> None:
    seen = on_both(copy_with_updates_program)
    assert seen[0] == {"text": "*12"}
