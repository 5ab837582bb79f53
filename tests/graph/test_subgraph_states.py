"""Subgraph checkpoints on statehitl's own terms: views over the parent's records (no record of their own),
durable on a file store, and bad configs refused with nothing written. What LangGraph shows the same way is
checked against LangGraph itself in ``test_langgraph_subgraph_parity``."""

from __future__ import annotations

import asyncio
import operator
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.checkpoint.checkpoint_ids import untag
from statehitl.errors import CheckpointNotFoundError, GraphValidationError, UnknownNodeError
from statehitl.graph import START, MessagesState, StateGraph
from statehitl.graph.message_state import MessagesStateGraphSchema
from statehitl.managed import RemainingSteps
from statehitl.store.base import BaseStore
from statehitl.store.memory import InMemoryStore
from statehitl.types import Command, interrupt


class Value(TypedDict):
    value: Annotated[list, operator.add]


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def asking(called: list[str], **compile: Any) -> Any:
    def step_a(state: Value) -> dict[str, Any]:
        called.append("step_a")
        return {"value": ["step_a"]}

    def ask(state: Value) -> dict[str, Any]:
        called.append("ask")
        return {"value": [f"ask:{interrupt('q')}"]}

    return (StateGraph(Value).add_node("step_a", step_a).add_node("ask", ask)
            .add_edge(START, "step_a").add_edge("step_a", "ask").compile(**compile))


def parent_of(sub: Any, store: Any) -> Any:
    return StateGraph(Value).add_node("executor", sub).add_edge(START, "executor").compile(checkpointer=store)


def records(app: Any, thread: str) -> list[Any]:
    return asyncio.run(app.checkpointer.history(thread))


def test_a_subgraph_checkpoint_is_its_parents_record_and_costs_no_write_of_its_own() -> None:
    plain = parent_of(lambda s: {"value": [interrupt("q")]}, InMemorySaver())  # its node asks itself
    plain.invoke({"value": []}, config("t"))
    app = parent_of(asking([], checkpointer=True), InMemorySaver())
    app.invoke({"value": []}, config("t"))
    assert len(records(app, "t")) == len(records(plain, "t")) == 1  # a stop inside a subgraph: the parent's
    sub = app.get_state(config("t"), subgraphs=True).tasks[0].state
    (record,) = records(app, "t")
    assert sub.checkpoint_id == untag("t", sub.config["configurable"]["checkpoint_id"]) == record.checkpoint_id
    assert sub.config["configurable"]["checkpoint_ns"] == "executor"
    assert record.progress["executor"]["pending"] == ["ask"]  # where it stands is the task's progress


def test_a_subgraph_config_of_one_thread_is_refused_on_another() -> None:
    app = parent_of(asking([], checkpointer=True), InMemorySaver())
    app.invoke({"value": []}, config("t"))
    app.invoke({"value": []}, config("u"))
    sub = app.get_state(config("t"), subgraphs=True).tasks[0].state.config
    other = {"configurable": {**sub["configurable"], "thread_id": "u"}}
    with pytest.raises(CheckpointNotFoundError, match="another thread"):
        app.get_state(other)
    assert app.get_state(sub).next == ("ask",)


def test_an_edit_of_a_subgraph_checkpoint_is_one_record_and_its_run_writes_what_a_run_does() -> None:
    called: list[str] = []
    app = parent_of(asking(called, checkpointer=True), InMemorySaver())
    app.invoke({"value": []}, config("t"))
    sub = app.get_state(config("t"), subgraphs=True).tasks[0].state.config
    before = len(records(app, "t"))
    edited = app.update_state(sub, {"value": ["edited"]})
    assert len(records(app, "t")) == before + 1
    assert edited["configurable"]["checkpoint_ns"] == "executor"
    assert app.get_state(edited).values == {"value": ["step_a", "edited"]}
    assert app.get_state(config("t")).metadata["source"] == "fork"  # the branch the edit begins
    called.clear()
    assert app.invoke(None, edited)["__interrupt__"][0].value == "q"
    assert called == ["ask"]
    assert app.invoke(Command(resume="ok"), config("t")) == {"value": ["step_a", "edited", "ask:ok"]}


def test_subgraph_checkpoints_outlive_the_process_on_a_file_store(tmp_path: Path) -> None:
    called: list[str] = []
    app = parent_of(asking(called, checkpointer=True), FileCheckpointer(tmp_path))
    app.invoke({"value": []}, config("t"))
    sub = app.get_state(config("t"), subgraphs=True).tasks[0].state.config
    app.invoke(Command(resume="first"), config("t"))
    again = parent_of(asking(called, checkpointer=True), FileCheckpointer(tmp_path))  # what a new process builds
    assert again.get_state(sub).next == ("ask",)
    called.clear()
    assert again.invoke(None, sub)["__interrupt__"][0].value == "q"
    assert called == ["ask"]
    assert again.invoke(Command(resume="second"), config("t")) == {"value": ["step_a", "ask:second"]}


def test_a_subgraphs_history_is_where_it_stopped_and_where_it_ended() -> None:
    app = parent_of(asking([], checkpointer=True), InMemorySaver())
    ns = {"configurable": {"thread_id": "t", "checkpoint_ns": "executor"}}
    assert list(app.get_state_history(ns)) == []
    app.invoke({"value": []}, config("t"))
    app.invoke(Command(resume="a"), config("t"))
    shown = [(s.values, s.next) for s in app.get_state_history(ns)]
    assert shown == [({"value": ["step_a", "ask:a"]}, ()), ({"value": ["step_a"]}, ("ask",))]
    assert app.get_state(ns).values == {"value": ["step_a", "ask:a"]}  # the state it keeps between runs
    (stop,) = app.get_state_history(ns, limit=1, before=app.get_state(ns).config)
    assert stop.next == ("ask",)


def test_a_namespace_that_names_no_subgraph_is_refused() -> None:
    app = parent_of(asking([], checkpointer=True), InMemorySaver())
    app.invoke({"value": []}, config("t"))
    wrong = {"configurable": {"thread_id": "t", "checkpoint_ns": "nowhere"}}
    with pytest.raises(ValueError, match="Subgraph 'nowhere' not found"):
        app.get_state(wrong)
    with pytest.raises(ValueError, match="not found"):
        list(app.get_state_history(wrong))
    with pytest.raises(ValueError, match="not found"):
        app.invoke(None, wrong)


def test_bad_subgraph_configs_are_refused_and_nothing_is_stored() -> None:
    app = parent_of(asking([], checkpointer=True), InMemorySaver())
    app.invoke({"value": []}, config("t"))
    sub = app.get_state(config("t"), subgraphs=True).tasks[0].state.config
    before = records(app, "t")
    missing = {"configurable": {**sub["configurable"], "checkpoint_id": "000000000099"}}
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint 000000000099"):
        app.get_state(missing)
    with pytest.raises(UnknownNodeError, match="'nope' is not a node of"):
        app.update_state(sub, {"value": ["x"]}, as_node="nope")
    app.invoke(Command(resume="done"), config("t"))
    ended = {"configurable": {"thread_id": "t", "checkpoint_ns": "executor"}}
    after = records(app, "t")
    with pytest.raises(CheckpointNotFoundError, match="where it stopped inside"):
        app.update_state(ended, {"value": ["x"]})  # it finished: no stopped run to edit
    assert records(app, "t") == after
    assert {r.seq: r for r in after}.items() >= {r.seq: r for r in before}.items()  # the refused calls wrote nothing


def test_a_stateful_graph_in_code_the_compile_cannot_see_is_refused_by_name() -> None:
    keeps = StateGraph(Value).add_node("k", lambda s: {"value": ["k"]}).add_edge(START, "k").compile(
        checkpointer=True)
    graphs = {"keeps": keeps}

    def made() -> Any:
        return graphs["keeps"]

    def call(state: Value) -> dict[str, Any]:
        return {"value": made().invoke({"value": []})["value"]}

    app = StateGraph(Value).add_node("call", call).add_edge(START, "call").compile(checkpointer=InMemorySaver())
    with pytest.raises(GraphValidationError, match="invoked 'ValueGraph', a graph compiled with checkpointer=True"):
        app.invoke({"value": []}, config("t"))


def _text(message: Any) -> str:
    return message["content"] if isinstance(message, dict) else message.content  # dicts without langchain-core


def test_stateful_subgraphs_of_a_messages_graph_hold_messages_share_the_store_and_hide_their_channels() -> None:
    class Chat(MessagesState):
        left: RemainingSteps

    seen: list[tuple[str, int]] = []

    def answer(state: Chat, config: dict[str, Any], *, store: BaseStore) -> dict[str, Any]:
        namespace = config["configurable"]["checkpoint_ns"].split("|")[0].split(":")[0]
        seen.append((namespace, state["left"]))
        store.put(("calls", namespace), str(len(store.search(("calls", namespace)))), {"n": len(state["messages"])})
        return {"messages": [("assistant", f"{namespace}:{interrupt('ok?')}")]}

    inner = StateGraph(Chat).add_node("answer", answer).add_edge(START, "answer").compile(checkpointer=True)
    assert type(inner.schema.as_nested()) is type(inner.schema) is MessagesStateGraphSchema

    def caller(state: Chat) -> dict[str, Any]:
        return {"messages": inner.invoke({"messages": state["messages"][-1:]})["messages"][-1:]}

    app = (StateGraph(Chat).add_node("sub", inner).add_node("caller", caller).add_edge(START, "sub")
           .add_edge("sub", "caller").compile(checkpointer=InMemorySaver(), store=InMemoryStore()))
    updates = list(app.stream({"messages": [("user", "hi")]}, config("t"), stream_mode="updates"))
    snapshot = app.get_state(config("t"), subgraphs=True)
    inside = snapshot.tasks[0].state
    assert inside.config["configurable"]["checkpoint_ns"] == "sub"
    assert [_text(m) for m in inside.values["messages"]] == ["hi"]
    updates += app.stream(Command(resume="a"), config("t"), stream_mode="updates")
    updates += app.stream(Command(resume="b"), config("t"), stream_mode="updates")
    # the private channels where the stateful subgraphs keep their states are shown to no reader
    written = [k for chunk in updates for node, u in chunk.items() if node != "__interrupt__" for k in (u or {})]
    assert set(written) == {"messages"}
    assert sorted(app.get_state(config("t")).values) == ["messages"]
    assert [_text(m) for m in app.get_state(config("t")).values["messages"]] == ["hi", "sub:a", "caller:b"]
    # a second run on the thread: each stateful subgraph goes on from the messages it kept
    app.invoke({"messages": [("user", "again")]}, config("t"))
    kept = app.get_state(config("t"), subgraphs=True).tasks[0].state
    assert [_text(m) for m in kept.values["messages"]] == ["hi", "sub:a", "caller:b", "again"]  # merged by id
    assert [ns for ns, _ in seen] == ["sub", "sub", "caller", "caller", "sub"]
    assert {left for _, left in seen} == {24}  # the step limit reaches into the subgraphs
    assert [item.value["n"] for item in app.store.search(("calls", "sub"))] == [1, 1, 4]


def test_a_compiled_graph_is_freed_without_the_cycle_collector() -> None:
    # its snapshot reader refers back to it weakly: a graph compiled per request leaves no cyclic garbage
    import gc
    import weakref

    gc.disable()
    try:
        app = parent_of(asking([], checkpointer=True), InMemorySaver())
        app.invoke({"value": []}, config("t"))
        assert app.get_state(config("t"), subgraphs=True).tasks[0].state.next == ("ask",)
        gone = weakref.ref(app)
        del app
        assert gone() is None
    finally:
        gc.enable()


def test_a_graph_compiled_with_checkpointer_true_is_no_root_graph() -> None:
    keeps = asking([], checkpointer=True)
    with pytest.raises(RuntimeError, match="checkpointer=True cannot be used for root graphs"):
        keeps.invoke({"value": []}, config("t"))


_PLAIN_THEN_SUBGRAPH = """
import sys
from typing import TypedDict

from statehitl.checkpoint import InMemorySaver
from statehitl.graph import START, StateGraph

class S(TypedDict):
    n: int

LOADED = ("statehitl.graph.subgraph_travel", "statehitl.graph.subgraph_refs")
app = StateGraph(S).add_node("a", lambda s: {"n": s["n"] + 1}).add_edge(START, "a").compile(
    checkpointer=InMemorySaver())
cfg = {"configurable": {"thread_id": "t"}}
app.invoke({"n": 1}, cfg)
print([m in sys.modules for m in LOADED])
app.get_state(cfg, subgraphs=True)
list(app.get_state_history(cfg))
print([m in sys.modules for m in LOADED])
inner = StateGraph(S).add_node("b", lambda s: {"n": 1}).add_edge(START, "b").compile()
outer = StateGraph(S).add_node("inner", inner).add_edge(START, "inner").compile(checkpointer=InMemorySaver())
outer.invoke({"n": 0}, cfg)
outer.get_state({"configurable": {"thread_id": "t", "checkpoint_ns": "inner"}})
print([m in sys.modules for m in LOADED])
"""


def test_a_graph_without_subgraph_configs_never_loads_their_addressing() -> None:
    # the cold-start cost: a plain graph's run loads neither the subgraph-config code nor the code reader
    # (which finds the graphs a node's code invokes, read with a first snapshot); reads load no subgraph-config
    # code until a config names a subgraph
    out = subprocess.run([sys.executable, "-c", _PLAIN_THEN_SUBGRAPH], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:3] == ["[False, False]", "[False, True]", "[True, True]"]
