"""LangGraph behaviours at the edges of the graph API (root-value graphs called from code, validation, values
that are never stored), as programs written once against each library's names, run on LangGraph and on
statehitl, and compared (as ``test_langgraph_parity``'s are)."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import operator
import threading
import time
import uuid
from types import SimpleNamespace
from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from pydantic import BaseModel, Field
from test_langgraph_parity import Log, config, langgraph_names, plain, statehitl_names


def with_functional(names: SimpleNamespace, module: str) -> SimpleNamespace:
    func = __import__(f"{module}.func", fromlist=["entrypoint", "task"])
    managed = __import__(f"{module}.managed", fromlist=["RemainingSteps"])
    cache = __import__(f"{module}.cache.memory", fromlist=["InMemoryCache"])
    types = __import__(f"{module}.types", fromlist=["CachePolicy"])
    errors = __import__(f"{module}.errors", fromlist=["NodeTimeoutError"])
    serde = __import__(f"{module}.checkpoint.serde.jsonplus", fromlist=["JsonPlusSerializer"])
    return SimpleNamespace(**vars(names), entrypoint=func.entrypoint, task=func.task,
                           RemainingSteps=managed.RemainingSteps, InMemoryCache=cache.InMemoryCache,
                           CachePolicy=types.CachePolicy, TimeoutPolicy=types.TimeoutPolicy,
                           NodeTimeoutError=errors.NodeTimeoutError, JsonPlusSerializer=serde.JsonPlusSerializer)


# -- the programs -----------------------------------------------------------------------------------


def root_value_graph_invoked_in_code(lg: SimpleNamespace) -> list[Any]:
    """A graph whose state is one value (``StateGraph(list[str])``), invoked from an entrypoint and from
    another graph's node, takes that value as its input, whatever its type, and returns its own value."""

    def suffix(items: list[str]) -> list[str]:
        return [item + "a" for item in items]

    inner = lg.StateGraph(list[str])
    inner.add_node("suffix", suffix)
    inner.add_edge(lg.START, "suffix")
    add_a = inner.compile()

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(items: list[str]) -> list[str]:
        answer = lg.interrupt("which?")
        return add_a.invoke([item + answer for item in items])

    seen: list[Any] = [list(workflow.stream(["x", "y"], config("1")))]
    seen.append(workflow.invoke(lg.Command(resume="!"), config("1")))

    outer = lg.StateGraph(list[str])
    outer.add_node("calls", lambda items: add_a.invoke([*items, "z"]))
    outer.add_edge(lg.START, "calls")
    seen.append(outer.compile().invoke(["w"]))
    return seen


def builder_lists_managed_keys(lg: SimpleNamespace) -> list[Any]:
    """``StateGraph.managed`` names the keys the run fills in (``RemainingSteps``), required or not."""

    plain_state = TypedDict("plain_state", {"items": list[str], "remaining_steps": lg.RemainingSteps})  # noqa: UP013 (eager: the annotations name lg)
    optional = TypedDict("optional", {"items": list[str], "remaining_steps": NotRequired[lg.RemainingSteps]})  # noqa: UP013
    return [sorted(lg.StateGraph(plain_state).managed), sorted(lg.StateGraph(optional).managed),
            sorted(lg.StateGraph(Log).managed)]


def step_timeout_cancels_the_step(lg: SimpleNamespace) -> list[Any]:
    """``graph.step_timeout``: a step still running past it has its running nodes cancelled and the stream
    raises ``TimeoutError`` (a reader that lingers over a chunk does not stop the clock); what a finished node
    wrote is kept, and ``invoke(None)`` runs only the node that was cut short."""
    seen: list[Any] = []

    async def slow(state: Log) -> dict[str, Any]:
        seen.append("slow started")
        try:
            await asyncio.sleep(5 if len(seen) < 3 else 0)
        except asyncio.CancelledError:
            seen.append("slow cancelled")
            raise
        return {"log": ["slow"]}

    async def quick(state: Log) -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"log": ["quick"]}

    g = lg.StateGraph(Log)
    g.add_node("slow", slow)
    g.add_node("quick", quick)
    g.add_conditional_edges(lg.START, lambda s: ["slow", "quick"])
    app = g.compile(checkpointer=lg.InMemorySaver())
    app.step_timeout = 0.5

    async def main() -> None:
        try:
            async for chunk in app.astream({"log": []}, config("1"), stream_mode="updates"):
                seen.append(chunk)
                await asyncio.sleep(0.2)
        except TimeoutError as exc:
            seen.append(type(exc).__name__)
        state = await app.aget_state(config("1"))
        seen.append((state.values, state.next))
        app.step_timeout = None
        seen.append(await app.ainvoke(None, config("1")))

    asyncio.run(main())
    return seen


def ainvoke_runs_sync_nodes_off_the_loop(lg: SimpleNamespace) -> list[Any]:
    """Under ``ainvoke`` a sync node runs in a worker thread: the caller's other tasks go on while it sleeps,
    and cancelling the call stops the run (the node after it never runs)."""
    seen: list[Any] = []
    started = threading.Event()

    def sleepy(state: Log) -> dict[str, Any]:
        started.set()
        time.sleep(0.3)
        return {"log": [("sleepy", threading.current_thread() is threading.main_thread())]}

    g = lg.StateGraph(Log)
    g.add_node("sleepy", sleepy)
    g.add_node("after", lambda s: seen.append("after ran") or {"log": ["after"]})
    g.add_edge(lg.START, "sleepy")
    g.add_edge("sleepy", "after")
    app = g.compile()

    async def main() -> None:
        ticks = 0
        call = asyncio.create_task(app.ainvoke({"log": []}))
        while not call.done():
            ticks += 1
            await asyncio.sleep(0.01)
        seen.append((await call, ticks > 3))
        started.clear()
        call = asyncio.create_task(app.ainvoke({"log": []}))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            seen.append("cancelled")

    asyncio.run(main())
    return seen


class Ticket(BaseModel):
    text: str
    log: Annotated[list[str], operator.add] = Field(default_factory=list)
    approved: bool = False
    note: str | None = None


class Docs(BaseModel):
    log: list[str] = Field(default_factory=lambda: ["from a default factory"])
    note: str | None = None


def returned_models_write_as_on_langgraph(lg: SimpleNamespace) -> list[Any]:
    """A node that returns a pydantic model writes its fields by LangGraph's rule: every field but one left at
    a default of None, so a default (``approved=False``) overwrites what the state held, and a default
    factory's value (another model's ``log``) is written; a field set to None is written."""
    g = lg.StateGraph(Ticket)
    g.add_node("approve", lambda s: {"approved": True, "note": "seen"})
    g.add_node("rewrite", lambda s: Ticket(text="changed"))
    g.add_node("docs", lambda s: Docs())
    g.add_node("clear", lambda s: Docs(log=[], note=None))
    for a, b in ((lg.START, "approve"), ("approve", "rewrite"), ("rewrite", "docs"), ("docs", "clear")):
        g.add_edge(a, b)
    app = g.compile()
    return [app.invoke({"text": "x", "log": ["kept"]}), list(app.stream({"text": "y"}))]


def task_results_are_cached(lg: SimpleNamespace) -> list[Any]:
    """``@task(cache_policy=)`` with ``@entrypoint(cache=)``: a call with the arguments of an earlier one (in
    this thread, across its interrupts, or in another thread) returns that result without running, until
    ``task.clear_cache(cache)``; an entrypoint's own ``cache_policy`` caches its value by its input."""
    ran: list[Any] = []
    cache = lg.InMemoryCache()

    @lg.task(cache_policy=lg.CachePolicy())
    def double(x: int) -> int:
        ran.append(x)
        return 2 * x

    @lg.entrypoint(checkpointer=lg.InMemorySaver(), cache=cache)
    def workflow(xs: list[int]) -> list[Any]:
        return [double(x).result() for x in xs] + [lg.interrupt("more?")]

    seen: list[Any] = []
    for thread in ("1", "2"):
        workflow.invoke([1, 1, 2], config(thread))
        seen.append((workflow.invoke(lg.Command(resume="yes"), config(thread)), list(ran)))
    double.clear_cache(cache)
    workflow.invoke([2, 3], config("3"))
    seen.append(list(ran))

    @lg.entrypoint(cache=lg.InMemoryCache(), cache_policy=lg.CachePolicy())
    def whole(x: int) -> int:
        ran.append(("whole", x))
        return x + 1

    seen.append(([whole.invoke(5), whole.invoke(5), whole.invoke(6)], list(ran)))
    return seen


def send_timeout_overrides_the_nodes(lg: SimpleNamespace) -> list[Any]:
    """``Send(node, arg, timeout=)``: the Send's limits, not the node's own, bound that task's attempts; a Send
    without one keeps the node's; the Send shows and compares with its (coerced) policy."""
    seen: list[Any] = []

    async def slow(arg: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(arg["wait"])
        return {"log": [arg["wait"]]}

    def fan(state: Log) -> list[Any]:
        return [lg.Send("slow", {"wait": 0.3}, timeout=lg.TimeoutPolicy(idle_timeout=0.05)) if state["log"] == ["tight"]
                else lg.Send("slow", {"wait": 0.3})]

    g = lg.StateGraph(Log)
    g.add_node("slow", slow, timeout=lg.TimeoutPolicy(idle_timeout=5.0))
    g.add_conditional_edges(lg.START, fan)
    app = g.compile()
    for log in (["tight"], ["loose"]):
        try:
            seen.append(asyncio.run(app.ainvoke({"log": log})))
        except lg.NodeTimeoutError as exc:
            seen.append(("NodeTimeoutError", exc.node, exc.kind, exc.idle_timeout))
    sent = lg.Send("slow", {"x": 1}, timeout=2)
    seen.extend([repr(sent), repr(lg.Send("slow", {"x": 1})), sent == lg.Send("slow", {"x": 1}, timeout=2.0),
                 sent.timeout.run_timeout])
    return seen


def jsonplus_round_trips_values(lg: SimpleNamespace) -> list[Any]:
    """``JsonPlusSerializer().loads_typed(dumps_typed(value))`` gives the value back: a Send (with its timeout),
    the standard types, ``None`` and bytes."""
    serde = lg.JsonPlusSerializer()
    values = [lg.Send("w", {"x": 1}, timeout=lg.TimeoutPolicy(run_timeout=1, idle_timeout=2)), lg.Send("w", [1]),
              None, b"raw", {"when": datetime.datetime(2024, 1, 2, 3, 4, 5), "id": uuid.UUID(int=7),
                             "amount": decimal.Decimal("1.10"), "tags": {"a", "b"}, "n": 3, "text": "hi"}]
    seen = []
    for value in values:
        back = serde.loads_typed(serde.dumps_typed(value))
        seen.append((back == value, type(back).__name__))
    return seen


def drawings_of_loops_and_deferred_nodes(lg: SimpleNamespace) -> list[Any]:
    """``get_graph().draw_mermaid()`` draws a loop that shows no way out with a conditional edge to ``__end__``
    from the node its last drawn step runs, and a deferred node that runs after a dead end with a conditional
    edge from that node, as LangGraph draws them."""

    def node(state: Log) -> dict[str, Any]:
        return {"log": ["x"]}

    drawn = []
    for cycle in (["human", "agent"], ["a", "b", "c"]):
        g = lg.StateGraph(Log)
        for name in cycle:
            g.add_node(name, node)
        for a, b in zip([lg.START, *cycle], [*cycle, cycle[0]], strict=True):
            g.add_edge(a, b)
        drawn.append(g.compile().get_graph().draw_mermaid(with_styles=False))
    for join in (False, True):
        g = lg.StateGraph(Log)
        for name in ("rewrite", "one", "two", "analyze"):
            g.add_node(name, node)
        g.add_node("qa", node, defer=True)
        for a, b in ((lg.START, "rewrite"), ("rewrite", "one"), ("rewrite", "two"), ("one", "analyze"),
                     ("qa", lg.END)):
            g.add_edge(a, b)
        if join:
            g.add_edge(["one", "two"], "qa")
        else:
            g.add_edge("one", "qa")
            g.add_edge("two", "qa")
        drawn.append(g.compile().get_graph().draw_mermaid(with_styles=False))
    return drawn


def a_checkpointed_graph_needs_a_thread(lg: SimpleNamespace) -> list[Any]:
    """A graph compiled with a checkpointer and called without a thread (no config, or a config that names
    none) raises LangGraph's ``ValueError``; nothing runs."""
    ran: list[str] = []
    g = lg.StateGraph(Log)
    g.add_node("a", lambda s: ran.append("a") or {"log": ["a"]})
    g.add_edge(lg.START, "a")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen: list[Any] = []
    for given in ((), ({"configurable": {}},), ({"recursion_limit": 5},)):
        try:
            app.invoke({"log": []}, *given)
        except ValueError as exc:
            seen.append(str(exc).split(";")[0].split(". ")[0])
    seen.append(list(ran))  # nothing ran
    seen.append(app.invoke({"log": []}, config("1")))
    return seen


class LegacyRoot(TypedDict):
    __root__: Annotated[list[str], operator.add]


def a_root_key_typeddict_is_a_root_value(lg: SimpleNamespace) -> list[Any]:
    """A TypedDict whose one key is ``__root__`` (LangGraph's older spelling) is a root-value state: the input,
    each node's input and return, and the result are the value itself."""
    g = lg.StateGraph(LegacyRoot)
    g.add_node("a", lambda items: [f"a saw {len(items)}"])
    g.add_node("b", lambda items: ["b"])
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile()
    return [app.invoke(["x"]), list(app.stream(["y"])), list(app.stream(["z"], stream_mode="values"))]


PROGRAMS = [a_root_key_typeddict_is_a_root_value, drawings_of_loops_and_deferred_nodes,
            a_checkpointed_graph_needs_a_thread,
            send_timeout_overrides_the_nodes, jsonplus_round_trips_values, task_results_are_cached,
            returned_models_write_as_on_langgraph, root_value_graph_invoked_in_code, builder_lists_managed_keys,
            step_timeout_cancels_the_step, ainvoke_runs_sync_nodes_off_the_loop]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    ours = program(with_functional(statehitl_names(), "statehitl"))
    theirs = program(with_functional(langgraph_names(), "langgraph"))
    assert plain(ours) == plain(theirs)
