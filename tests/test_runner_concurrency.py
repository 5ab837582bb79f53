"""The runner: concurrent steps, joins, fan-out, the step limit and continuing a stopped run.

Concurrency is proven by nodes that can only finish if another node of the same step runs at the same
time (they wait on each other), never by timing. The timeouts are only there so a broken runner fails
instead of hanging.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import MemoryCheckpointer
from statehitl.errors import ResumeInputError, StepLimitError
from statehitl.graph import END, START, StateGraph, Status, append
from statehitl.testing import TransitionRecorder

WAIT = 5.0  # seconds; reached only when the runner is broken


class S(BaseModel):
    log: Annotated[list[str], append] = []
    n: int = 0


def fan(nodes: dict[str, Any], **compile_kwargs: Any):
    """START -> each node -> END: all of them are ready in the first step."""
    g = StateGraph(S)
    for name, fn in nodes.items():
        g.add_node(name, fn)
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile(**compile_kwargs)


def mark(name: str):
    def node(state: S) -> dict[str, Any]:
        return {"log": name}

    return node


# -- nodes of one step run concurrently -------------------------------------------------------------


def test_async_nodes_of_one_step_run_concurrently() -> None:
    async def main() -> list[str]:
        ready = {"a": asyncio.Event(), "b": asyncio.Event()}

        def node(me: str, other: str):
            async def run(state: S) -> dict[str, Any]:
                ready[me].set()
                await asyncio.wait_for(ready[other].wait(), WAIT)  # only returns if `other` runs meanwhile
                return {"log": me}

            return run

        app = fan({"a": node("a", "b"), "b": node("b", "a")})
        return (await app.ainvoke({})).state.log

    assert asyncio.run(main()) == ["a", "b"]


def test_sync_nodes_of_one_step_run_concurrently_in_threads() -> None:
    barrier = threading.Barrier(3, timeout=WAIT)

    def node(name: str):
        def run(state: S) -> dict[str, Any]:
            barrier.wait()  # all three must be inside their handlers at once
            return {"log": name}

        return run

    app = fan({"a": node("a"), "b": node("b"), "c": node("c")})
    assert app.invoke({}).state.log == ["a", "b", "c"]


def test_sync_node_does_not_block_the_event_loop() -> None:
    started = threading.Event()

    def blocking(state: S) -> dict[str, Any]:
        assert started.wait(WAIT), "the async node never ran while the sync node was waiting"
        return {"log": "sync"}

    async def cooperative(state: S) -> dict[str, Any]:
        await asyncio.sleep(0)
        started.set()
        return {"log": "async"}

    app = fan({"blocking": blocking, "cooperative": cooperative})
    assert app.invoke({}).state.log == ["sync", "async"]


def test_log_of_a_concurrent_step_is_in_node_order_whoever_finishes_first() -> None:
    """The recorder must not depend on which concurrent node happens to finish first."""
    b_done = threading.Event()

    def a(state: S) -> dict[str, Any]:
        assert b_done.wait(WAIT)  # a finishes strictly after b
        return {"log": "a"}

    def b(state: S) -> dict[str, Any]:
        b_done.set()
        return {"log": "b"}

    app = fan({"a": a, "b": b})
    with TransitionRecorder() as recorder:
        app.invoke({})
    assert recorder.log[:4] == ["enter a (step 0)", "exit a: done", "enter b (step 0)", "exit b: done"]


def test_error_in_a_concurrent_node_propagates_and_the_thread_reads_failed() -> None:
    finished: list[str] = []

    def good(state: S) -> dict[str, Any]:
        finished.append("good")
        return {"log": "good"}

    def bad(state: S) -> dict[str, Any]:
        raise RuntimeError("boom in bad")

    app = fan({"good": good, "bad": bad}, checkpointer=MemoryCheckpointer())
    with pytest.raises(RuntimeError, match="boom in bad"):
        app.invoke({}, thread_id="t")
    assert finished == ["good"]
    failed = app.get_state("t")
    assert failed is not None
    # nothing applied yet; what good wrote is kept with the step (LangGraph's rule), which waits on bad only
    assert (failed.status, failed.next, failed.values.log) == (Status.FAILED, ("bad",), [])
    # the step's tasks in LangGraph's order: as the nodes were added
    assert [(t.name, t.result) for t in failed.tasks] == [("good", {"log": "good"}), ("bad", None)]
    assert failed.error is not None
    assert (failed.error.node, failed.error.type, failed.error.message) == ("bad", "RuntimeError", "boom in bad")
    with pytest.raises(RuntimeError, match="boom in bad"):  # invoke(None) retries the failed step: bad alone
        app.invoke(None, thread_id="t")
    assert finished == ["good"]


# -- joins ------------------------------------------------------------------------------------------


def diamond(**compile_kwargs: Any):
    """START -> split -> (long1 -> long2 -> long3 | short) -> join -> END."""
    g = StateGraph(S)
    for name in ("split", "long1", "long2", "long3", "short", "join"):
        g.add_node(name, mark(name))
    g.add_edge(START, "split")
    g.add_edge("split", "long1")
    g.add_edge("split", "short")
    g.add_edge("long1", "long2")
    g.add_edge("long2", "long3")
    g.add_edge(["long3", "short"], "join")
    g.add_edge("join", END)
    return g.compile(**compile_kwargs)


def test_diamond_with_unequal_branches_runs_the_join_once_after_both(transition_recorder, snapshot) -> None:
    result = diamond(checkpointer=MemoryCheckpointer()).invoke({}, thread_id="d")
    assert result.state.log == ["split", "long1", "short", "long2", "long3", "join"]
    assert transition_recorder.log.count("enter join (step 4)") == 1
    assert [line for line in transition_recorder.log if line.startswith("enter join")] == ["enter join (step 4)"]
    assert transition_recorder.log == snapshot


def test_join_does_not_wait_for_a_branch_that_was_not_taken() -> None:
    g = StateGraph(S)
    for name in ("pick", "slow1", "slow2", "fast", "join"):
        g.add_node(name, mark(name))
    g.add_edge(START, "pick")
    g.add_conditional_edges("pick", lambda s: "fast", ["slow1", "fast"])
    g.add_edge("slow1", "slow2")
    g.add_edge("slow2", "join")
    g.add_edge("fast", "join")
    g.add_edge("join", END)
    assert g.compile().invoke({}).state.log == ["pick", "fast", "join"]


def test_a_waiting_edge_inside_a_loop_waits_for_all_of_its_sources_again() -> None:
    g = StateGraph(S)
    g.add_node("a", mark("a"))
    g.add_node("c", mark("c"))
    g.add_node("b", lambda s: {"log": "b", "n": s.n + 1})
    g.add_edge(START, "a")
    g.add_edge(START, "c")
    g.add_edge(["a", "c"], "b")
    g.add_conditional_edges("b", lambda s: "a" if s.n < 3 else END, ["a", END])
    # LangGraph's waiting edge: b waits for a finish of both a and c since it last ran; the loop re-runs only
    # a, so b does not run again (the multi-agent Graph's rule would have)
    assert g.compile().invoke({}).state.log == ["a", "c", "b", "a"]


# -- fan-out ----------------------------------------------------------------------------------------


def test_conditional_edge_returning_a_list_fans_out_into_one_concurrent_step(transition_recorder, snapshot) -> None:
    barrier = threading.Barrier(2, timeout=WAIT)

    def worker(name: str):
        def run(state: S) -> dict[str, Any]:
            barrier.wait()
            return {"log": name}

        return run

    g = StateGraph(S)
    g.add_node("plan", mark("plan"))
    g.add_node("w1", worker("w1"))
    g.add_node("w2", worker("w2"))
    g.add_node("skip", mark("skip"))
    g.add_node("merge", mark("merge"))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: ["w1", "w2"], ["w1", "w2", "skip"])
    g.add_edge(["w1", "w2"], "merge")
    g.add_edge("merge", END)
    result = g.compile(checkpointer=MemoryCheckpointer()).invoke({}, thread_id="f")
    assert result.state.log == ["plan", "w1", "w2", "merge"]
    assert transition_recorder.log == snapshot


def test_fan_out_with_a_path_map() -> None:
    g = StateGraph(S)
    for name in ("plan", "x", "y"):
        g.add_node(name, mark(name))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: ["first", "second"], {"first": "x", "second": "y"})
    g.add_edge("x", END)
    g.add_edge("y", END)
    assert g.compile().invoke({}).state.log == ["plan", "x", "y"]


def test_fan_out_to_the_same_node_twice_runs_it_once() -> None:
    g = StateGraph(S)
    g.add_node("plan", mark("plan"))
    g.add_node("x", mark("x"))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: ["x", "x", END])
    g.add_edge("x", END)
    assert g.compile().invoke({}).state.log == ["plan", "x"]


# -- the step limit ---------------------------------------------------------------------------------


def counting_loop(stop_at: int = 1000, **compile_kwargs: Any):
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: END if s.n >= stop_at else "inc", ["inc", END])
    return g.compile(checkpointer=MemoryCheckpointer(), **compile_kwargs)


def test_default_step_limit_is_25_with_a_clear_error() -> None:
    app = counting_loop()
    with pytest.raises(StepLimitError) as err:
        app.invoke({}, thread_id="t")
    assert isinstance(err.value, RuntimeError)
    message = str(err.value)
    assert "thread 't' ran 25 steps without reaching END (next: ['inc'])" in message
    assert "step_limit=" in message
    assert "invoke(None, thread_id=...)" in message
    state = app.get_state("t")
    assert state is not None
    assert (state.values.n, state.step, state.next) == (25, 25, ("inc",))


def test_step_limit_on_compile_and_on_invoke() -> None:
    app = counting_loop(step_limit=5)
    with pytest.raises(StepLimitError, match=r"ran 5 steps"):
        app.invoke({}, thread_id="compiled")
    with pytest.raises(StepLimitError, match=r"ran 3 steps"):
        app.invoke({}, thread_id="invoked", step_limit=3)  # invoke's limit wins over compile's
    assert app.get_state("invoked").values.n == 3
    assert counting_loop(stop_at=40).invoke({}, thread_id="fifty", step_limit=50).state.n == 40


def test_a_run_of_exactly_the_limit_completes() -> None:
    assert counting_loop(stop_at=4, step_limit=4).invoke({}, thread_id="four").stop_reason == "end"


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "3"])
def test_step_limit_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"step_limit must be a positive int"):
        counting_loop(step_limit=bad)
    with pytest.raises(ValueError, match=r"step_limit must be a positive int"):
        counting_loop().invoke({}, thread_id="bad", step_limit=bad)


def test_invoke_none_continues_after_the_step_limit() -> None:
    app = counting_loop(stop_at=12, step_limit=5)
    for expected in (5, 10):
        with pytest.raises(StepLimitError):
            app.invoke({} if expected == 5 else None, thread_id="t")
        assert app.get_state("t").values.n == expected
    result = app.invoke(None, thread_id="t")
    assert (result.stop_reason, result.state.n, result.step) == ("end", 12, 12)


def test_invoke_none_continues_on_a_fresh_app_without_a_checkpointer_durability_exit() -> None:
    """Without a checkpointer only the final checkpoint is written; continuing still works."""
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: END if s.n >= 7 else "inc", ["inc", END])
    app = g.compile(step_limit=4)
    with pytest.raises(StepLimitError):
        app.invoke({}, thread_id="t")
    assert len(app.history("t")) == 1  # the one checkpoint written, as LangGraph shows an exit-durability run
    assert app.invoke(None, thread_id="t").state.n == 7


def test_invoke_none_needs_a_stopped_run() -> None:
    app = counting_loop(stop_at=1)
    with pytest.raises(ResumeInputError, match=r"thread 'new' has no checkpoint; there is no stopped run"):
        app.invoke(None, thread_id="new")
    app.invoke({}, thread_id="done")
    with pytest.raises(ResumeInputError, match=r"thread 'done' is completed"):
        app.invoke(None, thread_id="done")
