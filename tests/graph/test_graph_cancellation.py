"""Cancelling a streamed run, and a step that fails, where statehitl's promises decide: a node that acted on an
approved answer is never run again unasked.

LangGraph cancels a failing step's running siblings and a closed stream's running nodes, and runs them again
on the retry (``test_langgraph_stream_parity`` checks that statehitl does the same where no answer is at
stake). A node cut short after an ``interrupt()`` returned its answer may have acted on it: here a failing
sibling lets it finish, and a closed stream records its outcome as unknown (the claim's rule).
"""

from __future__ import annotations

import asyncio
import operator
import threading
from contextlib import aclosing
from typing import Annotated, Any, TypedDict

import pytest

from statehitl.checkpoint.memory import InMemorySaver
from statehitl.errors import ActionOutcomeUnknownError
from statehitl.graph import START, StateGraph
from statehitl.types import Command, interrupt

WAIT = 10.0
"""How long a node waits for what the test does; reached only when the behaviour under test is missing."""


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_a_failing_sibling_lets_a_node_acting_on_an_answer_finish() -> None:
    """The step's other node fails while ``act`` acts on its answer: ``act`` finishes and its write is kept,
    so the retry runs only the failed node."""
    acted: list[str] = []
    fail = [True]

    async def main() -> list[Any]:
        acting = asyncio.Event()

        async def act(state: Log) -> dict[str, Any]:
            answer = interrupt("go?")
            acting.set()
            await asyncio.sleep(0.05)  # where a cancel would cut it short
            acted.append(answer)
            return {"log": [f"act {answer}"]}

        async def bad(state: Log) -> dict[str, Any]:
            interrupt("fail?")
            if fail[0]:
                await acting.wait()
                raise ValueError("bad")
            return {"log": ["bad"]}

        g = StateGraph(Log)
        g.add_node("act", act)
        g.add_node("bad", bad)
        g.add_edge(START, "act")
        g.add_edge(START, "bad")
        app = g.compile(checkpointer=InMemorySaver())
        waiting = {i.reason: i.id for i in (await app.ainvoke({"log": []}, config("f")))["__interrupt__"]}
        with pytest.raises(ValueError, match="bad"):
            await app.ainvoke(Command(resume={waiting["go?"]: "A", waiting["fail?"]: "B"}), config("f"))
        seen: list[Any] = [list(acted)]
        fail[0] = False
        state = await app.aget_state(config("f"))
        seen += [state.values, state.next, await app.ainvoke(None, config("f")), list(acted)]
        return seen

    assert asyncio.run(main()) == [["A"], {"log": ["act A"]}, ("bad",), {"log": ["act A", "bad"]}, ["A"]]


def test_a_failing_sibling_cancels_a_node_before_any_answer_is_used() -> None:
    """Without answers at stake LangGraph's rule holds: the running sibling is cancelled and runs again."""
    ran: list[str] = []
    fail = [True]

    async def main() -> list[Any]:
        async def slow(state: Log) -> dict[str, Any]:
            ran.append("slow started")
            if fail[0]:
                await asyncio.sleep(WAIT)
            return {"log": ["slow"]}

        async def bad(state: Log) -> dict[str, Any]:
            await asyncio.sleep(0)
            if fail[0]:
                raise ValueError("bad")
            return {"log": ["bad"]}

        g = StateGraph(Log)
        g.add_node("slow", slow)
        g.add_node("bad", bad)
        g.add_edge(START, "slow")
        g.add_edge(START, "bad")
        app = g.compile(checkpointer=InMemorySaver())
        with pytest.raises(ValueError, match="bad"):
            await asyncio.wait_for(app.ainvoke({"log": []}, config("c")), WAIT / 2)
        fail[0] = False
        return [await app.ainvoke(None, config("c")), ran]

    assert asyncio.run(main()) == [{"log": ["bad", "slow"]}, ["slow started", "slow started"]]


def test_closing_a_stream_while_a_node_acts_on_an_answer_leaves_its_outcome_unknown() -> None:
    """The reader leaves while ``act`` acts on its answer: the thread says the action may have run, and
    nothing runs it again until a human allows it (``retry_unknown``); then the thread goes on from there."""
    acted: list[str] = []

    async def main() -> list[Any]:
        acting = asyncio.Event()

        async def act(state: Log) -> dict[str, Any]:
            answer = interrupt("go?")
            acted.append(f"acting on {answer}")
            acting.set()
            if len(acted) == 1:
                await asyncio.sleep(WAIT)
            return {"log": [f"act {answer}"]}

        g = StateGraph(Log)
        g.add_node("act", act)
        g.add_node("quick", lambda s: {"log": ["quick"]})
        g.add_edge(START, "act")
        g.add_edge(START, "quick")
        saver = InMemorySaver()
        app = g.compile(checkpointer=saver)
        await app.ainvoke({"log": []}, config("u"))
        async with aclosing(app.astream(Command(resume="yes"), config("u"))) as chunks:
            async for _ in chunks:
                await acting.wait()
                break
        seen: list[Any] = [list(acted)]
        with pytest.raises(ActionOutcomeUnknownError, match="may have happened") as unknown:
            await app.ainvoke(None, config("u"))
        seen.append(unknown.value.thread_id)
        await saver.retry_unknown("u")  # a human checked the outside world: the step may run again
        seen += [await app.ainvoke(None, config("u")), acted]
        return seen

    assert asyncio.run(main()) == [["acting on yes"], "u", {"log": ["act yes", "quick"]},
                                   ["acting on yes", "acting on yes"]]


def test_a_lone_sync_node_left_in_a_resumed_step_does_not_hold_back_the_cached_chunks() -> None:
    """On a resume whose step has one task left to run, the sync stream yields the finished tasks' writes
    (marked cached) before that task ends: it runs in a worker thread, not on the loop the reader waits on."""
    reader_has_them = threading.Event()

    def ask(state: Log) -> dict[str, Any]:
        answer = interrupt("ok?")
        return {"log": [f"ask {answer}: the reader had the cached chunk: {reader_has_them.wait(WAIT)}"]}

    g = StateGraph(Log)
    g.add_node("ask", ask)
    g.add_node("quick", lambda s: {"log": ["quick"]})
    g.add_edge(START, "ask")
    g.add_edge(START, "quick")
    app = g.compile(checkpointer=InMemorySaver())
    app.invoke({"log": []}, config("l"))
    seen = []
    for chunk in app.stream(Command(resume="yes"), config("l"), stream_mode="updates"):
        seen.append(chunk)
        if "__metadata__" in chunk:
            reader_has_them.set()
    assert seen == [{"quick": {"log": ["quick"]}, "__metadata__": {"cached": True}},
                    {"ask": {"log": ["ask yes: the reader had the cached chunk: True"]}}]
