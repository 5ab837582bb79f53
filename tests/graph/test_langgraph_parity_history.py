"""Snapshots, history and task details as LangGraph shows them: programs run on LangGraph and on statehitl.

As in ``test_langgraph_parity``: each program is written once against a namespace of each library's names,
run on the real LangGraph and on statehitl, and what it observes (stream chunks, snapshots' values, history)
must be equal.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from test_langgraph_parity import config, langgraph_names, plain, statehitl_names


def with_channels(lg: SimpleNamespace, *, lib: str) -> SimpleNamespace:
    """The library's names plus its ``UntrackedValue`` and ``EphemeralValue``, from LangGraph's module paths."""
    untracked = __import__(f"{lib}.channels.untracked_value", fromlist=["UntrackedValue"])
    ephemeral = __import__(f"{lib}.channels.ephemeral_value", fromlist=["EphemeralValue"])
    return SimpleNamespace(**vars(lg), UntrackedValue=untracked.UntrackedValue,
                           EphemeralValue=ephemeral.EphemeralValue)


def channel_classes_in_annotations(lg: SimpleNamespace) -> list[Any]:
    """``Annotated[T, UntrackedValue]`` and ``Annotated[T, EphemeralValue]`` (the class) name the channel: the
    untracked value is read by the run's nodes and streamed, never in a snapshot or the history; the ephemeral
    one is gone a step after its write."""

    # functional syntax: a class's annotations are strings here, which could not name this library's channels
    S = TypedDict("S", {"handle": Annotated[str, lg.UntrackedValue],  # noqa: UP013
                        "flash": Annotated[int, lg.EphemeralValue], "out": str}, total=False)
    g = lg.StateGraph(S)
    g.add_node("a", lambda s: {"out": f"saw {s.get('handle')}", "flash": 1})
    g.add_node("b", lambda s: {"out": f"{s['out']} flash={s.get('flash')} handle={s.get('handle')}"})
    g.add_node("c", lambda s: {"out": f"{s['out']} flash={s.get('flash')}"})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    stopping = g.compile(checkpointer=lg.InMemorySaver(), interrupt_after=["b"])
    seen: list[Any] = [list(stopping.stream({"handle": "h"}, config("t"), stream_mode="values")),
                       stopping.get_state(config("t")).values,
                       [(h.metadata["step"], h.values) for h in stopping.get_state_history(config("t"))]]
    for durability in ("exit", "async"):
        stopping.invoke({"handle": "h"}, config(durability), durability=durability)
        seen.append(stopping.get_state(config(durability)).values)
    return seen


def waiting_edge_triggers(lg: SimpleNamespace) -> list[Any]:
    """A node that waiting edges lead to lists every channel it subscribes to as its task's triggers (its own
    ``branch:to:`` and each ``join:``), deferred or not; one plain edges lead to, only its own."""

    class S(TypedDict, total=False):
        docs: Annotated[list, operator.add]
        done: str

    seen: list[Any] = []
    for defer in (False, True):
        for waiting in (False, True):
            g = lg.StateGraph(S)
            g.add_node("a", lambda s: {"docs": ["a"]})
            g.add_node("b", lambda s: {"docs": ["b"]})
            g.add_node("c", lambda s: {"docs": ["c"]})
            g.add_node("qa", lambda s: {"done": ",".join(s["docs"])}, defer=defer)
            g.add_edge(lg.START, "a")
            g.add_edge("a", "b")
            g.add_edge("a", "c")
            if waiting:
                g.add_edge(["b", "c"], "qa")
            else:
                g.add_edge("b", "qa")
                g.add_edge("c", "qa")
            chunks = g.compile().stream({"docs": []}, stream_mode="debug")
            seen.append([(c["step"], c["payload"]["name"], c["payload"]["triggers"])
                         for c in chunks if c["type"] == "task"])
    return seen


class Steps(TypedDict):
    steps: Annotated[list[tuple[Any, str]], operator.add]
    outcome: Any


def lists_read_back_as_written(lg: SimpleNamespace) -> list[Any]:
    """A list written where the annotation says tuple reads back from a checkpoint as the list it was (a TypedDict
    state keeps what was written), after an interrupt and in the history: here a channel that may hold any value
    (``Any`` in its items), which statehitl stores as written (tagged JSON)."""
    g = lg.StateGraph(Steps)
    g.add_node("act", lambda s: {"steps": [["act", str(len(s["steps"]))]], "outcome": {"at": [1, 2]}})
    g.add_node("check", lambda s: {"steps": [["check", "done"]]})
    g.add_edge(lg.START, "act")
    g.add_edge("act", "check")
    app = g.compile(checkpointer=lg.InMemorySaver(), interrupt_before=["check"])
    app.invoke({"steps": []}, config("l"))
    stopped = app.get_state(config("l")).values
    return [stopped, app.invoke(None, config("l")), [h.values for h in app.get_state_history(config("l"))]]


class Trip(TypedDict, total=False):
    log: Annotated[list, operator.add]
    city: str


def _checkpoint(snapshot: Any) -> list[Any]:
    """What a program reads of a snapshot whose ids differ by library: values, next, metadata without the
    parents' ids, whether it has a parent, and those of its subgraph tasks' snapshots."""
    metadata = {k: v for k, v in snapshot.metadata.items() if k != "parents"}
    subgraphs = [_checkpoint(t.state) for t in snapshot.tasks if hasattr(t.state, "values")]
    return [snapshot.values, snapshot.next, metadata, snapshot.parent_config is not None, subgraphs]


def editing_a_subgraph_at_its_breakpoint(lg: SimpleNamespace) -> list[Any]:
    """``update_state`` of a subgraph stopped at its own breakpoint (invoked in a node's code) writes the
    subgraph's ``"update"`` checkpoint, after the one it edited; the parent's checkpoint stays the thread's
    current one (same id, step, history), and ``invoke(None)`` goes on from the edit."""
    inner = lg.StateGraph(Trip)
    inner.add_node("model_node", lambda s: {"city": "SF"})
    inner.add_node("weather_node", lambda s: {"log": [f"sunny in {s['city']}"]})
    inner.add_edge(lg.START, "model_node")
    inner.add_edge("model_node", "weather_node")
    subgraph = inner.compile(interrupt_before=["weather_node"])
    outer = lg.StateGraph(Trip)
    outer.add_node("router", lambda s: {"city": "?"})
    outer.add_node("weather_graph", lambda s: subgraph.invoke(s))
    outer.add_edge(lg.START, "router")
    outer.add_edge("router", "weather_graph")
    app = outer.compile(checkpointer=lg.InMemorySaver())
    c = config("w")
    seen: list[Any] = [len(list(app.stream({"log": ["q"]}, c, stream_mode="updates", subgraphs=True,
                                           durability="exit")))]  # (the subgraph keeps only where it stopped)
    before = app.get_state(c, subgraphs=True)
    app.update_state(before.tasks[0].state.config, {"log": ["rainy"]}, as_node="weather_node")
    after = app.get_state(c, subgraphs=True)
    inner_now = after.tasks[0].state
    seen += [_checkpoint(before), _checkpoint(after), after.config == before.config,
             [(h.metadata["source"], h.metadata["step"]) for h in app.get_state_history(c)],
             app.get_state(inner_now.parent_config).values, app.invoke(None, c)]
    return seen


def subgraph_messages_only_with_subgraphs(lg: SimpleNamespace) -> list[Any]:
    """``stream_mode="messages"``: a chat model called in a subgraph's node (the subgraph invoked in a node's
    code) is streamed under the subgraph's namespace with ``subgraphs=True``, and not at all without it (not as
    the calling node's), also for a call with callbacks of its own."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    inner_model = FakeMessagesListChatModel(responses=[AIMessage(content="inner")] * 8)
    outer_model = FakeMessagesListChatModel(responses=[AIMessage(content="outer")] * 8)
    inner = lg.StateGraph(Trip)
    inner.add_node("model_node", lambda s: inner_model.invoke("q") and {"city": "SF"})
    inner.add_node("weather_node", lambda s: {"city": "x"})
    inner.add_edge(lg.START, "model_node")
    inner.add_edge("model_node", "weather_node")
    seen: list[Any] = []
    for stop in ([], ["weather_node"]):
        subgraph = inner.compile(interrupt_before=stop)
        outer = lg.StateGraph(Trip)
        outer.add_node("router", lambda s: outer_model.invoke("q") and {"city": "?"})
        outer.add_node("weather_graph", lambda s, subgraph=subgraph: subgraph.invoke(s))
        outer.add_edge(lg.START, "router")
        outer.add_edge("router", "weather_graph")
        app = outer.compile(checkpointer=lg.InMemorySaver())
        for n, (subgraphs, callbacks) in enumerate([(False, None), (True, None), (False, [BaseCallbackHandler()])]):
            c = {**config(f"m{len(stop)}{n}"), **({"callbacks": callbacks} if callbacks else {})}
            chunks = app.stream({"log": []}, c, stream_mode="messages", subgraphs=subgraphs)
            pairs = [chunk[1] if subgraphs else chunk for chunk in chunks]
            seen.append([(message.content, metadata["langgraph_node"]) for message, metadata in pairs])
    return seen


PROGRAMS = [channel_classes_in_annotations, waiting_edge_triggers, lists_read_back_as_written,
            editing_a_subgraph_at_its_breakpoint, subgraph_messages_only_with_subgraphs]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    ours = with_channels(statehitl_names(), lib="statehitl")
    theirs = with_channels(langgraph_names(), lib="langgraph")
    assert plain(program(ours)) == plain(program(theirs))
