"""Snapshots as LangGraph shows them: the tasks of a checkpoint (their order, paths and results), a checkpoint
named by id shown as it was written, an update without ``as_node`` routed as the node that made the checkpoint,
and a thread deleted from sync code. Programs run on LangGraph and on statehitl, as in ``test_langgraph_parity``.

What each library derives for itself is left out of the comparison: task ids, checkpoint ids, timestamps.
"""

from __future__ import annotations

import importlib
import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from test_langgraph_parity import config, langgraph_names, plain, statehitl_names


def shown(snapshot: Any) -> tuple[Any, ...]:
    """What a program reads of a snapshot, less what each library derives for itself."""
    tasks = tuple((t.name, t.path, t.error, tuple(i.value for i in t.interrupts), t.result) for t in snapshot.tasks)
    return (snapshot.values, snapshot.next, snapshot.metadata["source"], snapshot.metadata["step"], tasks,
            tuple(i.value for i in snapshot.interrupts))


def sends_and_root_values(lg: SimpleNamespace) -> list[Any]:
    """A root-value state whose step runs two Sends beside a node, one Send asking: each checkpoint's tasks
    list the Sends first, a Send's path is its index among the step's sends, a task's result is the value it
    wrote, and the step that stopped shows the finished tasks' results without their writes applied."""

    def fan(state: list) -> list[Any]:
        return [lg.Send("echo", "one"), lg.Send("ask", "two"), "tail"]

    g = lg.StateGraph(Annotated[list, operator.add])
    g.add_node("start", lambda s: ["start"])
    g.add_node("echo", lambda arg: [f"echo|{arg}"])
    g.add_node("ask", lambda arg: [f"ask|{lg.interrupt(arg)}"])
    g.add_node("tail", lambda s: ["tail"])
    g.add_edge(lg.START, "start")
    g.add_conditional_edges("start", fan)
    app = g.compile(checkpointer=lg.InMemorySaver())
    app.invoke(["in"], config("s"))
    stopped = [shown(app.get_state(config("s"))), [shown(s) for s in app.get_state_history(config("s"))]]
    app.invoke(lg.Command(resume="yes"), config("s"))
    return [*stopped, [shown(s) for s in app.get_state_history(config("s"))]]


class Chat(TypedDict):
    log: Annotated[list, operator.add]
    calls: list


def update_without_as_node(lg: SimpleNamespace) -> list[Any]:
    """A thread stopped before the tools a routing node sent it to: an update without ``as_node`` is the
    routing node's, so clearing its calls leaves nothing to run (and a ``Command``'s Sends are dropped);
    where the node's edges are fixed, the checkpoint's tasks stay."""

    def route(state: Chat) -> list[Any]:
        return [lg.Send("tool", call) for call in state["calls"]] or [lg.END]

    g = lg.StateGraph(Chat)
    g.add_node("agent", lambda s: {"log": ["agent"], "calls": ["a", "b"]})
    g.add_node("tool", lambda call: {"log": [f"tool {call}"]})
    g.add_edge(lg.START, "agent")
    g.add_conditional_edges("agent", route, ["tool", lg.END])
    app = g.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["tool"])
    app.invoke({"log": [], "calls": []}, config("r"))
    seen = [shown(app.get_state(config("r")))]
    app.update_state(config("r"), {"calls": []})
    seen.append(shown(app.get_state(config("r"))))

    def commands(state: Chat) -> Any:
        return lg.Command(update={"log": ["agent"], "calls": ["a"]}, goto=[lg.Send("tool", "a")])

    sent = lg.StateGraph(Chat)
    sent.add_node("agent", commands)
    sent.add_node("tool", lambda call: {"log": [f"tool {call}"]})
    sent.add_edge(lg.START, "agent")
    goes = sent.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["tool"])
    goes.invoke({"log": [], "calls": []}, config("c"))
    goes.update_state(config("c"), {"calls": []})
    seen.append(shown(goes.get_state(config("c"))))

    fixed = lg.StateGraph(Chat)
    fixed.add_node("agent", lambda s: {"log": ["agent"]})
    fixed.add_node("after", lambda s: {"log": ["after"]})
    fixed.add_edge(lg.START, "agent")
    fixed.add_edge("agent", "after")
    kept = fixed.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["after"])
    kept.invoke({"log": [], "calls": []}, config("k"))
    kept.update_state(config("k"), {"calls": ["x"]})
    seen += [shown(kept.get_state(config("k"))), kept.invoke(None, config("k"))]
    return seen


def named_checkpoint_as_written(lg: SimpleNamespace) -> list[Any]:
    """A step stopped on an interrupt beside a node that finished: the thread's current checkpoint shows the
    finished node's write applied and only the asking node next; the same checkpoint named by its id shows
    it as written (every task next, the finished one with its result)."""
    g = lg.StateGraph(Chat)
    g.add_node("done", lambda s: {"log": ["done"]})
    g.add_node("asks", lambda s: {"log": [lg.interrupt("ok?")]})
    g.add_edge(lg.START, "done")
    g.add_edge(lg.START, "asks")
    app = g.compile(checkpointer=lg.InMemorySaver())
    app.invoke({"log": [], "calls": []}, config("n"))
    current = app.get_state(config("n"))
    return [shown(current), shown(app.get_state(current.config))]


def exit_durability_results(lg: SimpleNamespace) -> list[Any]:
    """With ``durability="exit"`` the checkpoints between stops are not written: the checkpoint a run resumed
    from shows no results for its tasks (what the next checkpoint holds is another step's writes)."""
    g = lg.StateGraph(Chat)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    app = g.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["b"])
    app.invoke({"log": [], "calls": []}, config("x"), durability="exit")
    app.invoke(None, config("x"), durability="exit")
    return [shown(s) for s in app.get_state_history(config("x"))]


def delete_thread_from_sync_code(lg: SimpleNamespace) -> list[Any]:
    """``checkpointer.delete_thread(thread_id)`` called from sync code deletes the thread at once."""
    g = lg.StateGraph(Chat)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_edge(lg.START, "a")
    app = g.compile(checkpointer=lg.InMemorySaver())
    app.invoke({"log": [], "calls": []}, config("d"))
    before = app.checkpointer.get_tuple(config("d")) is not None
    app.checkpointer.delete_thread("d")
    return [before, app.checkpointer.get_tuple(config("d")), list(app.get_state_history(config("d")))]


class Jokes(TypedDict):
    subjects: list[str]
    jokes: Annotated[list[str], operator.add]


class Joke(TypedDict):
    subject: str


def subgraph_update_keeps_its_siblings(lg: SimpleNamespace) -> list[Any]:
    """Two Sends into a subgraph that stops before its last node: editing one run's state (its task's
    config) leaves the other where it stopped, and the resume finishes both."""
    sub = lg.StateGraph(Joke, output_schema=Jokes)
    sub.add_node("edit", lambda s: {"subject": f"{s['subject']}!"})
    sub.add_node("tell", lambda s: {"jokes": [f"joke about {s['subject']}"]})
    sub.add_edge(lg.START, "edit")
    sub.add_edge("edit", "tell")
    g = lg.StateGraph(Jokes)
    g.add_node("joke", sub.compile(interrupt_before=["tell"]))
    g.add_conditional_edges(lg.START, lambda s: [lg.Send("joke", {"subject": x}) for x in s["subjects"]])
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = [app.invoke({"subjects": ["cats", "dogs"]}, config("j"))]
    stopped = app.get_state(config("j"), subgraphs=True)
    seen.append([(t.path, t.state.values["subject"], t.state.next) for t in stopped.tasks])
    app.update_state(stopped.tasks[1].state.config, {"subject": "turtles"})
    seen.append(sorted(map(repr, app.stream(None, config("j")))))
    return [*seen, app.get_state(config("j")).values]


def run_config_in_metadata(lg: SimpleNamespace) -> list[Any]:
    """A run's own config keys (plain values of ``configurable`` and ``metadata``) are in every checkpoint's
    metadata it writes, in snapshots and in the checkpointer's tuples, and a history filters by them."""
    g = lg.StateGraph(Chat)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["b"])
    given = {"configurable": {"thread_id": "m", "user": "ann", "n": 2, "obj": object(), "__hidden": "x"},
             "metadata": {"team": "blue", "user": "not this one"}}
    app.invoke({"log": [], "calls": []}, given)
    app.invoke(None, {"configurable": {"thread_id": "m", "user": "bob"}})
    return [[s.metadata for s in app.get_state_history(config("m"))],
            [t.metadata for t in app.checkpointer.list(config("m"))],
            [s.metadata["step"] for s in app.get_state_history(config("m"), filter={"user": "bob"})]]


def message_updated_in_a_root_state(lg: SimpleNamespace) -> list[Any]:
    """A message read from a root-value state of messages, edited and given back to ``update_state``,
    replaces the one with its id as it is (a LangChain message is a pydantic model, not a state's fields)."""
    from langchain_core.messages import AIMessage, HumanMessage

    library = lg.StateGraph.__module__.split(".")[0]  # langgraph or statehitl
    add_messages = importlib.import_module(f"{library}.graph.message").add_messages
    call = {"id": "c1", "name": "search", "args": {"q": "sf"}}
    g = lg.StateGraph(Annotated[list, add_messages])
    g.add_node("agent", lambda s: [AIMessage(content="", tool_calls=[call], id="ai1")])
    g.add_node("tools", lambda s: [])
    g.add_edge(lg.START, "agent")
    g.add_edge("agent", "tools")
    app = g.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["tools"])
    app.invoke([HumanMessage("hi", id="h1")], config("g"))
    last = app.get_state(config("g")).values[-1]
    last.tool_calls[0]["args"] = {"q": "la"}
    app.update_state(config("g"), last)
    return [repr(m) for m in app.get_state(config("g")).values]


PROGRAMS = [sends_and_root_values, update_without_as_node, named_checkpoint_as_written, exit_durability_results,
            delete_thread_from_sync_code, subgraph_update_keeps_its_siblings, run_config_in_metadata,
            message_updated_in_a_root_state]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
