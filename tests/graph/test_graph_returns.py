"""What nodes return and callers give, kept durable: several writes of a channel, a caller's Command, a Send of a
Command, update_state's copies and values a TypedDict does not enforce, each through the file store and a
second app (another process's view of the thread), and each refusal leaving the thread as it was."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import FileCheckpointer
from statehitl.errors import GraphValidationError, InvalidUpdateError, NotJSONError
from statehitl.graph import START, StateGraph
from statehitl.types import Command, Send, interrupt


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


class Joined(TypedDict):
    text: Annotated[str, lambda a, b: "+".join(x for x in (a, b) if x)]
    n: int


def joined_graph(directory: Path) -> Any:
    g = StateGraph(Joined)
    g.add_node("twice", lambda s: [Command(update={"text": "t1"}), Command(update=[("text", "t2")])])
    g.add_node("ask", lambda s: {"text": f"ask={interrupt('go?')}"})
    g.add_edge(START, "twice")
    g.add_edge(START, "ask")
    return g.compile(checkpointer=FileCheckpointer(directory))


def test_a_finished_node_s_several_writes_are_kept_across_an_interrupt_and_another_app_applies_them(tmp_path: Path
                                                                                                   ) -> None:
    stopped = joined_graph(tmp_path).invoke({"text": "in"}, config("t"))
    assert stopped["text"] == "in+t1+t2"  # the finished sibling's writes, shown while the thread waits
    snapshot = joined_graph(tmp_path).get_state(config("t"))
    assert {t.name: t.result for t in snapshot.tasks} == {"twice": {"text": {"$writes": ["t1", "t2"]}}, "ask": None}
    done = joined_graph(tmp_path).invoke(Command(resume="yes"), config("t"))
    assert done == {"text": "in+ask=yes+t1+t2"}  # a step's writes apply by node name: "ask" before "twice"
    last = next(iter(joined_graph(tmp_path).get_state_history(config("t"))))
    assert last.writes == {"ask": {"text": "ask=yes"}, "twice": {"text": {"$writes": ["t1", "t2"]}}}


def test_two_writes_of_a_channel_without_a_reducer_fail_the_step_naming_node_and_channel(tmp_path: Path) -> None:
    g = StateGraph(Joined)
    g.add_node("twice", lambda s: Command(update=[("n", 1), ("n", 2)]))
    g.add_edge(START, "twice")
    app = g.compile(checkpointer=FileCheckpointer(tmp_path))
    with pytest.raises(InvalidUpdateError, match=r"node 'twice' wrote 'n' 2 times in one step, but 'n' has no reducer"):
        app.invoke({"text": ""}, config("t"))


class Ticket(BaseModel):
    text: str
    score: int = 0


def ticket_graph(directory: Path) -> Any:
    g = StateGraph(Ticket)
    g.add_node("ask", lambda s: {"text": f"{s.text}:{interrupt('ok?')}:{s.score}"})
    g.add_node("other", lambda s: {"score": s.score + 100})
    g.add_edge(START, "ask")
    return g.compile(checkpointer=FileCheckpointer(directory))


def test_a_command_s_update_goes_with_its_answer_and_another_app_sees_it(tmp_path: Path) -> None:
    ticket_graph(tmp_path).invoke({"text": "t"}, config("t"))
    done = ticket_graph(tmp_path).invoke(Command(update={"score": 2}, resume="yes", goto="other"), config("t"))
    assert done == {"text": "t:yes:2", "score": 102}
    assert ticket_graph(tmp_path).get_state(config("t")).values == Ticket(text="t:yes:2", score=102)


def test_a_command_refused_as_input_leaves_the_waiting_thread_as_it_was(tmp_path: Path, disk_snapshot: Any) -> None:
    app = ticket_graph(tmp_path)
    app.invoke({"text": "t"}, config("t"))
    before = disk_snapshot(tmp_path)
    with pytest.raises(InvalidUpdateError, match=r"the input wrote an invalid value to 'score' of Ticket"):
        app.invoke(Command(update={"score": "many"}, resume="yes"), config("t"))
    with pytest.raises(GraphValidationError, match=r"'nowhere' is not a node of 'TicketGraph'"):
        app.invoke(Command(goto="nowhere", resume="yes"), config("t"))
    assert disk_snapshot(tmp_path) == before
    assert app.invoke(Command(resume="yes"), config("t")) == {"text": "t:yes:0", "score": 0}  # still answerable


class Loose(TypedDict):
    count: int
    tags: set[str]


def test_values_a_typeddict_does_not_enforce_are_stored_as_written(tmp_path: Path) -> None:
    """A value that does not fit its annotation is kept as written, and read back as stored; one that fits is
    read back through its annotation (a set stored as JSON comes back a set)."""

    def build() -> Any:
        g = StateGraph(Loose)
        g.add_node("write", lambda s: {"count": "three", "tags": {"b", "a"}})
        g.add_node("ask", lambda s: {"count": f"{s['count']}/{interrupt('more?')}"})
        g.add_edge(START, "write")
        g.add_edge("write", "ask")
        return g.compile(checkpointer=FileCheckpointer(tmp_path))

    assert build().invoke({"count": 1}, config("t"))["count"] == "three"
    assert build().get_state(config("t")).values == {"count": "three", "tags": {"a", "b"}}
    assert build().invoke(Command(resume="yes"), config("t")) == {"count": "three/yes", "tags": {"a", "b"}}


def test_a_copy_is_a_sibling_that_another_app_runs_and_asks_again(tmp_path: Path) -> None:
    def build() -> Any:
        g = StateGraph(Joined)
        g.add_node("first", lambda s: {"text": "1"})
        g.add_node("ask", lambda s: {"text": f"ask={interrupt('go?')}"})
        g.add_edge(START, "first")
        g.add_edge("first", "ask")
        return g.compile(checkpointer=FileCheckpointer(tmp_path))

    build().invoke({"text": "in"}, config("t"))
    build().invoke(Command(resume="yes"), config("t"))
    before_ask = next(s for s in build().get_state_history(config("t")) if s.next == ("ask",))
    copied = build().update_state(before_ask.config, None, as_node="__copy__")
    snapshot = build().get_state(copied)
    assert (snapshot.metadata["source"], snapshot.next, snapshot.parent_config) == ("fork", ("ask",),
                                                                                    before_ask.parent_config)
    again = build().invoke(None, copied)
    assert [i.value for i in again["__interrupt__"]] == ["go?"]
    assert build().invoke(Command(resume="no"), copied) == {"text": "in+1+ask=no"}


def test_a_send_of_a_command_survives_an_interrupt_in_its_step(tmp_path: Path) -> None:
    def build() -> Any:
        def worker(state: Any) -> Any:
            if isinstance(state, Command):
                return [state, Command(update=["got a command"])]
            return [f"worker:{state}"]

        g = StateGraph(Annotated[list, operator.add])
        g.add_node("plan", lambda s: ["plan"])
        g.add_node("worker", worker)
        g.add_node("ask", lambda s: [interrupt("go?")])
        g.add_edge(START, "plan")
        g.add_conditional_edges("plan", lambda s: [Send("worker", Command(goto=Send("worker", 7))), "ask"])
        return g.compile(checkpointer=FileCheckpointer(tmp_path))

    build().invoke([], config("t"))
    assert build().invoke(Command(resume="yes"), config("t")) == ["plan", "yes", "got a command", "worker:7"]


class Handle:
    """An object JSON cannot hold (as a LangChain Runnable or an open client is)."""


class Holding(TypedDict, total=False):
    text: str
    held: Any


def loose_graph(directory: Path, node: Any) -> Any:
    g = StateGraph(Holding)
    g.add_node("keep", node)
    g.add_edge(START, "keep")
    return g.compile(checkpointer=FileCheckpointer(directory))


def test_a_value_json_cannot_hold_is_refused_naming_writer_and_channel(tmp_path: Path) -> None:
    """The input's is refused before anything is stored; a node's fails its step, the thread marked failed
    (issue 35 item 8: never left executing); update_state's is refused with nothing stored."""
    app = loose_graph(tmp_path, lambda s: {"text": s["text"] + "!"})
    assert app.invoke({"text": "a"}, config("t")) == {"text": "a!"}
    before = app.get_state(config("t"))
    with pytest.raises(NotJSONError, match=r"^the input wrote to channel 'held' a value that cannot be stored: "
                                            r"it holds a \S*Handle \(<"):
        app.invoke({"text": "b", "held": Handle()}, config("t"))
    with pytest.raises(NotJSONError, match=r"^the input wrote to channel 'held' a value that cannot be stored"):
        app.invoke({"text": "b", "held": Handle()}, config("new"))
    assert app.get_state(config("t")) == before
    assert app.get_state(config("new")).values == {}

    writes = loose_graph(tmp_path, lambda s: {"text": "c", "held": Handle()})
    with pytest.raises(NotJSONError, match=r"^node 'keep' wrote to channel 'held' a value that cannot be stored"):
        writes.invoke({"text": "c"}, config("t"))
    failed = writes.get_state(config("t"))  # the step failed where the node wrote it: the thread says so
    assert (failed.status, failed.error.node, "held" in failed.values) == ("failed", "keep", False)
    with pytest.raises(NotJSONError, match=r"^node 'keep' wrote to channel 'held' a value that cannot be stored"):
        writes.update_state(config("t"), {"held": Handle()}, as_node="keep")
    after = writes.get_state(config("t"))  # (the tasks' errors are rebuilt per read: exceptions compare by identity)
    assert (after.values, after.config, after.next, after.status) == (failed.values, failed.config, failed.next,
                                                                      failed.status)


def test_a_path_function_that_returns_a_coroutine_without_being_async_is_told_to_be_async() -> None:
    async def pick(state: Any) -> str:
        return "b"

    g = StateGraph(Joined)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("b", lambda s: {"n": 2})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: pick(s))  # a coroutine, from a function the graph cannot await
    with pytest.raises(GraphValidationError, match=r"returned <coroutine .*>; it must return node names \(a path "
                                                   r"function that awaits must be an async def"):
        g.compile().invoke({"text": "", "n": 0})
