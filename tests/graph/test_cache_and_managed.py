"""Node caching and managed values: what the parity programs (test_langgraph_parity_memory.py) do not show."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, Literal, TypedDict

import pytest
from pydantic import BaseModel

from statehitl.cache import InMemoryCache
from statehitl.checkpoint import InMemorySaver
from statehitl.errors import InvalidUpdateError, UnknownNodeError
from statehitl.graph import END, START, StateGraph
from statehitl.graph.caching import default_cache_key
from statehitl.managed import RemainingSteps
from statehitl.types import CachePolicy, Command, interrupt


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def counted(calls: list[int], fail_first: bool = False) -> Any:
    def node(state: S) -> dict[str, Any]:
        calls.append(state["x"])
        if fail_first and len(calls) == 1:
            raise RuntimeError("flaky")
        return {"log": [state["x"]]}

    return node


def cached_app(node: Any, cache: InMemoryCache, ttl: float | None = None, **compile: Any) -> Any:
    g = StateGraph(S)
    g.add_node("n", node, cache_policy=CachePolicy(ttl=ttl))
    g.add_edge(START, "n")
    return g.compile(cache=cache, **compile)


def test_a_cache_entry_lives_ttl_seconds() -> None:
    clock, calls = Clock(), []
    app = cached_app(counted(calls), InMemoryCache(clock=clock), ttl=60)
    app.invoke({"x": 1, "log": []})
    clock.now += 59
    app.invoke({"x": 1, "log": []})
    clock.now += 2
    app.invoke({"x": 1, "log": []})
    assert calls == [1, 1]


def test_a_node_that_raised_or_stopped_is_not_cached() -> None:
    calls: list[int] = []
    app = cached_app(counted(calls, fail_first=True), InMemoryCache())
    with pytest.raises(RuntimeError, match="flaky"):
        app.invoke({"x": 1, "log": []})
    assert app.invoke({"x": 1, "log": []})["log"] == [1]
    assert app.invoke({"x": 1, "log": []})["log"] == [1]
    assert calls == [1, 1]

    asked: list[str] = []

    def ask(state: S) -> dict[str, Any]:
        asked.append("asked")
        return {"log": [interrupt("ok?")]}

    asking = cached_app(ask, InMemoryCache(), checkpointer=InMemorySaver())
    asking.invoke({"x": 1, "log": []}, "t")
    assert asking.invoke(Command(resume="yes"), "t")["log"] == ["yes"]
    assert asked == ["asked", "asked"]  # the resume ran the node again: a stopped node left nothing cached


def test_a_cached_command_routes_as_the_first_run_did() -> None:
    calls: list[str] = []

    def decide(state: S) -> Command[Literal["left", "right"]]:
        calls.append("decide")
        return Command(update={"log": ["decided"]}, goto="left" if state["x"] else "right")

    g = StateGraph(S)
    g.add_node("decide", decide, cache_policy=CachePolicy())
    g.add_node("left", lambda s: {"log": ["left"]})
    g.add_node("right", lambda s: {"log": ["right"]})
    g.add_edge(START, "decide")
    app = g.compile(cache=InMemoryCache())
    assert app.invoke({"x": 1, "log": []})["log"] == ["decided", "left"]
    assert app.invoke({"x": 1, "log": []})["log"] == ["decided", "left"]
    assert app.invoke({"x": 0, "log": []})["log"] == ["decided", "right"]
    assert calls == ["decide", "decide"]


def test_an_async_node_and_clearing_one_nodes_entries() -> None:
    calls: list[str] = []

    async def slow(state: S) -> dict[str, Any]:
        calls.append("slow")
        return {"log": ["slow"]}

    def other(state: S) -> dict[str, Any]:
        calls.append("other")
        return {"log": ["other"]}

    g = StateGraph(S)
    g.add_node("slow", slow, cache_policy=CachePolicy())
    g.add_node("other", other, cache_policy=CachePolicy())
    g.add_edge(START, "slow")
    g.add_edge(START, "other")
    g.add_edge("slow", END)
    app = g.compile(cache=InMemoryCache())
    asyncio.run(app.ainvoke({"x": 1, "log": []}))
    app.clear_cache(["slow"])
    asyncio.run(app.ainvoke({"x": 1, "log": []}))
    assert sorted(calls) == ["other", "slow", "slow"]
    with pytest.raises(UnknownNodeError, match="nowhere"):
        app.clear_cache(["nowhere"])


def test_a_key_func_must_give_text() -> None:
    g = StateGraph(S)
    g.add_node("n", lambda s: None, cache_policy=CachePolicy(key_func=lambda s: 42))
    g.add_edge(START, "n")
    with pytest.raises(TypeError, match="key_func returned int"):
        g.compile(cache=InMemoryCache()).invoke({"x": 1, "log": []})


def test_the_default_key_is_the_inputs_canonical_json() -> None:
    assert default_cache_key({"b": 1, "a": [1, 2]}) == default_cache_key({"a": [1, 2], "b": 1})
    with pytest.raises(TypeError, match="key_func"):
        default_cache_key({"when": object()})


class Loop(TypedDict):
    log: Annotated[list, operator.add]
    remaining_steps: RemainingSteps


def test_a_node_or_the_input_that_writes_a_managed_key_is_refused() -> None:
    g = StateGraph(Loop)
    g.add_node("n", lambda s: {"remaining_steps": 1})
    g.add_edge(START, "n")
    app = g.compile(checkpointer=InMemorySaver())
    with pytest.raises(InvalidUpdateError, match=r"remaining_steps.*statehitl.managed: RemainingSteps\)"):
        app.invoke({"log": []}, "t")
    with pytest.raises(InvalidUpdateError, match="the input wrote"):
        app.invoke({"log": [], "remaining_steps": 3}, "u")
    assert app.get_state("u") is None


class Counted(BaseModel):
    log: Annotated[list, operator.add] = []
    remaining_steps: RemainingSteps = 0


def test_a_pydantic_state_gets_its_managed_key_filled_and_leaves_it_out_of_the_values() -> None:
    g = StateGraph(Counted)
    g.add_node("n", lambda s: {"log": [s.remaining_steps]})
    g.add_edge(START, "n")
    app = g.compile(checkpointer=InMemorySaver())
    assert app.invoke({"log": []}, {"configurable": {"thread_id": "t"}, "recursion_limit": 7}) == {"log": [6]}


def test_a_pydantic_managed_key_needs_a_default() -> None:
    class NoDefault(BaseModel):
        remaining_steps: RemainingSteps

    with pytest.raises(ValueError, match="give it a default"):
        StateGraph(NoDefault).add_node("n", lambda s: None).add_edge(START, "n").compile()
