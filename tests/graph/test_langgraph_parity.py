"""LangGraph programs run on statehitl with their imports changed, and give what they give on LangGraph.

Each program below is written once against a namespace of LangGraph's public names and run twice: on
the real LangGraph (the `langgraph` dependency group, which `./dev.sh test` installs) and on statehitl.
What it observes (results, stream chunks, node calls) must be equal, with interrupt ids (which each
library derives its own way) replaced by the interrupts' values.
"""

from __future__ import annotations

import dataclasses
import operator
import threading
import time
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest

# LangGraph itself is the oracle (./dev.sh test installs its group): a missing one fails, never skips
from langchain_core.runnables import RunnableConfig  # the annotations LangGraph reads parameters by
from langgraph.runtime import Runtime
from langgraph.types import StreamWriter
from pydantic import BaseModel


def statehitl_names() -> SimpleNamespace:
    from statehitl.checkpoint import InMemorySaver
    from statehitl.config import get_config, get_stream_writer
    from statehitl.errors import GraphInterrupt, GraphRecursionError, InvalidUpdateError
    from statehitl.graph import END, START, StateGraph
    from statehitl.runtime import get_runtime
    from statehitl.types import Command, RetryPolicy, Send, interrupt

    return SimpleNamespace(StateGraph=StateGraph, START=START, END=END, Send=Send, Command=Command,
                           interrupt=interrupt, InMemorySaver=InMemorySaver, get_stream_writer=get_stream_writer,
                           get_config=get_config, get_runtime=get_runtime, RetryPolicy=RetryPolicy,
                           GraphRecursionError=GraphRecursionError, InvalidUpdateError=InvalidUpdateError,
                           GraphInterrupt=GraphInterrupt)


def langgraph_names() -> SimpleNamespace:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.config import get_config, get_stream_writer
    from langgraph.errors import GraphInterrupt, GraphRecursionError, InvalidUpdateError
    from langgraph.graph import END, START, StateGraph
    from langgraph.runtime import get_runtime
    from langgraph.types import Command, RetryPolicy, Send, interrupt

    return SimpleNamespace(StateGraph=StateGraph, START=START, END=END, Send=Send, Command=Command,
                           interrupt=interrupt, InMemorySaver=InMemorySaver, get_stream_writer=get_stream_writer,
                           get_config=get_config, get_runtime=get_runtime, RetryPolicy=RetryPolicy,
                           GraphRecursionError=GraphRecursionError, InvalidUpdateError=InvalidUpdateError,
                           GraphInterrupt=GraphInterrupt)


def plain(value: Any) -> Any:
    """What a program saw, without what differs by design: interrupt ids (each library derives its own)."""
    if hasattr(value, "value") and hasattr(value, "id") and type(value).__name__ == "Interrupt":
        return ("interrupt", plain(value.value))
    if isinstance(value, dict):  # interrupts raised in one step are listed in whatever order they were raised
        return {k: sorted(map(plain, v), key=repr) if k == "__interrupt__" else plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(plain(v) for v in value) if not hasattr(value, "_fields") else tuple(map(plain, value))
    return value


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


class Log(TypedDict):
    log: Annotated[list, operator.add]


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


class Overall(In, Out):
    notes: str


class Private(TypedDict):
    scratch: str


def recorder(lg: SimpleNamespace, name: str, calls: list[str] | None = None) -> Any:
    def node(state: Log) -> dict[str, Any]:
        if calls is not None:
            calls.append(name)
        return {"log": [name]}

    node.__name__ = name
    return node


# -- the programs -----------------------------------------------------------------------------------


def fan_out_and_in(lg: SimpleNamespace) -> list[Any]:
    """Parallel branches write in node-name order; two plain edges into c run it once per step."""
    g = lg.StateGraph(Log)
    for name in ("zed", "amy", "c"):
        g.add_node(name, recorder(lg, name))
    g.add_edge(lg.START, "zed")
    g.add_edge(lg.START, "amy")
    g.add_edge("zed", "c")
    g.add_edge("amy", "c")
    return [g.compile().invoke({"log": ["in"]})]


def waiting_edge(lg: SimpleNamespace) -> list[Any]:
    """``add_edge([a, b2], c)`` waits for both; plain edges would run c twice."""
    seen = []
    for join in (True, False):
        g = lg.StateGraph(Log)
        for name in ("a", "b", "b2", "c"):
            g.add_node(name, recorder(lg, name))
        g.add_edge(lg.START, "a")
        g.add_edge(lg.START, "b")
        g.add_edge("b", "b2")
        if join:
            g.add_edge(["a", "b2"], "c")
        else:
            g.add_edge("a", "c")
            g.add_edge("b2", "c")
        seen.append(g.compile().invoke({"log": []}))
        # a and b run at once, each in a worker thread in both libraries: which update comes first is a race
        seen.append(sorted(map(repr, g.compile().stream({"log": []}, stream_mode="updates"))))
    return seen


def branch_without_exit(lg: SimpleNamespace) -> list[Any]:
    class S(TypedDict):
        x: int

    g = lg.StateGraph(S)
    g.add_node("a", lambda s: {"x": s["x"] + 1})
    g.add_node("dead", lambda s: {"x": s["x"] * 10})
    g.add_node("island", lambda s: {"x": 99})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "dead")
    return [g.compile().invoke({"x": 1})]


def map_reduce(lg: SimpleNamespace) -> list[Any]:
    class S(TypedDict):
        items: list
        results: Annotated[list, operator.add]

    received = []

    def work(arg: dict[str, Any]) -> dict[str, Any]:
        received.append(arg)
        return {"results": [f"w:{arg['item']}"]}

    g = lg.StateGraph(S)
    g.add_node("plan", lambda s: {"results": ["plan"]})
    g.add_node("work", work)
    g.add_node("plain", lambda s: {"results": ["plain"]})
    g.add_edge(lg.START, "plan")
    g.add_conditional_edges("plan", lambda s: [lg.Send("work", {"item": i}) for i in s["items"]], ["work"])
    g.add_edge("plan", "plain")
    result = g.compile().invoke({"items": ["x", "y", "z"], "results": []})
    g2 = lg.StateGraph(S)
    g2.add_node("w", lambda s: {"results": [s.get("item", "PLAIN")]})
    g2.add_conditional_edges(lg.START, lambda s: ["w", lg.Send("w", {"item": "sent"})])
    return [result, sorted(received, key=str), g2.compile().invoke({"items": [], "results": []})]


def commands(lg: SimpleNamespace) -> list[Any]:
    class S(TypedDict):
        log: Annotated[list, operator.add]
        v: int

    def rec(name: str) -> Any:
        return lambda s: {"log": [name]}

    seen = []
    g = lg.StateGraph(S)
    g.add_node("a", lambda s: lg.Command(goto="x", update={"log": ["a"], "v": 1}))
    g.add_node("x", rec("x"))
    g.add_node("y", rec("y"))
    g.add_edge(lg.START, "a")
    g.add_edge("a", "y")  # goto adds to the static edges
    seen.append(g.compile().invoke({"log": [], "v": 0}))
    g = lg.StateGraph(S)
    g.add_node("a", lambda s: [lg.Command(goto="x", update={"log": ["c1"]}),
                               lg.Command(goto="y", update={"log": ["c2"]})])
    g.add_node("x", rec("x"))
    g.add_node("y", rec("y"))
    g.add_edge(lg.START, "a")
    seen.append(g.compile().invoke({"log": [], "v": 0}))
    g = lg.StateGraph(S)
    g.add_node("a", lambda s: lg.Command(goto=[lg.Send("x", {"v": 5}), lg.Send("x", {"v": 6})]))
    g.add_node("x", lambda s: {"log": [f"x{s['v']}"]})
    g.add_edge(lg.START, "a")
    seen.append(g.compile().invoke({"log": [], "v": 0}))
    g = lg.StateGraph(S)
    g.add_node("a", lambda s: lg.Command(goto=lg.END, update={"log": ["a"]}))
    g.add_node("y", rec("y"))
    g.add_edge(lg.START, "a")
    seen.append(g.compile().invoke({"log": [], "v": 0}))
    return seen


def interrupts_in_order(lg: SimpleNamespace) -> list[Any]:
    calls: list[str] = []

    def ask(state: Log) -> dict[str, Any]:
        calls.append("ask")
        first = lg.interrupt("q1")
        second = lg.interrupt({"after": first})
        return {"log": [first, second]}

    g = lg.StateGraph(Log)
    g.add_node("ask", ask)
    g.add_edge(lg.START, "ask")
    app = g.compile(checkpointer=lg.InMemorySaver())
    c = config("t")
    seen = [app.invoke({"log": []}, c)]
    seen.append(app.invoke(lg.Command(resume="a1"), c))
    seen.append(app.invoke(lg.Command(resume="a2"), c))
    seen.append(list(calls))
    seen.append([i.value for i in seen[0]["__interrupt__"]])
    return seen


def parallel_interrupts(lg: SimpleNamespace) -> list[Any]:
    calls: list[str] = []

    def make(name: str, asks: bool) -> Any:
        def node(state: Log) -> dict[str, Any]:
            calls.append(name)
            return {"log": [f"{name}={lg.interrupt(f'q-{name}')}" if asks else name]}

        return node

    g = lg.StateGraph(Log)
    for name, asks in (("p", True), ("q", True), ("sib", False)):
        g.add_node(name, make(name, asks))
        g.add_edge(lg.START, name)
        g.add_edge(name, "after")
    g.add_node("after", make("after", False))
    app = g.compile(checkpointer=lg.InMemorySaver())
    c = config("par")
    seen = [app.invoke({"log": []}, c), sorted(app.get_state(c).next)]
    try:
        app.invoke(lg.Command(resume="x"), c)
    except Exception as exc:  # both name it: the id must be given when several wait
        seen.append("multiple pending interrupts" in str(exc))
    ids = {i.value: i.id for i in app.get_state(c).interrupts}
    seen.append(app.invoke(lg.Command(resume={ids["q-p"]: "vp"}), c))  # q asks again, p is done
    seen.append(app.invoke(lg.Command(resume={ids["q-q"]: "vq"}), c))
    seen.append(sorted(calls))
    return seen


def breakpoints(lg: SimpleNamespace) -> list[Any]:
    seen = []
    for options in ({"interrupt_before": ["b"]}, {"interrupt_after": ["b"]}):
        g = lg.StateGraph(Log)
        for name in "abc":
            g.add_node(name, recorder(lg, name))
        g.add_edge(lg.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        app = g.compile(checkpointer=lg.InMemorySaver(), **options)
        c = config("bp")
        seen.append(app.invoke({"log": []}, c))
        seen.append(app.get_state(c).next)
        seen.append(app.invoke(None, c))
        seen.append(app.get_state(c).next)
    return seen


def streams(lg: SimpleNamespace) -> list[Any]:
    def a(state: Log) -> dict[str, Any]:
        lg.get_stream_writer()({"progress": "a"})
        return {"log": ["a"]}

    def b(state: Log, writer: StreamWriter) -> None:
        writer("from b")

    g = lg.StateGraph(Log)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile()
    return [list(app.stream({"log": []}, stream_mode=mode)) for mode in
            ("updates", "values", "custom", ["updates", "custom"])]


def streams_that_stop(lg: SimpleNamespace) -> list[Any]:
    g = lg.StateGraph(Log)
    g.add_node("a", recorder(lg, "a"))
    g.add_node("b", lambda s: {"log": [lg.interrupt("ok?")]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = [list(app.stream({"log": []}, config(mode), stream_mode=mode)) for mode in ("values", "updates")]
    seen.append(list(app.stream(lg.Command(resume="fine"), config("updates"), stream_mode="updates")))
    return seen


def task_and_checkpoint_streams(lg: SimpleNamespace) -> list[Any]:
    """``tasks``, ``checkpoints`` and ``debug`` chunks, less ids and clocks (each library makes its own) and
    LangGraph's extra step -1 checkpoint (statehitl's history begins with one input checkpoint)."""
    g = lg.StateGraph(Log)
    g.add_node("a", recorder(lg, "a"))
    g.add_node("b", lambda s: {"log": [lg.interrupt("ok?")]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=lg.InMemorySaver())
    tasks = [{k: [i["value"] for i in v] if k == "interrupts" else v for k, v in chunk.items() if k != "id"}
             for chunk in app.stream({"log": []}, config("t"), stream_mode="tasks")]
    checkpoints = [(c["metadata"]["source"] if c["metadata"]["step"] else "input", c["metadata"]["step"], c["next"],
                    c["values"], [(t["name"], t["interrupts"]) for t in c["tasks"]], c["parent_config"] is None)
                   for c in app.stream({"log": []}, config("c"), stream_mode="checkpoints")
                   if c["metadata"]["step"] >= 0]
    debug = [(d["type"], d["step"]) for d in app.stream({"log": []}, config("d"), stream_mode="debug")
             if d["step"] >= 0]
    # statehitl also stores the step that stopped on an interrupt as a checkpoint of its own (at the same
    # step), where LangGraph keeps it as the writes pending on the step's checkpoint
    return [tasks, [c for i, c in enumerate(checkpoints) if i == 0 or c[1] != checkpoints[i - 1][1]][1:],
            [d for i, d in enumerate(debug) if d[0] != "checkpoint" or d not in debug[:i]][1:]]


def config_and_limits(lg: SimpleNamespace) -> list[Any]:
    class S(TypedDict):
        n: int

    def node(state: S, config: RunnableConfig) -> dict[str, Any]:
        return {"n": state["n"] + len(config["configurable"]["thread_id"])}

    g = lg.StateGraph(S)
    g.add_node("node", node)
    g.add_edge(lg.START, "node")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = [app.invoke({"n": 1}, config("four"))]
    loop = lg.StateGraph(S)
    loop.add_node("again", lambda s: {"n": s["n"] + 1})
    loop.add_edge(lg.START, "again")
    loop.add_edge("again", "again")
    try:
        loop.compile().invoke({"n": 0}, {"recursion_limit": 5})
    except lg.GraphRecursionError as exc:
        seen.append(("recursion", isinstance(exc, RecursionError)))
    two = lg.StateGraph(S)
    two.add_node("a", lambda s: {"n": 1})
    two.add_node("b", lambda s: {"n": 2})
    two.add_edge(lg.START, "a")
    two.add_edge(lg.START, "b")
    try:
        two.compile().invoke({"n": 0})
    except lg.InvalidUpdateError:
        seen.append("two writers refused")
    return seen


def failed_step_keeps_finished_work(lg: SimpleNamespace) -> list[Any]:
    """A step that failed keeps what its finished tasks wrote: ``invoke(None, config)`` runs only the one
    that failed (here it fails once the other has finished; LangGraph cancels a task still running)."""
    calls: list[str] = []
    fail = [True]
    steady_done = threading.Event()

    def steady(state: Log) -> dict[str, Any]:
        calls.append("steady")
        steady_done.set()
        return {"log": ["steady"]}

    def flaky(state: Log) -> dict[str, Any]:
        calls.append("flaky")
        assert steady_done.wait(10)
        time.sleep(0.05)  # steady's task has returned its writes
        if fail.pop() if fail else False:
            raise RuntimeError("flaky failed")
        return {"log": ["flaky"]}

    g = lg.StateGraph(Log)
    g.add_node("steady", steady)
    g.add_node("flaky", flaky)
    g.add_edge(lg.START, "steady")
    g.add_edge(lg.START, "flaky")
    app = g.compile(checkpointer=lg.InMemorySaver())
    try:
        app.invoke({"log": []}, config("f"))
    except RuntimeError as exc:
        seen: list[Any] = [str(exc), app.get_state(config("f")).next]
    seen += [app.invoke(None, config("f")), sorted(calls)]
    return seen


def retry_policies(lg: SimpleNamespace) -> list[Any]:
    """``add_node(retry_policy=)`` calls a node again after it raised what the policy retries (a
    ``ConnectionError`` by default), up to ``max_attempts``; a ``ValueError`` fails the step at once."""
    calls: list[str] = []

    def flaky(state: Log) -> dict[str, Any]:
        calls.append("flaky")
        if calls.count("flaky") < 3:
            raise ConnectionError("not yet")
        return {"log": ["flaky"]}

    def wrong(state: Log) -> dict[str, Any]:
        calls.append("wrong")
        raise ValueError("a bug")

    policy = lg.RetryPolicy(initial_interval=0.01, jitter=False)
    g = lg.StateGraph(Log)
    g.add_node("flaky", flaky, retry_policy=policy)
    g.add_edge(lg.START, "flaky")
    seen: list[Any] = [g.compile().invoke({"log": []})]
    g = lg.StateGraph(Log)
    g.add_node("wrong", wrong, retry_policy=policy)
    g.add_edge(lg.START, "wrong")
    try:
        g.compile().invoke({"log": []})
    except ValueError as exc:
        seen.append(str(exc))
    g = lg.StateGraph(Log)
    g.add_node("flaky", flaky, retry_policy=lg.RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False,
                                                             retry_on=ConnectionError))
    g.add_edge(lg.START, "flaky")
    calls.clear()
    try:
        g.compile().invoke({"log": []})
    except ConnectionError as exc:
        seen.append(str(exc))
    return [*seen, calls]


def deferred_node(lg: SimpleNamespace) -> list[Any]:
    """``add_node(defer=True)``: an aggregator reached by branches of different lengths runs once, after them all."""
    g = lg.StateGraph(Log)
    for name in "abcd":
        g.add_node(name, recorder(lg, name))
    g.add_node("agg", lambda s: {"log": [f"agg saw {len(s['log'])}"]}, defer=True)
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("c", "d")
    g.add_edge("b", "agg")
    g.add_edge("d", "agg")
    app = g.compile(checkpointer=lg.InMemorySaver())
    return [app.invoke({"log": []}, config("defer")),
            list(app.stream({"log": []}, config("d2"), stream_mode="updates"))]


def node_metadata(lg: SimpleNamespace) -> list[Any]:
    """A node's config says which node and step it is, with what ``add_node(metadata=)`` gave it."""
    seen: list[Any] = []

    def look(state: Log, config: RunnableConfig) -> None:
        meta = config["metadata"]
        seen.append((meta["langgraph_node"], meta["langgraph_step"], meta.get("team"),
                     lg.get_config()["metadata"]["langgraph_node"]))

    g = lg.StateGraph(Log)
    g.add_node("first", look, metadata={"team": "ops"})
    g.add_node("second", look)
    g.add_edge(lg.START, "first")
    g.add_edge("first", "second")
    g.compile().invoke({"log": []})
    return seen


@dataclasses.dataclass
class Who:
    user: str


def runtime_context(lg: SimpleNamespace) -> list[Any]:
    """LangGraph 1's run context: ``invoke(..., context=...)``, read through a node's ``runtime`` or
    ``get_runtime()``, and the runtime's stream writer."""

    def greet(state: Log, runtime: Runtime[Who]) -> dict[str, Any]:
        runtime.stream_writer(f"greeting {runtime.context.user}")
        return {"log": [f"hi {runtime.context.user}", lg.get_runtime(Who).context.user]}

    g = lg.StateGraph(Log, context_schema=Who)
    g.add_node("greet", greet)
    g.add_edge(lg.START, "greet")
    app = g.compile()
    return [app.invoke({"log": []}, context=Who("ann")),
            list(app.stream({"log": []}, context=Who("bob"), stream_mode=["custom", "updates"]))]


def subgraph_interrupts(lg: SimpleNamespace) -> list[Any]:
    calls: list[str] = []

    def make(name: str, asks: bool = False) -> Any:
        def node(state: Log) -> dict[str, Any]:
            calls.append(name)
            return {"log": [f"{name}={lg.interrupt('sub-q')}" if asks else name]}

        return node

    sub = lg.StateGraph(Log)
    sub.add_node("s1", make("s1"))
    sub.add_node("s2", make("s2", True))
    sub.add_node("s3", make("s3"))
    sub.add_edge(lg.START, "s1")
    sub.add_edge("s1", "s2")
    sub.add_edge("s2", "s3")
    parent = lg.StateGraph(Log)
    parent.add_node("p1", make("p1"))
    parent.add_node("sub", sub.compile())
    parent.add_node("p2", make("p2"))
    parent.add_edge(lg.START, "p1")
    parent.add_edge("p1", "sub")
    parent.add_edge("sub", "p2")
    app = parent.compile(checkpointer=lg.InMemorySaver())
    c = config("sub")
    seen = [app.invoke({"log": []}, c), app.get_state(c).next]
    (task,) = app.get_state(c, subgraphs=True).tasks
    inside = task.state
    seen.append((task.name, [i.value for i in task.interrupts], inside.values, inside.next,
                 [(t.name, [i.value for i in t.interrupts]) for t in inside.tasks],
                 [i.value for i in inside.interrupts],
                 inside.config["configurable"]["checkpoint_ns"].split(":")[0]))
    seen.append(sorted(app.get_state(c).tasks[0].state["configurable"]))
    seen.append(app.invoke(lg.Command(resume="ans"), c))
    seen.append(list(calls))
    return seen


def subgraph_streams(lg: SimpleNamespace) -> list[Any]:
    """A subgraph node's update is its final state on the shared channels (a reducer channel gets it again)."""
    sub = lg.StateGraph(Log)
    sub.add_node("s1", recorder(lg, "s1"))
    sub.add_edge(lg.START, "s1")
    parent = lg.StateGraph(Log)
    parent.add_node("p1", recorder(lg, "p1"))
    parent.add_node("sub", sub.compile())
    parent.add_edge(lg.START, "p1")
    parent.add_edge("p1", "sub")
    app = parent.compile()
    nested = [(tuple(n.split(":")[0] for n in namespace), chunk)  # a namespace is "node:<task id>"; ids differ
              for namespace, chunk in app.stream({"log": ["in"]}, stream_mode="updates", subgraphs=True)]
    return [list(app.stream({"log": ["in"]}, stream_mode="updates")), app.invoke({"log": ["in"]}), nested]


def subgraph_stream_with_an_interrupt(lg: SimpleNamespace) -> list[Any]:
    """``stream(subgraphs=True)`` of a subgraph that asks: its values, updates and interrupt under its own
    namespace, then the parent's; and the resume's chunks."""
    sub = lg.StateGraph(Log)
    sub.add_node("s1", recorder(lg, "s1"))
    sub.add_node("s2", lambda s: {"log": [f"s2={lg.interrupt('sub-q')}"]})
    sub.add_edge(lg.START, "s1")
    sub.add_edge("s1", "s2")
    parent = lg.StateGraph(Log)
    parent.add_node("p1", recorder(lg, "p1"))
    parent.add_node("sub", sub.compile())
    parent.add_edge(lg.START, "p1")
    parent.add_edge("p1", "sub")
    app = parent.compile(checkpointer=lg.InMemorySaver())

    def run(given: Any) -> list[Any]:
        return [(tuple(n.split(":")[0] for n in namespace), mode, chunk) for namespace, mode, chunk in
                app.stream(given, config("ss"), stream_mode=["values", "updates"], subgraphs=True)]

    return [run({"log": []}), run(lg.Command(resume="ok"))]


def subgraph_invoked_in_a_node(lg: SimpleNamespace) -> list[Any]:
    """A graph invoked in a node's code is that node's subgraph: its interrupt stops the node, and the
    resume goes on inside it (its finished nodes do not run again)."""
    calls: list[str] = []

    class Question(TypedDict):
        q: str
        a: str

    def pre(state: Question) -> dict[str, Any]:
        calls.append("pre")
        return {"q": state["q"] + "?"}

    def ask(state: Question) -> dict[str, Any]:
        calls.append("ask")
        return {"a": lg.interrupt(state["q"])}

    inner = lg.StateGraph(Question)
    inner.add_node("pre", pre)
    inner.add_node("ask", ask)
    inner.add_edge(lg.START, "pre")
    inner.add_edge("pre", "ask")
    sub = inner.compile()

    def wrapper(state: Log) -> dict[str, Any]:
        calls.append("wrapper")
        return {"log": [sub.invoke({"q": state["log"][0]})["a"]]}

    outer = lg.StateGraph(Log)
    outer.add_node("wrapper", wrapper)
    outer.add_edge(lg.START, "wrapper")
    app = outer.compile(checkpointer=lg.InMemorySaver())
    c = config("wrapped")
    return [app.invoke({"log": ["why"]}, c), app.invoke(lg.Command(resume="because"), c), list(calls)]


class Topic(TypedDict):
    topic: str
    seen: Annotated[list, operator.add]


def stateful_subgraph(lg: SimpleNamespace) -> list[Any]:
    """A subgraph compiled with ``checkpointer=True`` goes on from its own state on the parent's next call
    (the input merged into it; its whole state written back, so a shared reducer channel grows twice)."""
    inner = lg.StateGraph(Topic)
    inner.add_node("remember", lambda s: {"seen": [s["topic"]]})
    inner.add_node("ask", lambda s: {"seen": [lg.interrupt(f"{s['topic']}?")]})
    inner.add_edge(lg.START, "remember")
    inner.add_edge("remember", "ask")
    outer = lg.StateGraph(Topic)
    outer.add_node("sub", inner.compile(checkpointer=True))
    outer.add_edge(lg.START, "sub")
    app = outer.compile(checkpointer=lg.InMemorySaver())
    c = config("stateful")
    return [app.invoke({"topic": "a", "seen": []}, c), app.invoke(lg.Command(resume="yes"), c),
            app.invoke({"topic": "b"}, c), app.invoke(lg.Command(resume="again"), c)]


def command_to_parent(lg: SimpleNamespace) -> list[Any]:
    """``Command(graph=Command.PARENT)`` stops the subgraph (its earlier writes dropped) and routes the parent."""
    sub = lg.StateGraph(Log)
    sub.add_node("s1", recorder(lg, "s1"))
    sub.add_node("s2", lambda s: lg.Command(graph=lg.Command.PARENT, goto="p_after", update={"log": ["from_s2"]}))
    sub.add_node("s3", recorder(lg, "s3"))
    sub.add_edge(lg.START, "s1")
    sub.add_edge("s1", "s2")
    sub.add_edge("s2", "s3")
    parent = lg.StateGraph(Log)
    parent.add_node("sub", sub.compile())
    parent.add_node("p_after", recorder(lg, "p_after"))
    parent.add_node("p_normal", recorder(lg, "p_normal"))
    parent.add_edge(lg.START, "sub")
    parent.add_edge("sub", "p_normal")
    app = parent.compile()
    return [app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))]


def interrupt_passes_a_broad_except(lg: SimpleNamespace) -> list[Any]:
    """A node that catches broad exceptions lets the interrupt through with ``except GraphInterrupt: raise``."""

    def careful(state: Log) -> dict[str, Any]:
        try:
            answer = lg.interrupt("sure?")
        except lg.GraphInterrupt:
            raise
        except Exception:
            answer = "swallowed"
        return {"log": [answer]}

    g = lg.StateGraph(Log)
    g.add_node("careful", careful)
    g.add_edge(lg.START, "careful")
    app = g.compile(checkpointer=lg.InMemorySaver())
    return [app.invoke({"log": []}, config("c")), app.invoke(lg.Command(resume="yes"), config("c"))]


def schemas(lg: SimpleNamespace) -> list[Any]:
    @dataclasses.dataclass
    class Order:
        item: str
        qty: int = 1
        log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)

    class Pyd(BaseModel):
        text: str
        n: int = 0

    seen = []
    g = lg.StateGraph(Order)
    g.add_node("bump", lambda s: {"qty": s.qty + 1, "log": [type(s).__name__]})
    g.add_edge(lg.START, "bump")
    seen.append(g.compile().invoke({"item": "tea"}))
    g = lg.StateGraph(Pyd)
    g.add_node("count", lambda s: {"n": len(s.text)})
    g.add_edge(lg.START, "count")
    seen.append(dict(g.compile().invoke({"text": "hello"})))
    root = lg.StateGraph(Annotated[list, operator.add])
    root.add_node("more", lambda s: [len(s)])
    root.add_edge(lg.START, "more")
    seen.append(root.compile().invoke([1, 2]))

    def think(state: In) -> Private:
        return {"scratch": state["question"].upper()}

    def answer(state: Private) -> Out:
        return {"answer": f"{state['scratch']}!"}

    io = lg.StateGraph(Overall, input_schema=In, output_schema=Out)
    io.add_node("think", think)
    io.add_node("answer", answer)
    io.add_edge(lg.START, "think")
    io.add_edge("think", "answer")
    seen.append(io.compile().invoke({"question": "why"}))
    return seen


PROGRAMS = [fan_out_and_in, waiting_edge, branch_without_exit, map_reduce, commands, interrupts_in_order,
            parallel_interrupts, breakpoints, streams, streams_that_stop, task_and_checkpoint_streams,
            config_and_limits, subgraph_interrupts, subgraph_streams, subgraph_stream_with_an_interrupt,
            subgraph_invoked_in_a_node, stateful_subgraph,
            command_to_parent, schemas, interrupt_passes_a_broad_except, node_metadata, runtime_context,
            failed_step_keeps_finished_work, retry_policies, deferred_node]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
