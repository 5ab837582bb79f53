"""Compiling pauses the cyclic collector for the build only (so a large graph compiles in linear time):
it is on again afterwards, however the compile ends, and left off if the caller had turned it off."""

from __future__ import annotations

import gc
from typing import TypedDict

import pytest

from statehitl.errors import GraphValidationError
from statehitl.graph import END, START, StateGraph


class State(TypedDict):
    n: int


def graph(*, broken: bool = False) -> StateGraph[State]:
    builder = StateGraph(State)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", "nowhere" if broken else END)
    return builder


def test_the_collector_is_paused_while_compiling_and_on_again_after() -> None:
    seen: list[bool] = []
    builder = graph()
    original = builder._handler

    def watching(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    builder._handler = watching  # type: ignore[method-assign]
    assert gc.isenabled()
    app = builder.compile()
    assert seen
    assert not any(seen)
    assert gc.isenabled()
    assert app.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})["n"] == 1


def test_a_failed_compile_turns_the_collector_back_on() -> None:
    with pytest.raises(GraphValidationError):
        graph(broken=True).compile()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        graph().compile()
        assert not gc.isenabled()
    finally:
        gc.enable()
