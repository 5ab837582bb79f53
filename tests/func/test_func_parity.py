"""LangGraph functional-API programs (``@entrypoint``, ``@task``) run on statehitl with their imports changed.

Each program is written once against a namespace of each library's names and run on the real LangGraph and
on statehitl; what it observes (results, stream chunks, which tasks ran, snapshots) must be equal, with
interrupt ids (each library derives its own) replaced by the interrupts' values.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import threading
from types import SimpleNamespace
from typing import Any

import pytest

# LangGraph itself is the oracle (./dev.sh test installs its group): a missing one fails, never skips
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import StreamWriter
from pydantic import BaseModel


def statehitl_names() -> SimpleNamespace:
    from statehitl.checkpoint import InMemorySaver
    from statehitl.config import get_store, get_stream_writer
    from statehitl.func import entrypoint, task
    from statehitl.store.memory import InMemoryStore
    from statehitl.types import Command, RetryPolicy, interrupt

    return SimpleNamespace(entrypoint=entrypoint, task=task, Command=Command, RetryPolicy=RetryPolicy,
                           interrupt=interrupt, InMemorySaver=InMemorySaver, get_stream_writer=get_stream_writer,
                           get_store=get_store, InMemoryStore=InMemoryStore)


def langgraph_names() -> SimpleNamespace:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.config import get_store, get_stream_writer
    from langgraph.func import entrypoint, task
    from langgraph.store.memory import InMemoryStore
    from langgraph.types import Command, RetryPolicy, interrupt

    return SimpleNamespace(entrypoint=entrypoint, task=task, Command=Command, RetryPolicy=RetryPolicy,
                           interrupt=interrupt, InMemorySaver=InMemorySaver, get_stream_writer=get_stream_writer,
                           get_store=get_store, InMemoryStore=InMemoryStore)


def plain(value: Any) -> Any:
    """What a program saw, without interrupt ids (each library derives its own)."""
    if type(value).__name__ == "Interrupt" and hasattr(value, "value"):
        return ("interrupt", plain(value.value))
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def sequential_tasks(lg: SimpleNamespace) -> list[Any]:
    calls: list[str] = []

    @lg.task
    def double(x: int) -> int:
        calls.append(f"double {x}")
        return x * 2

    @lg.task(name="add")
    def add_numbers(x: int, y: int) -> int:
        calls.append(f"add {x} {y}")
        return x + y

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(n: int) -> dict[str, int]:
        a = double(n).result()
        return {"sum": add_numbers(a, n).result()}

    return [workflow.invoke(3, config("t")), workflow.invoke(5, config("t")), calls]


def parallel_tasks(lg: SimpleNamespace) -> list[Any]:
    """Three tasks started before any result is awaited meet at a barrier: run one after another they
    could not (the barrier breaks after its timeout)."""
    barrier = threading.Barrier(3, timeout=10)

    @lg.task
    def meet(name: str) -> str:
        barrier.wait()
        return name.upper()

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(names: list[str]) -> list[str]:
        futures = [meet(n) for n in names]
        return [f.result() for f in futures]

    return [workflow.invoke(["a", "b", "c"], config("p"))]


def interrupt_in_a_task(lg: SimpleNamespace) -> list[Any]:
    calls: list[str] = []

    @lg.task
    def draft(topic: str) -> str:
        calls.append("draft")
        return f"essay on {topic}"

    @lg.task
    def review(text: str) -> str:
        calls.append("review")
        answer = lg.interrupt({"text": text, "ask": "approve?"})
        calls.append(f"review got {answer}")
        return f"{text} ({answer})"

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(topic: str) -> dict[str, str]:
        text = draft(topic).result()
        return {"final": review(text).result()}

    first = list(workflow.stream("cats", config("i"), stream_mode=["updates", "values"]))
    snapshot = workflow.get_state(config("i"))
    seen = [snapshot.values, snapshot.next, [i.value for i in snapshot.interrupts],
            [(t.name, [i.value for i in t.interrupts]) for t in snapshot.tasks]]
    second = list(workflow.stream(lg.Command(resume="approved"), config("i"), stream_mode=["updates", "values"]))
    after = workflow.get_state(config("i"))
    return [first, seen, second, after.values, after.next, calls]


def interrupts_in_turn(lg: SimpleNamespace) -> list[Any]:
    """Two tasks that ask one after the other, then the entrypoint itself: each resume answers the one asked,
    and no finished task runs again."""
    calls: list[str] = []

    @lg.task
    def ask(question: str) -> str:
        calls.append(question)
        return str(lg.interrupt(question))

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(_: Any) -> list[str]:
        first = ask("first?").result()
        second = ask("second?").result()
        third = lg.interrupt("third?")
        return [first, second, third]

    results = [workflow.invoke({"go": True}, config("q"))]
    for answer in ("one", "two", "three"):
        results.append(workflow.invoke(lg.Command(resume=answer), config("q")))
    return [results, calls]


def previous_and_final(lg: SimpleNamespace) -> list[Any]:
    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def counter(n: int, *, previous: Any = None) -> Any:
        total = (previous or 0) + n
        return lg.entrypoint.final(value=f"added {n}", save=total)

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def echo(n: int, *, previous: Any = None) -> Any:
        return {"now": n, "before": previous}

    return [counter.invoke(2, config("c")), counter.invoke(3, config("c")), counter.get_state(config("c")).values,
            echo.invoke(1, config("e")), echo.invoke(2, config("e")), echo.invoke(3, config("other"))]


def retried_task(lg: SimpleNamespace) -> list[Any]:
    attempts: list[int] = []

    @lg.task(retry_policy=lg.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False,
                                         retry_on=ValueError))
    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 3:
            raise ValueError("not yet")
        return x * 10

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(x: int) -> int:
        return int(flaky(x).result())

    return [workflow.invoke(4, config("r")), attempts]


def streamed_chunks(lg: SimpleNamespace) -> list[Any]:
    @lg.task
    def shout(word: str) -> str:
        lg.get_stream_writer()(f"shouting {word}")
        return word.upper()

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(words: list[str], writer: StreamWriter) -> str:
        writer("starting")
        loud = [shout(w).result() for w in words]
        return " ".join(loud)

    return [list(workflow.stream(["a", "b"], config("s"), stream_mode=mode))
            for mode in ("updates", "values", "custom", ["updates", "custom"])] + [
        list(workflow.stream(["c"], config("s"), stream_mode=mode, subgraphs=True))
        for mode in ("updates", ["updates", "values"])]


def async_workflow(lg: SimpleNamespace) -> list[Any]:
    calls: list[str] = []

    @lg.task
    async def fetch(key: str) -> str:
        calls.append(key)
        await asyncio.sleep(0)
        return f"<{key}>"

    @lg.task
    async def approve(items: list[str]) -> Any:
        return lg.interrupt({"items": items})

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    async def workflow(keys: list[str]) -> dict[str, Any]:
        items = list(await asyncio.gather(*[fetch(k) for k in keys]))
        return {"items": items, "approved": await approve(items)}

    async def run() -> list[Any]:
        first = await workflow.ainvoke(["x", "y"], config("a"))
        second = await workflow.ainvoke(lg.Command(resume=True), config("a"))
        return [first, second, sorted(calls)]

    return asyncio.run(run())


def failed_run_keeps_finished_tasks(lg: SimpleNamespace) -> list[Any]:
    """A task that raised fails the run; ``invoke(None)`` runs it again, but not the task that had finished."""
    calls: list[str] = []
    broken = [True]

    @lg.task
    def fetch(x: int) -> int:
        calls.append("fetch")
        return x + 1

    @lg.task
    def store(x: int) -> int:
        calls.append("store")
        if broken[0]:
            raise RuntimeError("store is down")
        return x * 2

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(x: int) -> int:
        return int(store(fetch(x).result()).result())

    seen: list[Any] = []
    try:
        workflow.invoke(1, config("f"))
    except RuntimeError as error:
        seen.append(str(error))
    broken[0] = False
    seen.append(workflow.invoke(None, config("f")))
    return [seen, calls, workflow.get_state(config("f")).values]


def parallel_interrupts(lg: SimpleNamespace) -> list[Any]:
    """Two tasks that ask side by side: the run stops on the one the entrypoint awaited first; the other asks
    again on the resume, and the task answered does not run again once it finished."""
    calls: list[str] = []

    @lg.task
    def ask(question: str) -> Any:
        calls.append(question)
        return lg.interrupt(question)

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(_: Any) -> list[Any]:
        futures = [ask("a?"), ask("b?")]
        return [f.result() for f in futures]

    first = workflow.invoke(0, config("pi"))
    (asked,) = first["__interrupt__"]
    second = workflow.invoke(lg.Command(resume={asked.id: "A"}), config("pi"))
    (asked,) = second["__interrupt__"]
    third = workflow.invoke(lg.Command(resume={asked.id: "B"}), config("pi"))
    return [first, second, third, sorted(calls)]


def runtime_and_context(lg: SimpleNamespace) -> list[Any]:
    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(x: int, *, runtime: Runtime, previous: Any = None) -> list[Any]:
        return [x, runtime.context, runtime.previous, previous]

    return [workflow.invoke(1, config("rc"), context={"user": "ann"}),
            workflow.invoke(2, config("rc"), context={"user": "bob"})]


def nested_and_mixed_tasks(lg: SimpleNamespace) -> list[Any]:
    """A task that calls a task, a sync task awaited in an async entrypoint: none runs again on the resume."""
    calls: list[Any] = []

    @lg.task
    def inner(x: int) -> int:
        calls.append(["inner", x])
        return x + 1

    @lg.task
    def outer(x: int) -> int:
        calls.append(["outer", x])
        return int(inner(x).result()) * 10

    @lg.task
    async def plus(x: int) -> int:
        calls.append(["plus", x])
        return x + 100

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def nested(x: int) -> list[Any]:
        a = outer(x).result()
        return [a, lg.interrupt(a)]

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    async def mixed(x: int) -> list[Any]:
        doubled = await outer(x)
        return [doubled, await plus(doubled), lg.interrupt("q")]

    async def run_mixed() -> list[Any]:
        return [await mixed.ainvoke(3, config("m")), await mixed.ainvoke(lg.Command(resume="r"), config("m"))]

    return [nested.invoke(1, config("n")), nested.invoke(lg.Command(resume="ok"), config("n")),
            asyncio.run(run_mixed()), calls]


class Ticket(BaseModel):
    title: str
    opened: datetime.datetime
    labels: set[str] = set()


@dataclasses.dataclass
class Triage:
    ticket: Ticket
    urgent: bool


def models_as_values(lg: SimpleNamespace) -> list[Any]:
    """An entrypoint's input, its tasks' results and its value may be the models and dataclasses its
    annotations name (and the standard types: datetimes, sets): a resumed run reads its kept results back as
    those classes, and ``previous`` is the saved value, as it was."""
    ran: list[str] = []

    @lg.task
    def triage(ticket: Ticket) -> Triage:
        ran.append("triage")
        return Triage(ticket=ticket.model_copy(update={"labels": ticket.labels | {"seen"}}), urgent=True)

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(ticket: Ticket, *, previous: Triage | None = None) -> Triage:
        done = triage(ticket).result()
        ran.append(f"got {type(done).__name__} of {type(done.ticket).__name__}")  # a kept result too
        note = lg.interrupt(f"urgent {done.ticket.title}? (before: {type(previous).__name__})")
        return dataclasses.replace(done, urgent=note == "yes")

    opened = datetime.datetime(2026, 12, 6, 9, 30, tzinfo=datetime.UTC)
    first = workflow.invoke(Ticket(title="disk", opened=opened, labels={"ops"}), config("m"))
    second = workflow.invoke(lg.Command(resume="yes"), config("m"))
    third = workflow.invoke(Ticket(title="net", opened=opened), config("m"))
    return [first, second, workflow.get_state(config("m")).values, third, ran]


def traced_tasks(lg: SimpleNamespace) -> list[Any]:
    """Under LangChain callbacks a workflow's call is one root run ending with the workflow's value; inside it
    the entrypoint's run, and in that each task call's run with its arguments by name (defaults filled in), its
    result, or its error (LangGraph names the root run ``LangGraph`` and ends the entrypoint's run with the
    function's value: compared without those)."""
    from langchain_core.tracers import BaseTracer

    class Tracer(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list[Any] = []

        def _persist_run(self, run: Any) -> None:
            self.runs.append(run)

    @lg.task
    def double(x: int, *, times: int = 2) -> int:
        return x * times

    @lg.task
    async def broken(x: int) -> int:
        raise ValueError(f"no {x}")

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    async def flow(n: int) -> int:
        total = await double(n) + await double(n, times=3)
        try:
            await broken(n)
        except ValueError:
            total += 1
        return total

    tracer = Tracer()
    value = asyncio.run(flow.ainvoke(2, {**config("tr"), "callbacks": [tracer]}))
    (root,) = tracer.runs
    (node,) = root.child_runs
    tasks = sorted(((run.name, run.inputs, run.outputs, run.error is not None) for run in node.child_runs),
                   key=repr)
    return [value, root.inputs, root.outputs, node.name, node.inputs, tasks]


def retried_entrypoint(lg: SimpleNamespace) -> list[Any]:
    """An entrypoint with a retry policy runs again after it raised, its tasks too (LangGraph's: only a failed
    run's retry with invoke(None) keeps them)."""
    calls: list[str] = []

    @lg.task
    def fetch(x: int) -> int:
        calls.append("fetch")
        return x + 1

    @lg.entrypoint(checkpointer=lg.InMemorySaver(),
                   retry_policy=lg.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False,
                                               retry_on=ValueError))
    def workflow(x: int) -> int:
        got = int(fetch(x).result())
        calls.append("body")
        if calls.count("body") == 1:
            raise ValueError("flaky")
        return got

    return [workflow.invoke(1, config("re")), calls]


def task_events(lg: SimpleNamespace) -> list[Any]:
    """``stream_mode="tasks"``: the entrypoint's and each task's start and end (ids left out: each library
    makes its own)."""

    @lg.task
    def add_one(x: int) -> int:
        return x + 1

    @lg.task
    def ask(x: int) -> Any:
        return lg.interrupt({"x": x})

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(x: int) -> list[Any]:
        y = add_one(x).result()
        return [y, ask(y).result()]

    def events(given: Any) -> list[Any]:
        return [{k: [i["value"] for i in v] if k == "interrupts" else v for k, v in e.items() if k != "id"}
                for e in workflow.stream(given, config("te"), stream_mode="tasks")]

    return [events(1), events(lg.Command(resume="ok"))]


def json_schemas(lg: SimpleNamespace) -> list[Any]:
    """The schemas read from the function's annotations (given as objects: this file's are strings)."""

    def numbers(xs, *, previous=None):
        return [str(x) for x in xs]

    def counted(msg, *, previous=None):
        return lg.entrypoint.final(value=1, save=[msg])

    def loose(msg, *, previous=None):
        return lg.entrypoint.final(value=msg, save=None)

    numbers.__annotations__ = {"xs": list[int], "previous": Any, "return": list[str]}
    counted.__annotations__ = {"msg": str, "previous": Any, "return": lg.entrypoint.final[int, list[str]]}
    loose.__annotations__ = {"previous": Any, "return": lg.entrypoint.final}
    made = [lg.entrypoint()(fn) for fn in (numbers, counted, loose)]
    return [[w.get_input_jsonschema(), w.get_output_jsonschema()] for w in made]

def update_state_gives_previous(lg: SimpleNamespace) -> list[Any]:
    """``update_state`` writes the value the next run gets as ``previous``, on a thread never run too."""

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(inputs: Any, *, previous: Any = None) -> Any:
        return {"previous": previous, "current": inputs}

    workflow.update_state(config("u"), {"seed": 0})
    first = workflow.invoke({"a": 1}, config("u"))
    workflow.update_state(config("u"), {"edited": True})
    return [first, workflow.get_state(config("u")).values, workflow.invoke({"a": 2}, config("u"))]


def store_across_threads(lg: SimpleNamespace) -> list[Any]:
    """The entrypoint's ``store`` parameter, ``runtime.store`` and a task's ``get_store()``: one store, shared by
    the workflow's threads."""

    @lg.task
    def remember(user: str, fact: str) -> int:
        store = lg.get_store()
        store.put(("facts", user), fact, {"text": fact})
        return len(store.search(("facts", user)))

    @lg.entrypoint(checkpointer=lg.InMemorySaver(), store=lg.InMemoryStore())
    def workflow(turn: dict[str, str], *, store: BaseStore, runtime: Runtime) -> dict[str, Any]:
        known = [item.value["text"] for item in store.search(("facts", turn["user"]))]
        count = remember(turn["user"], turn["fact"]).result()
        return {"known": known, "count": count, "same": runtime.store is store}

    return [workflow.invoke({"user": "ann", "fact": "tea"}, config("t1")),
            workflow.invoke({"user": "ann", "fact": "cats"}, config("t2")),
            workflow.invoke({"user": "bob", "fact": "dogs"}, config("t3"))]


PROGRAMS = [store_across_threads, sequential_tasks, parallel_tasks, interrupt_in_a_task, interrupts_in_turn,
            previous_and_final,
            retried_task, streamed_chunks, async_workflow, failed_run_keeps_finished_tasks, parallel_interrupts,
            runtime_and_context, nested_and_mixed_tasks, retried_entrypoint, task_events,
            json_schemas, update_state_gives_previous, models_as_values, traced_tasks]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_workflow_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
