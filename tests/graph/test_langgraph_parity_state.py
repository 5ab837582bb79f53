"""State as LangGraph treats it, routing and node returns: programs run on LangGraph and on statehitl.

As in ``test_langgraph_parity``: each program is written once against a namespace of each library's names,
run on the real LangGraph and on statehitl, and what it observes (results, stream chunks, snapshots' values
and tasks, the type of an error) must be equal, interrupts compared by their values.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
from types import SimpleNamespace
from typing import Annotated, Any, Literal, TypedDict
from unittest.mock import Mock

import pytest
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, Field
from test_langgraph_parity import config, langgraph_names, plain, statehitl_names


def observed(call: Any) -> Any:
    """What a call gives, or the name of the error it raises (the two libraries' messages differ)."""
    try:
        return call()
    except Exception as exc:
        return ("raised", type(exc).__name__)


class Counted(TypedDict):
    n: int
    log: Annotated[list, operator.add]


# -- state as LangGraph treats it ------------------------------------------------------------------------


def annotations_are_not_enforced(lg: SimpleNamespace) -> list[Any]:
    """A TypedDict's or a dataclass's annotations are not checked: a value is kept as it was written, and keys
    the state does not have are dropped from the input, from a node's update and from the updates stream."""

    @dataclasses.dataclass
    class Typed:
        n: int
        log: Annotated[list, operator.add]

    g = lg.StateGraph(Counted)
    g.add_node("a", lambda s: {"n": "not an int", "log": [type(s["n"]).__name__], "junk": 1})
    g.add_edge(lg.START, "a")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = [app.invoke({"n": "x", "extra": 2}, config("t")), app.get_state(config("t")).values,
            list(app.stream({"n": 5, "extra": 2}, config("u"), stream_mode="updates"))]
    d = lg.StateGraph(Typed)
    d.add_node("a", lambda s: {"n": f"{s.n}!", "log": [s.n], "junk": 1})
    d.add_edge(lg.START, "a")
    seen.append(d.compile().invoke({"n": 3.5, "log": [], "extra": 1}))
    return seen


def root_states(lg: SimpleNamespace) -> list[Any]:
    """A root-value state streams a node's value itself, and stops on an interrupt whose sibling finished (its
    write applied on resume); a waiting run returns only what it waits on."""
    g = lg.StateGraph(Annotated[list, operator.add])
    g.add_node("a", lambda s: [1])
    g.add_node("b", lambda s: [lg.interrupt("q")])
    g.add_edge(lg.START, "a")
    g.add_edge(lg.START, "b")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = [list(app.stream([0], config("r"), stream_mode="updates")), app.get_state(config("r")).values,
            app.invoke(lg.Command(resume="x"), config("r"))]
    n = lg.StateGraph(int)
    n.add_node("inc", lambda s: s + 1)
    n.add_node("ask", lambda s: lg.interrupt("how much?"))
    n.add_edge(lg.START, "inc")
    n.add_edge("inc", "ask")
    counter = n.compile(checkpointer=lg.InMemorySaver())
    seen += [counter.invoke(1, config("n")), counter.invoke(lg.Command(resume=7), config("n")),
             list(counter.stream(2, config("m"), stream_mode="updates"))]
    return seen


class Inner(BaseModel):
    a: int = 0


class Mutated(BaseModel):
    inner: Inner = Field(default_factory=Inner)
    outer: int = 0


class Query(BaseModel):
    query: str


class Searched(Query):
    inner: Inner
    answer: str | None = None
    docs: Annotated[list[str], operator.add]


class Asked(Query):
    inner: Inner


class Found(BaseModel):
    answer: str
    docs: list[str]


def pydantic_states(lg: SimpleNamespace) -> list[Any]:
    """A pydantic state's values are its fields as they are (a nested model stays a model); with a pydantic
    input schema the input is validated against it (the state's reducer channels start empty), and a bad input
    is pydantic's ValidationError."""

    def mutate(state: Mutated) -> Mutated:
        state.inner.a = 5
        state.outer = 10
        return state

    g = lg.StateGraph(Mutated)
    g.add_node("mutate", mutate)
    g.add_edge(lg.START, "mutate")
    seen = [g.compile().invoke({"outer": 1})]
    s = lg.StateGraph(Searched, input_schema=Asked, output_schema=Found)
    s.add_node("search", lambda st: {"docs": [f"doc:{st.query}:{st.inner.a}"]})
    s.add_node("answer", lambda st: {"answer": ",".join(st.docs)})
    s.add_edge(lg.START, "search")
    s.add_edge("search", "answer")
    app = s.compile()
    seen.append(app.invoke({"query": "q", "inner": Inner(a=2)}))
    seen.append(observed(lambda: app.invoke({"query": {}, "inner": {"a": 1}})))
    return seen


# -- routing and returns -----------------------------------------------------------------------------


def lists_of_commands(lg: SimpleNamespace) -> list[Any]:
    """A node may return a list of Commands, or Commands mixed with updates; each write goes through the
    channel's reducer in order, and a channel written twice streams one update per write."""

    class Pair(TypedDict):
        foo: Annotated[str, operator.add]
        bar: str

    class Joined(TypedDict):
        foo: Annotated[str, lambda a, b: ", ".join(x for x in (a, b) if x)]

    seen = []
    root = lg.StateGraph(Annotated[list[str], operator.add])
    root.add_node("mixed", lambda s: [lg.Command(update=["a"]), ["b"]])
    root.add_edge(lg.START, "mixed")
    seen.append(root.compile().invoke([]))
    pair = lg.StateGraph(Pair)
    pair.add_node("mixed", lambda s: [lg.Command(update={"foo": "a"}), {"foo": "b", "bar": "x"}])
    pair.add_node("go", lambda s: [lg.Command(goto="x"), lg.Command(update={"foo": "g"}, goto="y")])
    pair.add_node("x", lambda s: {"foo": "X"})
    pair.add_node("y", lambda s: {"foo": "Y"})
    pair.add_edge(lg.START, "mixed")
    pair.add_edge("mixed", "go")
    app = pair.compile()
    seen += [app.invoke({"foo": ""}), list(app.stream({"foo": ""}, stream_mode="updates"))]
    text = (lg.StateGraph(Annotated[str, operator.add])
            .add_sequence([("two", lambda s: [lg.Command(update="a1"), lg.Command(update="a2")]),
                           ("one", lambda s: "b")])
            .add_edge(lg.START, "two").compile())
    seen += [text.invoke(""), list(text.stream("", stream_mode="updates"))]
    pairs = lg.StateGraph(Joined)
    pairs.add_node("one", lambda s: lg.Command(update=[("foo", "one.0"), ("foo", "one.1")]))
    pairs.add_node("two", lambda s: {"foo": "two"})
    pairs.add_edge(lg.START, "one")
    pairs.add_edge("one", "two")
    app = pairs.compile(checkpointer=lg.InMemorySaver())
    seen.append(list(app.stream({"foo": "in"}, config("p"), stream_mode="updates")))
    tasks = list(app.stream({"foo": "in"}, config("q"), stream_mode="tasks"))
    seen.append([{k: v for k, v in t.items() if k != "id"} for t in tasks if "result" in t])
    twice = lg.StateGraph(Pair)
    twice.add_node("bad", lambda s: [lg.Command(update={"bar": "1"}), {"bar": "2"}])
    twice.add_edge(lg.START, "bad")
    seen.append(observed(lambda: twice.compile().invoke({"foo": ""})))
    return seen


def async_path_functions(lg: SimpleNamespace) -> list[Any]:
    """A path function may be a coroutine function: it is awaited (at START too), and may return Sends."""

    async def pick(state: Counted) -> list[Any]:
        await asyncio.sleep(0)
        return [lg.Send("b", {"n": len(state["log"]), "log": []}), "c"]

    async def first(state: Counted) -> Literal["a"]:
        return "a"

    g = lg.StateGraph(Counted)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": [f"b{s['n']}"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_conditional_edges(lg.START, first)
    g.add_conditional_edges("a", pick)
    app = g.compile()
    seen = [asyncio.run(app.ainvoke({"n": 0, "log": []})), asyncio.run(app.ainvoke({"n": 0, "log": [1, 2]}))]

    class Chooser:  # a callable object whose __call__ is a coroutine function, with a path map
        async def __call__(self, state: Counted) -> str:
            return "long" if len(state["log"]) > 1 else "short"

    h = lg.StateGraph(Counted)
    h.add_node("a", lambda s: {"log": ["a"]})
    h.add_node("b", lambda s: {"log": ["b"]})
    h.add_node("c", lambda s: {"log": ["c"]})
    h.add_edge(lg.START, "a")
    h.add_conditional_edges("a", Chooser(), {"long": "b", "short": "c"})
    routed = h.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["b", "c"])

    async def updated() -> list[Any]:
        first_stop = await routed.ainvoke({"n": 0, "log": []}, config("h"))
        await routed.aupdate_state(config("h"), {"log": ["x", "y"]}, as_node="a")  # routed again, awaited
        return [first_stop, (await routed.aget_state(config("h"))).next, await routed.ainvoke(None, config("h"))]

    return [*seen, asyncio.run(updated())]


class Fooed(TypedDict):
    foo: Annotated[str, operator.add]
    bar: str


def command_as_input(lg: SimpleNamespace) -> list[Any]:
    """``invoke(Command(update=..., goto=..., resume=...))``: the update is applied before the step goes on
    (at an interrupt, at a breakpoint, on a finished thread), goto's nodes run in that step."""

    def ask(state: Fooed) -> dict[str, Any]:
        return {"foo": f"|ask:{lg.interrupt('q?')}:{state.get('bar')}"}

    def build(**options: Any) -> Any:
        g = lg.StateGraph(Fooed)
        g.add_node("n1", lambda s: {"foo": "|1"})
        g.add_node("ask", ask)
        g.add_node("n2", lambda s: {"foo": "|2"})
        g.add_edge(lg.START, "n1")
        g.add_edge("n1", "ask")
        g.add_edge("ask", "n2")
        return g.compile(checkpointer=lg.InMemorySaver(), **options)

    app = build()
    seen = [app.invoke({"foo": "x"}, config("a")), app.invoke(lg.Command(update={"bar": "B"}, resume="y"), config("a"))]
    seen += [app.invoke({"foo": "x"}, config("b")), app.invoke(lg.Command(update={"bar": "B"}), config("b")),
             app.invoke(lg.Command(resume="ok"), config("b"))]
    seen += [app.invoke({"foo": "x"}, config("c")), app.invoke(lg.Command(goto="n2", resume="go"), config("c"))]
    seen += [app.invoke(lg.Command(update={"bar": "late"}), config("c")),
             app.invoke(lg.Command(goto="n2"), config("c")),
             list(app.stream(lg.Command(goto="n2", update={"foo": "|u"}), config("c"), stream_mode="updates"))]
    paused = build(interrupt_before=["ask"])
    seen += [paused.invoke({"foo": "x"}, config("p")),
             observed(lambda: paused.invoke(lg.Command(goto=["n2"], update={"bar": "P"}), config("p")))]
    return seen


def update_state_writers(lg: SimpleNamespace) -> list[Any]:
    """update_state's special writers: ``__copy__`` (a sibling ``fork``), ``__start__``, ``__input__`` (an input
    checkpoint its run applies), ``__end__`` with None; and a first update of a thread never run."""
    g = lg.StateGraph(Fooed)
    g.add_node("n1", lambda s: {"foo": "|1"})
    g.add_node("n2", lambda s: {"foo": "|2"})
    g.add_edge(lg.START, "n1")
    g.add_edge("n1", "n2")
    app = g.compile(checkpointer=lg.InMemorySaver())

    def shown(cfg: dict[str, Any]) -> Any:
        s = app.get_state(cfg)
        return s.metadata["source"], s.metadata["step"], s.values, s.next, [t.name for t in s.tasks]

    seen = []
    app.invoke({"foo": "x"}, config("copy"))
    before = next(s for s in app.get_state_history(config("copy")) if s.next == ("n2",))
    copied = app.update_state(before.config, None, as_node="__copy__")
    seen += [shown(copied), app.get_state(copied).parent_config == before.parent_config, app.invoke(None, copied)]
    for thread, writer, values in (("start", "__start__", {"foo": "|s", "bar": "B"}),
                                   ("input", "__input__", {"foo": "|i"})):
        app.invoke({"foo": "x"}, config(thread))
        updated = app.update_state(config(thread), values, as_node=writer)
        seen += [shown(updated), app.invoke(None, updated)]
    for thread, writer in (("new-input", "__input__"), ("new-start", "__start__"), ("new-node", "n1")):
        updated = app.update_state(config(thread), {"foo": "|f"}, as_node=writer)
        seen += [shown(updated), app.invoke(None, updated)]
    waits = lg.StateGraph(Fooed)
    waits.add_node("ask", lambda s: {"foo": lg.interrupt("q")})
    waits.add_node("sibling", lambda s: {"foo": "|sib"})
    waits.add_node("after", lambda s: {"foo": "|after"})
    waits.add_edge(lg.START, "ask")
    waits.add_edge(lg.START, "sibling")
    waits.add_edge("ask", "after")
    app = waits.compile(checkpointer=lg.InMemorySaver())
    app.invoke({"foo": "x"}, config("end"))  # __end__ on a waiting thread: its finished sibling's write kept
    seen += [shown(app.update_state(config("end"), None, as_node="__end__")), app.invoke(None, config("end"))]
    return seen


def any_callable_is_a_node(lg: SimpleNamespace) -> list[Any]:
    """``fn(*args)``, a Mock, a callable object (named after its class), a LangChain Runnable (named by its
    name, run with the node's input), and a function that takes no argument (added, never reached)."""

    def star(*args: Any) -> dict[str, Any]:
        return {"log": [f"star:{len(args)}"]}

    class Counter:
        def __call__(self, state: Counted) -> dict[str, Any]:
            return {"log": [type(self).__name__]}

    async def later(state: dict[str, Any]) -> dict[str, Any]:
        return {"log": ["async runnable"]}

    mock = Mock(return_value={"log": ["mock"]})
    g = lg.StateGraph(Counted)
    g.add_node(star)
    g.add_node("mock", mock)
    g.add_node(Counter())
    g.add_node("chain", RunnableLambda(lambda s: {"log": [f"chain:{len(s['log'])}"]}))
    g.add_node(RunnableLambda(later, name="later"))
    g.add_node("unused", lambda: {"log": ["never"]})
    for start, end in (("star", "mock"), ("mock", "Counter"), ("Counter", "chain"), ("chain", "later")):
        g.add_edge(start, end)
    g.add_edge(lg.START, "star")
    result = asyncio.run(g.compile().ainvoke({"n": 0, "log": []}))
    return [result, mock.call_count, mock.call_args.args]


class Overall(TypedDict):
    foo: Annotated[int, operator.add]
    bar: str


class RouterState(TypedDict):
    baz: str


class Node2State(TypedDict):
    foo: Annotated[int, operator.add]
    baz: str


def path_functions_read_their_schema(lg: SimpleNamespace) -> list[Any]:
    """A path function annotated with a private schema gets that schema's channels; a node's undeclared keys
    are dropped."""
    seen: list[Any] = []

    def router(state: RouterState) -> str:
        seen.append(state)
        return "node_2" if state["baz"] == "meow" else lg.END

    g = lg.StateGraph(Overall)
    g.add_node("node_1", lambda s: {"foo": 1, "baz": "meow"})

    def node_2(state: Node2State) -> dict[str, Any]:
        return {"foo": 1, "bar": state["baz"], "something_else": "dropped"}

    g.add_node("node_2", node_2)
    g.add_conditional_edges("node_1", router)
    g.add_edge(lg.START, "node_1")
    return [g.compile().invoke({"foo": 0}), seen]


def sends_of_commands(lg: SimpleNamespace) -> list[Any]:
    """A Send's argument may be a Command: the node gets it, and returning it routes as the Command says."""

    def node(name: str) -> Any:
        def run(state: Any) -> Any:
            if isinstance(state, lg.Command):
                return [state, lg.Command(update=[f"{name}|cmd"])]
            return [name] if isinstance(state, list) else [f"{name}|{state}"]

        run.__name__ = name
        return run

    g = lg.StateGraph(Annotated[list, operator.add])
    for name in ("1", "2", "3"):
        g.add_node(node(name))
    g.add_edge(lg.START, "1")
    g.add_conditional_edges("1", lambda s: [lg.Send("2", lg.Command(goto=lg.Send("2", 3))), "3"])
    app = g.compile(checkpointer=lg.InMemorySaver())
    return [app.invoke(["0"], config("s"))]


PROGRAMS = [annotations_are_not_enforced, root_states, pydantic_states, lists_of_commands, async_path_functions,
            command_as_input, update_state_writers, any_callable_is_a_node, path_functions_read_their_schema,
            sends_of_commands]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
