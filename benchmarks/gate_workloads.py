"""The speed gate's workloads: small, fixed, and the hot paths the side-by-side benchmarks time.

Each workload is built once, run a few times untimed (imports, caches, the first calls), then run
``reps`` more times while callgrind counts instructions; ``speed_gate.py`` divides the count by the
work done (steps, cycles, nodes, round trips). The workloads reuse the benchmarks' own definitions
(``harness.graphs``, ``agent_workload``, ``multiagent_workload``, ``storage_workload``), so the gate
guards what the benchmarks measure.

Run inside valgrind by ``speed_gate.py``: ``python benchmarks/gate_workloads.py NAME REPS SCRATCH``
prints one JSON line, ``{"name", "reps", "per_rep", "unit"}``. Instrumentation is switched on around
the measured repetitions with ``callgrind_control``, which this process runs on itself; without
valgrind (``--plain``) the workload just runs, which is how the gate's own test checks them.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from harness.graphs import STEP_LIMIT, SHState, add_linear_chain

CHAIN_LEN = 100
AGENT_CYCLES = 20


@dataclass(frozen=True)
class Workload:
    """``build(scratch)`` returns one repetition; each repetition does ``per_rep`` units of work."""

    name: str
    unit: str
    per_rep: int
    build: Callable[[Path], Callable[[], None]]
    warmup: int = 3


def _noop(state: Any) -> None:
    return None


def chain_pydantic(scratch: Path) -> Callable[[], None]:
    """bench_core's 100-node chain, no checkpointer, statehitl's pydantic state."""
    from statehitl.graph import END, START, StateGraph

    graph = StateGraph(SHState)
    add_linear_chain(graph, _noop, START, END, CHAIN_LEN)
    app = graph.compile()
    return lambda: _check(app.invoke({"n": 1}, step_limit=STEP_LIMIT)["n"] == 1)


class ChainState(TypedDict):
    n: int


def chain_typeddict(scratch: Path) -> Callable[[], None]:
    """The same chain written for LangGraph: a TypedDict state, LangGraph's invoke and config."""
    from statehitl.graph import END, START, StateGraph

    graph = StateGraph(ChainState)
    add_linear_chain(graph, _noop, START, END, CHAIN_LEN)
    app = graph.compile()
    config = {"recursion_limit": STEP_LIMIT}
    return lambda: _check(app.invoke({"n": 1}, config) == {"n": 1})


def chain_file(scratch: Path) -> Callable[[], None]:
    """The chain on the durable file store, a new thread each repetition."""
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import END, START, StateGraph

    graph = StateGraph(SHState)
    add_linear_chain(graph, _noop, START, END, CHAIN_LEN)
    app = graph.compile(checkpointer=FileCheckpointer(scratch / "chain"))
    threads = itertools.count()
    return lambda: _check(app.invoke({"n": 1}, thread_id=f"t{next(threads)}", step_limit=STEP_LIMIT).state.n == 1)


def roundtrip_file(scratch: Path) -> Callable[[], None]:
    """bench_core's interrupt -> resume round trip: the resume on a new checkpointer and a new app."""
    from harness.graphs import statehitl_review_graph

    from statehitl.checkpoint import FileCheckpointer

    directory = scratch / "roundtrip"
    first = statehitl_review_graph().compile(checkpointer=FileCheckpointer(directory))
    threads = itertools.count()

    def once() -> None:
        thread = f"rt{next(threads)}"
        paused = first.invoke({"n": 0}, thread_id=thread)
        fresh = statehitl_review_graph().compile(checkpointer=FileCheckpointer(directory))
        answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in paused.interrupts]
        _check(fresh.invoke(answers, thread_id=thread).state.n == 1)

    return once


def agent_session(scratch: Path) -> Callable[[], None]:
    """One invoke of 20 tool cycles on a new file session (bench_agent's agent, tools and model)."""
    import agent_workload as aw

    k = aw.kit("statehitl")
    script = [aw.tool_use_message(f"tooluse_add_{i}", "add", {"a": i, "b": 1}) for i in range(AGENT_CYCLES - 1)]
    script.append("done")
    sessions = itertools.count()

    def once() -> None:
        agent = aw.build_agent("statehitl", k.Model(list(script)), [k.add], f"s{next(sessions)}", scratch / "agent")
        _check(aw.result_text(agent("add them up")) == "done")

    return once


def graph_node(scratch: Path) -> Callable[[], None]:
    """bench_multiagent's Graph chain: ten agent nodes, a new graph each repetition."""
    import multiagent_workload as mw

    mw.ignore_unbounded_graph_warning()

    def once() -> None:
        graph, models = mw.build_chain("statehitl")
        mw.check_chain("statehitl", graph(mw.TASK), models)

    return once


HISTORY = 2000
"""Checkpoints of the thread whose history a page is read of."""


def history_page(scratch: Path) -> Callable[[], None]:
    """``get_state_history(config, limit=10)`` of a thread of 2,000 checkpoints on the file store: a page costs
    what it shows, whatever the thread's length (issue 41)."""
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import END, START, StateGraph

    graph = StateGraph(ChainState)
    graph.add_node("inc", lambda s: {"n": s["n"] + 1})
    graph.add_edge(START, "inc")
    graph.add_conditional_edges("inc", lambda s: END if s["n"] >= HISTORY else "inc", ["inc", END])
    app = graph.compile(checkpointer=FileCheckpointer(scratch / "history"))
    config = {"configurable": {"thread_id": "long"}, "recursion_limit": HISTORY + 10}
    app.invoke({"n": 0}, config)
    return lambda: _check(len(list(app.get_state_history(config, limit=10))) == 10)


BACKLOG = 300
"""Threads waiting when one is answered: answering by id reads the interrupt's own thread, so a return to
listing every waiting thread (issue 41) would multiply the count."""


def answer_backlog(scratch: Path) -> Callable[[], None]:
    """``inbox.answer(store, id, ...)`` of one interrupt among ``BACKLOG`` waiting on the file store (stored,
    not applied: no app is given), a different interrupt each repetition."""
    from statehitl import inbox
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import END, START, StateGraph
    from statehitl.types import interrupt

    graph = StateGraph(ChainState)
    graph.add_node("ask", lambda s: {"n": interrupt("ok?")})
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    checkpointer = FileCheckpointer(scratch / "backlog")
    app = graph.compile(checkpointer=checkpointer)
    ids = iter([app.invoke({"n": 0}, {"configurable": {"thread_id": f"t{i}"}})["__interrupt__"][0].id
                for i in range(BACKLOG)])
    return lambda: _check(inbox.answer(checkpointer, next(ids), 1).answer.response == 1)


def cold_start(scratch: Path) -> Callable[[], None]:
    """``import statehitl`` and a first graph, over its dependencies' own import: pydantic is imported
    before counting starts, statehitl and everything it imports besides are counted (run once, in a
    process that has not imported statehitl yet)."""
    import pydantic  # noqa: F401

    def once() -> None:
        from statehitl.graph import END, START, StateGraph

        graph = StateGraph(SHState)
        add_linear_chain(graph, _noop, START, END, 3)
        _check(graph.compile().invoke({"n": 1})["n"] == 1)

    return once


def _check(ok: bool) -> None:
    if not ok:
        raise AssertionError("a gate workload returned the wrong result")


WORKLOADS = {w.name: w for w in (
    Workload("chain-pydantic", "instructions/step", CHAIN_LEN, chain_pydantic),
    Workload("chain-typeddict", "instructions/step", CHAIN_LEN, chain_typeddict),
    Workload("chain-file", "instructions/step", CHAIN_LEN, chain_file),
    Workload("roundtrip-file", "instructions/round trip", 1, roundtrip_file),
    Workload("agent-session", "instructions/cycle", AGENT_CYCLES, agent_session),
    Workload("graph-node", "instructions/node", 10, graph_node),
    Workload("cold-start", "instructions/start", 1, cold_start, warmup=0),
    Workload("history-page", "instructions/page", 1, history_page),
    Workload("answer-backlog", "instructions/answer", 1, answer_backlog),
)}


def _callgrind(switch: str) -> None:
    subprocess.run(["callgrind_control", "--instr=" + switch, str(os.getpid())], check=True, capture_output=True)


def main(argv: list[str]) -> int:
    plain = "--plain" in argv
    name, reps, scratch = [a for a in argv if a != "--plain"]
    workload = WORKLOADS[name]
    once = workload.build(Path(scratch))
    for _ in range(workload.warmup):
        once()
    gc.collect()
    if not plain:
        _callgrind("on")
    for _ in range(int(reps)):
        once()
    if not plain:
        _callgrind("off")
    print(json.dumps({"name": name, "reps": int(reps), "per_rep": workload.per_rep, "unit": workload.unit}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
