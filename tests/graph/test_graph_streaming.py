"""``app.stream`` / ``app.astream``: each step's updates, the state after each step, interrupts as they
happen, as a LangGraph user's first loop expects."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import MemoryCheckpointer
from statehitl.graph import END, START, NodeContext, StateGraph, append
from statehitl.interrupt import Interrupt


class Ticket(BaseModel):
    text: str = ""
    log: Annotated[list[str], append] = []
    approved: bool = False


def review(state: Ticket, ctx: NodeContext) -> dict[str, Any]:
    return {"approved": ctx.interrupt("ok?", reason=state.text) == "y"}


def build() -> Any:
    g = StateGraph(Ticket)
    g.add_node("classify", lambda s: {"log": "classified"})
    g.add_node("review", review)
    g.add_edge(START, "classify")
    g.add_edge("classify", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=MemoryCheckpointer())


def test_updates_then_the_interrupt_then_the_rest_after_the_answer() -> None:
    app = build()
    chunks = list(app.stream({"text": "refund"}, thread_id="t"))
    assert chunks[0] == {"classify": {"log": "classified"}}
    [interrupt] = chunks[1]["__interrupt__"]
    assert isinstance(interrupt, Interrupt)
    assert (interrupt.name, interrupt.reason) == ("ok?", "refund")
    assert len(chunks) == 2
    answer = [{"interruptResponse": {"interruptId": interrupt.id, "response": "y"}}]
    assert list(app.stream(answer, thread_id="t")) == [{"review": {"approved": True}}]
    assert app.get_state("t").values.approved is True  # the same checkpoints invoke writes


def test_values_and_several_modes() -> None:
    app = build()
    values = list(app.stream({"text": "x"}, thread_id="v", stream_mode="values"))
    assert [v.log for v in values] == [[], ["classified"]]
    both = list(app.stream({"text": "x"}, thread_id="w", stream_mode=["updates", "values"]))
    assert [mode for mode, _ in both] == ["values", "updates", "values", "updates"]
    assert both[-1][1]["__interrupt__"][0].name == "ok?"


def test_astream_yields_each_step_as_it_happens() -> None:
    seen: list[str] = []

    async def slow(state: Ticket) -> dict[str, Any]:
        seen.append("slow ran")
        return {"log": "slow"}

    g = StateGraph(Ticket)
    g.add_node("fast", lambda s: {"log": "fast"})
    g.add_node("slow", slow)
    g.add_edge(START, "fast")
    g.add_edge("fast", "slow")
    g.add_edge("slow", END)
    app = g.compile()

    async def consume() -> list[Any]:
        out = []
        async for chunk in app.astream({}, thread_id="a"):
            out.append((chunk, list(seen)))  # the first step's update arrives before the second step runs
        return out

    assert asyncio.run(consume()) == [({"fast": {"log": "fast"}}, []), ({"slow": {"log": "slow"}}, ["slow ran"])]


def test_stream_works_inside_a_running_event_loop() -> None:
    app = build()

    async def notebook_cell() -> list[Any]:
        return list(app.stream({"text": "x"}, thread_id="n"))  # sync code called from async code

    chunks = asyncio.run(notebook_cell())
    assert chunks[0] == {"classify": {"log": "classified"}}


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="stream_mode must be"):
        list(build().stream({}, stream_mode="tokens"))
