"""LangGraph's module layout, names and shapes: programs whose imports are ``langgraph.X`` ported as
``statehitl.X`` and nothing else, each run on the real LangGraph and on statehitl and compared.

Every program takes a ``load(path)`` that imports ``<root>.<path>``: the one difference between its two runs
is the root package's name, which is the port the module layout promises (``s/langgraph/statehitl/``).
"""

from __future__ import annotations

import dataclasses
import importlib
import operator
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from plain_storage import PrimitivesOnly
from statehitl.checkpoint import Checkpointer, FileCheckpointer, MemoryCheckpointer, MemoryStorage
from statehitl.checkpoint.codec import decode
from statehitl.errors import NodeError

Load = Callable[[str], ModuleType]


def loader(root: str) -> Load:
    return lambda path: importlib.import_module(f"{root}.{path}")


def on_both(program: Callable[[Load], Any]) -> Any:
    """The program's observations on LangGraph, which statehitl's must equal."""
    expected = program(loader("langgraph"))
    assert program(loader("statehitl")) == expected
    return expected


class Items(TypedDict):
    items: Annotated[list, operator.add]  # type: ignore[type-arg]


class Counted(TypedDict):
    items: Annotated[list, operator.add]  # type: ignore[type-arg]
    n: int


@dataclasses.dataclass
class Ctx:
    user: str


# The public paths LangGraph's documentation imports from, by module.
PUBLIC_PATHS = {
    "graph": ["StateGraph", "START", "END"],
    "graph.state": ["StateGraph", "CompiledStateGraph"],
    "constants": ["START", "END", "TAG_NOSTREAM", "TAG_HIDDEN", "CONF"],
    "types": ["Command", "Send", "interrupt", "Interrupt", "StateSnapshot", "PregelTask", "StateUpdate", "Overwrite",
              "RetryPolicy", "TimeoutPolicy", "StreamMode", "StreamWriter", "Durability", "All", "Checkpointer",
              "ensure_valid_checkpointer"],
    "errors": ["GraphRecursionError", "InvalidUpdateError", "GraphInterrupt", "ParentCommand", "EmptyInputError",
               "GraphBubbleUp", "NodeError", "NodeTimeoutError"],
    "config": ["get_config", "get_stream_writer"],
    "runtime": ["Runtime", "get_runtime", "ExecutionInfo", "ServerInfo"],
    "checkpoint.memory": ["InMemorySaver", "MemorySaver"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC_PATHS))
def test_every_public_path_langgraph_imports_from_resolves(module: str) -> None:
    for root in ("langgraph", "statehitl"):
        imported = loader(root)(module)
        missing = [name for name in PUBLIC_PATHS[module] if not hasattr(imported, name)]
        assert not missing, f"{root}.{module} lacks {missing}"


def overwrite_program(load: Load) -> dict[str, Any]:
    """An operator.add list overwritten mid-run, then extended again: results, state, history, updates."""
    types = load("types")
    g = load("graph.state").StateGraph(Counted)
    g.add_node("add", lambda s: {"items": ["a"], "n": s.get("n", 0) + 1})
    g.add_node("over", lambda s: {"items": types.Overwrite(["x", "y", "z", "w"])})
    g.add_node("add2", lambda s: {"items": ["b"], "n": s["n"] + 1})
    g.add_edge(load("constants").START, "add")
    g.add_edge("add", "over")
    g.add_edge("over", "add2")
    g.add_edge("add2", load("constants").END)
    app = g.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    result = app.invoke({"items": ["i"], "n": 0}, cfg)
    updates = app.invoke({"items": ["j"], "n": 0}, {"configurable": {"thread_id": "u"}}, stream_mode="updates")
    return {"result": result, "state": app.get_state(cfg).values,
            "history": [h.values for h in app.get_state_history(cfg)],
            "updates": [{node: {k: getattr(v, "value", v) for k, v in update.items()} for node, update in u.items()}
                        for u in updates]}


def test_overwrite_replaces_an_operator_add_list() -> None:
    seen = on_both(overwrite_program)
    assert seen["result"] == {"items": ["x", "y", "z", "w", "b"], "n": 2}


def graph_for_storage() -> Any:
    from statehitl.graph.state import StateGraph
    from statehitl.types import Overwrite

    g = StateGraph(Items)
    g.add_node("grow", lambda s: {"items": ["g1", "g2"]})
    g.add_node("replace", lambda s: {"items": Overwrite(["r1", "r2", "r3", "r4", "r5"])})
    g.add_node("shrink", lambda s: {"items": Overwrite(["s"])})
    g.add_node("grow_again", lambda s: {"items": ["after"]})
    g.add_edge("__start__", "grow")
    g.add_edge("grow", "replace")
    g.add_edge("replace", "grow_again")
    g.add_edge("grow_again", "shrink")
    g.add_edge("shrink", "__end__")
    return g


@pytest.mark.parametrize("store", ["memory", "file", "primitives"])
def test_an_overwritten_append_channel_reads_back_whole_in_a_cold_process(store: str, tmp_path: Path) -> None:
    """The list an operator.add channel keeps is stored as the pieces each step adds; an Overwrite's step
    stores it whole, so a process that reads the thread afresh (deltas, or S3's Fenwick chain) sees what the
    running one saw, at every checkpoint, and goes on from it."""
    def saver() -> Checkpointer:
        if store == "memory":
            return shared
        if store == "file":
            return FileCheckpointer(tmp_path)
        return Checkpointer(PrimitivesOnly(FileCheckpointer(tmp_path).storage))  # type: ignore[arg-type]

    shared = MemoryCheckpointer()
    app = graph_for_storage().compile(checkpointer=saver())
    cfg = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"items": ["in"]}, cfg) == {"items": ["s"]}
    assert app.invoke({"items": ["more"]}, cfg) == {"items": ["s"]}
    live = [h.values for h in app.get_state_history(cfg)]
    assert ["in", "g1", "g2", "r1", "r2", "r3", "r4", "r5", "after"] not in live  # replaced, not extended
    assert {"items": ["r1", "r2", "r3", "r4", "r5", "after"]} in live
    cold = graph_for_storage().compile(checkpointer=saver())
    assert [h.values for h in cold.get_state_history(cfg)] == live
    assert cold.get_state(cfg).values == {"items": ["s"]}
    for snapshot in cold.get_state_history(cfg):  # every checkpoint read on its own, as a config addresses it
        assert cold.get_state(snapshot.config).values == snapshot.values


class RecordingStorage(MemoryStorage):
    """Keeps every record written, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        self.written.append(data)
        return await super().write(key, data, expect=expect, durable=durable)


def test_only_the_overwriting_step_stores_the_list_whole() -> None:
    """The record of the step after an Overwrite holds only what that step added again (records stay lean)."""
    recording = RecordingStorage()
    app = graph_for_storage().compile(checkpointer=Checkpointer(recording))
    app.invoke({"items": ["in"]}, {"configurable": {"thread_id": "t"}})
    records = [decode("record", data, None) for data in recording.written]
    pieces = [(r["appends"]["items"]["start"], r["appends"]["items"]["items"]) for r in records
              if r.get("kind") == "checkpoint"]
    assert pieces[-4:] == [(0, ["in", "g1", "g2"]), (0, ["r1", "r2", "r3", "r4", "r5"]), (5, ["after"]), (0, ["s"])]


def config_program(load: Load) -> dict[str, Any]:
    """Thread ids of any type, a checkpointer without one, a bad checkpointer, invoke's keyword arguments."""
    state, memory, types = load("graph.state"), load("checkpoint.memory"), load("types")
    g = state.StateGraph(Items)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_edge(load("constants").START, "a")
    app = g.compile(checkpointer=memory.InMemorySaver())
    seen: dict[str, Any] = {}
    for thread in (42, uuid.UUID(int=7)):
        app.invoke({"items": []}, {"configurable": {"thread_id": thread}})
        seen[f"thread {thread!r}"] = app.get_state({"configurable": {"thread_id": str(thread)}}).config
    with pytest.raises(ValueError, match="Checkpointer requires one or more of the following 'configurable' keys"):
        app.invoke({"items": []}, {"configurable": {}})
    with pytest.raises(TypeError, match="Invalid checkpointer provided"):
        g.compile(checkpointer=object())
    seen["kwargs"] = app.invoke({"items": []}, {"configurable": {"thread_id": "k"}, "max_concurrency": 1},
                                stream_mode="values", debug=False)
    seen["updates"] = app.invoke({"items": []}, {"configurable": {"thread_id": "u"}}, stream_mode="updates")
    seen["valid"] = [types.ensure_valid_checkpointer(c) is c for c in (None, True, False)]
    return {k: {**v, "configurable": {**v["configurable"], "checkpoint_id": "-"}} if k.startswith("thread") else v
            for k, v in seen.items()}


def test_config_as_langgraph_reads_it() -> None:
    seen = on_both(config_program)
    assert seen["thread 42"]["configurable"]["thread_id"] == "42"


def shapes_program(load: Load) -> dict[str, Any]:
    """Interrupt's constructor and equality, Command's repr, and a bare resume with two interrupts pending."""
    types = load("types")
    first = types.Interrupt(value={"q": 1}, id="one")
    seen: dict[str, Any] = {
        "interrupt": (repr(first), first == types.Interrupt(value={"q": 1}, id="one"),
                      first == types.Interrupt(value={"q": 1}, id="two"), first.value, first.id),
        "commands": [repr(types.Command(goto="a")), repr(types.Command(resume=1, update={"k": 2})),
                     repr(types.Command(graph=types.Command.PARENT, goto="x"))],
    }

    def ask(name: str) -> Callable[[Any], Any]:
        return lambda s: {"items": [types.interrupt(name)]}

    g = load("graph.state").StateGraph(Items)
    g.add_node("a", ask("a"))
    g.add_node("b", ask("b"))
    g.add_edge(load("constants").START, "a")
    g.add_edge(load("constants").START, "b")
    app = g.compile(checkpointer=load("checkpoint.memory").InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    asked = {i.value: i.id for i in app.invoke({"items": []}, cfg)["__interrupt__"]}
    with pytest.raises(RuntimeError, match="When there are multiple pending interrupts, you must specify the "
                                           "interrupt id when resuming"):
        app.invoke(types.Command(resume="yes"), cfg)
    seen["resumed"] = sorted(app.invoke(types.Command(resume={asked["a"]: 1, asked["b"]: 2}), cfg)["items"])
    return seen


def test_names_and_shapes() -> None:
    seen = on_both(shapes_program)
    assert seen["interrupt"][1:] == (True, False, {"q": 1}, "one")


def surface_program(load: Load) -> dict[str, Any]:
    """The compiled graph's surface: nodes, with_config, copy, JSON schemas, get_graph."""
    g = load("graph.state").StateGraph(Items, context_schema=Ctx)
    g.add_node("who", lambda s, runtime: {"items": [runtime.context.user, type(runtime.context).__name__]})
    g.add_node("then", lambda s: {"items": ["then"]})
    g.add_edge(load("constants").START, "who")
    g.add_conditional_edges("who", lambda s: "then", ["then", load("constants").END])
    app = g.compile()
    drawn = app.get_graph()
    return {
        "nodes": sorted(app.nodes),
        "with_config": app.with_config({"recursion_limit": 5}).invoke({"items": []}, context={"user": "ann"}),
        "copy": type(app.copy()).__name__,
        "schemas": (app.get_input_jsonschema(), app.get_output_jsonschema()),
        "drawn": (list(drawn.nodes), sorted((e.source, e.target, e.conditional) for e in drawn.edges)),
        "runtime": load("runtime").Runtime(context=Ctx("x")).override(context=Ctx("y")).context,
    }


def test_the_compiled_graph_surface() -> None:
    seen = on_both(surface_program)
    assert seen["with_config"] == {"items": ["ann", "Ctx", "then"]}


def guards_program(load: Load) -> dict[str, Any]:
    """Error handlers (per node and by default), what they get (a NodeError naming the node and its error) and
    a timed-out async node handed to its handler as a NodeTimeoutError."""
    import asyncio

    types, errors = load("types"), load("errors")
    seen: list[Any] = []

    def broken(state: Any) -> Any:
        raise KeyError("missing")

    def handler(state: Any, error: NodeError) -> Any:  # the annotation's name is what both libraries read
        seen.append((type(error).__name__, error.node, type(error.error).__name__,
                     isinstance(error, errors.NodeError)))
        return {"items": [f"handled {error.node}"]}

    async def slow(state: Any) -> Any:
        await asyncio.sleep(1)
        return {"items": ["too late"]}

    async def timed_out(state: Any, error: NodeError) -> Any:
        seen.append((type(error.error).__name__, isinstance(error.error, errors.NodeTimeoutError)))
        return {"items": ["timed out"]}

    g = load("graph.state").StateGraph(Items)
    g.set_node_defaults(error_handler=handler)
    g.add_node("broken", broken)
    g.add_node("slow", slow, timeout=types.TimeoutPolicy(run_timeout=0.05), error_handler=timed_out)
    g.add_edge(load("constants").START, "broken")
    g.add_edge(load("constants").START, "slow")
    app = g.compile()
    result = asyncio.run(app.ainvoke({"items": []}))
    return {"result": sorted(result["items"]), "seen": sorted(map(repr, seen)), "nodes": sorted(app.nodes)}


def test_error_handlers_and_timeouts() -> None:
    seen = on_both(guards_program)
    assert seen["result"] == ["handled broken", "timed out"]
