"""LangChain callbacks on a graph run, as LangGraph calls them: programs run on LangGraph and on statehitl.

As in ``test_langgraph_parity``: each program is written once against a namespace of each library's names, run
on the real LangGraph and on statehitl, and what it observes must be equal. Here that is what a
``GraphCallbackHandler`` is told (interrupts, resumes, the checkpoints they name) and what a LangChain tracer
records of the run (one root run, its input, output and error).
"""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langchain_core.tracers import BaseTracer
from langchain_core.tracers.schemas import Run
from test_langgraph_parity import config, plain


def names(library: str) -> SimpleNamespace:
    if library == "statehitl":
        from statehitl.callbacks import GraphCallbackHandler
        from statehitl.checkpoint import InMemorySaver
        from statehitl.graph import START, StateGraph
        from statehitl.types import Command, interrupt
    else:
        from langgraph.callbacks import GraphCallbackHandler  # type: ignore[no-redef]
        from langgraph.checkpoint.memory import InMemorySaver  # type: ignore[assignment]
        from langgraph.graph import START, StateGraph  # type: ignore[assignment]
        from langgraph.types import Command, interrupt  # type: ignore[assignment]
    return SimpleNamespace(GraphCallbackHandler=GraphCallbackHandler, InMemorySaver=InMemorySaver, START=START,
                           StateGraph=StateGraph, Command=Command, interrupt=interrupt)


class Answer(TypedDict):
    answer: str | None
    log: str


class Tracer(BaseTracer):
    """A LangChain tracer keeping the root runs it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        self.runs.append(run)


def recorder(lg: SimpleNamespace, *, raise_on: str = "", raise_error: bool = False) -> Any:
    """A graph handler writing down each event (kind, status, namespace, interrupt values, checkpoint id)."""

    class Recorder(lg.GraphCallbackHandler):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.events: list[tuple[Any, ...]] = []
            self.raise_error = raise_error

        def on_interrupt(self, event: Any) -> None:
            self.events.append(("interrupt", event.status, event.checkpoint_ns,
                                [i.value for i in event.interrupts], event.checkpoint_id, event.run_id is not None))
            if raise_on == "interrupt":
                raise ValueError("boom")

        def on_resume(self, event: Any) -> None:
            self.events.append(("resume", event.status, event.checkpoint_ns, event.checkpoint_id))
            if raise_on == "resume":
                raise ValueError("boom")

    return Recorder()


def asking_graph(lg: SimpleNamespace, **compile_options: Any) -> Any:
    def first(state: Answer) -> dict[str, Any]:
        return {"log": state["log"] + "first;"}

    def ask(state: Answer) -> dict[str, Any]:
        return {"answer": lg.interrupt("which?"), "log": state["log"] + "ask;"}

    g = lg.StateGraph(Answer)
    g.add_node("first", first)
    g.add_node("ask", ask)
    g.add_edge(lg.START, "first")
    g.add_edge("first", "ask")
    return g.compile(checkpointer=lg.InMemorySaver(), **compile_options)


def checkpoint_of(app: Any, cfg: dict[str, Any]) -> str:
    return str(app.get_state(cfg).config["configurable"]["checkpoint_id"])


def lifecycle_events(lg: SimpleNamespace) -> list[Any]:
    """A breakpoint's stop, a resume past it, an ``interrupt()``'s stop, its answer, a finished thread continued
    and a new input: each event names the checkpoint ``get_state`` shows at that moment (the one the run stopped
    at, or the one it went on from); a new input on the thread is no resume; a plain LangChain handler in the
    same list is told nothing of it."""
    app = asking_graph(lg, interrupt_before=["first"])
    handler = recorder(lg)
    cfg = {**config("t"), "callbacks": [Tracer(), handler]}
    seen: list[Any] = []
    for given in [{"answer": None, "log": ""}, None, lg.Command(resume="blue"), None, {"answer": "x", "log": ""}]:
        before = checkpoint_of(app, config("t")) if app.get_state(config("t")).values else None
        seen.append(plain(app.invoke(given, cfg)))
        after = checkpoint_of(app, config("t"))
        seen.append([(*event[:-2], event[-2] == (after if event[0] == "interrupt" else before), *event[-1:])
                     if event[0] == "interrupt" else (*event[:-1], event[-1] == before) for event in handler.events])
        handler.events.clear()
    return seen


def raising_handlers(lg: SimpleNamespace) -> list[Any]:
    """A handler that raises is passed over (the run goes on, the next handler is told) unless it sets
    ``raise_error``: then its error is the call's."""
    seen: list[Any] = []
    for raise_on in ["interrupt", "resume"]:
        app = asking_graph(lg)
        after = recorder(lg)
        cfg = {**config(raise_on), "callbacks": [recorder(lg, raise_on=raise_on), after]}
        seen.append(plain(app.invoke({"answer": None, "log": ""}, cfg)))
        seen.append(plain(app.invoke(lg.Command(resume="red"), cfg)))
        seen.append([event[0] for event in after.events])
    app = asking_graph(lg)
    try:
        app.invoke({"answer": None, "log": ""}, {**config("e"), "callbacks": [recorder(lg, raise_on="interrupt",
                                                                                         raise_error=True)]})
    except ValueError as exc:
        seen.append(("raised", str(exc)))
    seen.append(app.get_state(config("e")).next)  # the stop is written before the handlers are told
    return seen


def async_handlers(lg: SimpleNamespace) -> list[Any]:
    """``ainvoke`` awaits a handler's ``async def`` methods."""

    class Async(lg.GraphCallbackHandler):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.kinds: list[str] = []

        async def on_interrupt(self, event: Any) -> None:
            await asyncio.sleep(0)
            self.kinds.append(f"interrupt:{event.status}")

        async def on_resume(self, event: Any) -> None:
            self.kinds.append(f"resume:{event.status}")

    app = asking_graph(lg)
    handler = Async()
    cfg = {**config("a"), "callbacks": [handler]}

    async def run() -> list[Any]:
        return [plain(await app.ainvoke({"answer": None, "log": ""}, cfg)),
                plain(await app.ainvoke(lg.Command(resume="green"), cfg))]

    return [asyncio.run(run()), handler.kinds]


def traced_runs(lg: SimpleNamespace) -> list[Any]:
    """A tracer in the callbacks sees each call as one root run named ``run_name``: its input (a non-dict one
    under ``"input"``), its output values (without the interrupts it stopped on), and the error of a failed one."""
    app = asking_graph(lg)
    tracer = Tracer()
    cfg = {**config("r"), "callbacks": [tracer], "run_name": "approval"}
    app.invoke({"answer": None, "log": ""}, cfg)
    app.invoke(lg.Command(resume="yes"), cfg)

    def broken(state: Answer) -> dict[str, Any]:
        raise KeyError("missing")

    g = lg.StateGraph(Answer)
    g.add_node("broken", broken)
    g.add_edge(lg.START, "broken")
    with contextlib.suppress(KeyError):
        g.compile().invoke({"answer": None, "log": ""}, {"callbacks": [tracer], "run_name": "failing"})
    return [(run.name, run.parent_run_id, run.inputs if run.name != "approval" or "input" not in run.inputs
             else {"input": plain(run.inputs["input"]) if run.inputs["input"] is None else "command"},
             run.outputs, None if run.error is None else run.error.splitlines()[0][:8]) for run in tracer.runs]


def tree(run: Run) -> tuple[Any, ...]:
    """A traced run as its name, type, inputs, outputs and children (ids and times left out)."""
    return (run.name, run.run_type, run.inputs if run.run_type == "chain" else None,
            run.outputs if run.run_type == "chain" else None, [tree(child) for child in run.child_runs])


def nested_runs(lg: SimpleNamespace) -> list[Any]:
    """Each node call is a run of its own inside the call's one root run, named after the node, with its input
    and output; a chat model or a Runnable a node calls (with its config, or without: LangChain's current
    config) is inside the node's run; an interrupting node's run ends in an error. The same in a run that
    streams ``"messages"``."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.runnables import RunnableLambda

    model = FakeListChatModel(responses=["hi", "there", "again", "more"])

    def chat(state: Answer, config: RunnableConfig) -> dict[str, Any]:
        return {"log": state["log"] + str(model.invoke("q", config).content)}

    def implicit(state: Answer) -> dict[str, Any]:
        return {"log": state["log"] + str(model.invoke("q").content)}

    def ask(state: Answer) -> dict[str, Any]:
        return {"answer": lg.interrupt("sure?")}

    g = lg.StateGraph(Answer)
    g.add_node("chat", chat)
    g.add_node("implicit", implicit)
    g.add_node("lam", RunnableLambda(lambda state: {"log": state["log"] + ";lam"}))
    g.add_node("ask", ask)
    g.add_edge(lg.START, "chat")
    g.add_edge("chat", "implicit")
    g.add_edge("implicit", "lam")
    g.add_edge("lam", "ask")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen: list[Any] = []
    for mode in ["values", "messages"]:
        tracer = Tracer()
        app.invoke({"answer": None, "log": ""}, {**config(mode), "callbacks": [tracer], "run_name": "nested"},
                   stream_mode=mode)
        seen.append([tree(run) for run in tracer.runs])
        asked = [child for child in tracer.runs[0].child_runs if child.name == "ask"]
        seen.append([run.error is not None for run in asked])
    return seen


def streamed_runs(lg: SimpleNamespace) -> list[Any]:
    """A streamed call is one traced run too, told to the graph handlers as ``invoke`` is: its chunks are the
    stream's, its run's output the values it ended with."""
    app = asking_graph(lg)
    handler = recorder(lg)
    tracer = Tracer()
    cfg = {**config("s"), "callbacks": [handler, tracer]}
    seen: list[Any] = [plain(list(app.stream({"answer": None, "log": ""}, cfg, stream_mode="updates"))),
                       plain(list(app.stream(lg.Command(resume="ok"), cfg, stream_mode="values")))]

    async def run() -> list[Any]:
        return [chunk async for chunk in app.astream(None, cfg, stream_mode="updates")]

    seen.append(asyncio.run(run()))
    seen.append([event[:3] for event in handler.events])
    seen.append([(run.name == app.get_name(), run.outputs) for run in tracer.runs])
    return seen


def event_streams(lg: SimpleNamespace) -> list[Any]:
    """``astream_events(version="v2")``: the run's start, each node's start, stream and end, the events of the
    chat model a node calls, each chunk ``astream`` yields as the run's ``on_chain_stream``, its end; filters
    and ``stream_mode`` taken."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["hey"])

    def chat(state: Answer) -> dict[str, Any]:
        return {"log": state["log"] + str(model.invoke("q").content)}

    g = lg.StateGraph(Answer)
    g.add_node("chat", chat)
    g.add_node("after", lambda state: {"answer": "done"})
    g.add_edge(lg.START, "chat")
    g.add_edge("chat", "after")
    app = g.compile(name="Assistant")

    async def run(**options: Any) -> tuple[list[Any], list[Any]]:
        # The run's own chunks (on_chain_stream of the root) are compared in their order, the other events in
        # theirs: where a chunk falls among a sync node's events depends on the threads' timing, on both.
        seen, chunks = [], []
        async for event in app.astream_events({"answer": None, "log": ""}, version="v2", **options):
            data = event["data"] if event["event"].startswith("on_chain") else None
            root_chunk = event["event"] == "on_chain_stream" and not event["parent_ids"]
            (chunks if root_chunk else seen).append((event["event"], event["name"], len(event["parent_ids"]), data))
        return seen, chunks

    return [asyncio.run(run()), asyncio.run(run(stream_mode="values")), asyncio.run(run(include_names=["Assistant"])),
            asyncio.run(run(include_names=["chat"]))]

def unnamed_graph_runs_as_langgraph(lg: SimpleNamespace) -> list[Any]:
    """A graph compiled without ``name=`` is the run LangChain's events and traces call ``"LangGraph"`` (what
    ``include_names=["LangGraph"]`` keeps); ``compile(name=)`` names it."""
    g = lg.StateGraph(Answer)
    g.add_node("after", lambda state: {"answer": "done"})
    g.add_edge(lg.START, "after")

    async def roots(app: Any, **options: Any) -> list[Any]:
        return [(event["event"], event["name"]) async for event in
                app.astream_events({"answer": None, "log": ""}, version="v2", **options) if not event["parent_ids"]]

    return [asyncio.run(roots(g.compile())), asyncio.run(roots(g.compile(), include_names=["LangGraph"])),
            asyncio.run(roots(g.compile(name="Named"))), g.compile().get_name(), g.compile(name="Named").get_name()]


PROGRAMS = [lifecycle_events, raising_handlers, async_handlers, traced_runs, nested_runs, streamed_runs,
            event_streams, unnamed_graph_runs_as_langgraph]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert program(names("statehitl")) == program(names("langgraph"))


def test_without_langchain_the_import_says_what_to_install() -> None:
    """The handlers are LangChain handlers: without langchain-core the module says which extra to install."""
    import subprocess
    import sys

    code = ("import sys\nsys.modules['langchain_core'] = None\nimport statehitl\n"
            "try:\n    import statehitl.callbacks\nexcept ImportError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "statehitl.callbacks needs langchain-core, the statehitl[langchain] extra" in done.stdout


def test_a_callbacks_value_of_no_known_kind_is_refused_as_langgraph_refuses_it() -> None:
    seen = []
    for library in ("statehitl", "langgraph"):
        module = __import__(f"{library}.callbacks", fromlist=["get_sync_graph_callback_manager_for_config"])
        try:
            module.get_sync_graph_callback_manager_for_config({"callbacks": "not handlers"})
        except TypeError as exc:
            seen.append("callbacks must be a handler, sequence, or manager" in str(exc))
    assert seen == [True, True]
