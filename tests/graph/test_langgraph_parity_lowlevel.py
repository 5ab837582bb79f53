"""LangGraph's low-level API (``Pregel``, ``NodeBuilder``, channels): each program imports ``<root>.X`` and runs
once with ``langgraph`` and once with ``statehitl`` as the root; what statehitl's run observes must equal what
LangGraph's does."""

from __future__ import annotations

import asyncio
import importlib
import operator
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any, TypedDict

Load = Callable[[str], ModuleType]


def on_both(program: Callable[[Load], Any]) -> Any:
    """The program's observations on LangGraph, which statehitl's must equal."""
    expected = program(lambda path: importlib.import_module(f"langgraph.{path}"))
    assert program(lambda path: importlib.import_module(f"statehitl.{path}")) == expected
    return expected


def chain_program(load: Load) -> dict[str, Any]:
    """Two nodes in a row, woken by what the one before wrote: the result, both streams, the schemas."""
    pregel, channels = load("pregel"), load("channels")
    one = pregel.NodeBuilder().subscribe_only("input").do(lambda x: x + 1).write_to("output", "between")
    two = pregel.NodeBuilder().subscribe_only("between").do(lambda x: x * 10).write_to("output")
    app = pregel.Pregel(nodes={"one": one, "two": two},
                        channels={name: channels.LastValue(int) for name in ("input", "between", "output")},
                        input_channels="input", output_channels="output", stream_channels=["output", "between"])
    return {"invoke": app.invoke(2), "keys": app.invoke(2, output_keys=["output"]),
            "values": list(app.stream(2)), "updates": list(app.stream(2, stream_mode="updates")),
            "both": list(app.stream(2, stream_mode=["updates", "values"])),
            "astream": asyncio.run(_collected(app.astream(2, stream_mode="updates"))),
            "namespaced": [list(app.stream(2, subgraphs=True)),
                           list(app.stream(2, stream_mode=["updates"], subgraphs=True))],
            "batch": app.batch([1, 2, 3]), "input": app.input_schema.model_json_schema(),
            "output": app.output_schema.model_json_schema()}


def merged(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Update chunks by node: nodes of one step finish in no set order, on either library."""
    return {node: update for chunk in chunks for node, update in chunk.items()}


async def _collected(chunks: Any) -> list[Any]:
    return [chunk async for chunk in chunks]


def test_a_chain_of_nodes_runs_and_streams_as_on_langgraph() -> None:
    seen = on_both(chain_program)
    assert seen["invoke"] == 30
    assert seen["updates"] == [{"one": {"between": 3, "output": 3}}, {"two": {"output": 30}}]


def fan_in_program(load: Load) -> dict[str, Any]:
    """Two nodes publish to a Topic in one step; the node subscribed to it runs once, on both values; a dict
    input and several output channels; the default stream (every channel)."""
    pregel, channels = load("pregel"), load("channels")
    builder = pregel.NodeBuilder
    app = pregel.Pregel(
        nodes={"a": builder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
               "b": builder().subscribe_only("input").do(lambda x: x + 2).write_to("inbox"),
               "sum": builder().subscribe_only("inbox").do(sorted).write_to("output", count=len)},
        channels={"input": channels.LastValue(int), "inbox": channels.Topic(int), "output": channels.LastValue(list),
                  "count": channels.LastValue(int)},
        input_channels=["input"], output_channels=["output", "count"])
    return {"invoke": app.invoke({"input": 1}), "values": list(app.stream({"input": 1})),
            "updates": merged(list(app.stream({"input": 1}, stream_mode="updates")))}


def test_a_topic_collects_a_steps_writes_for_one_reader() -> None:
    assert on_both(fan_in_program)["invoke"] == {"output": [2, 3], "count": 2}


def conflict_program(load: Load) -> str:
    """Two writes to one LastValue in a step are LangGraph's InvalidUpdateError."""
    pregel, channels, errors = load("pregel"), load("channels"), load("errors")
    builder = pregel.NodeBuilder
    app = pregel.Pregel(nodes={"a": builder().subscribe_only("input").write_to("output"),
                               "b": builder().subscribe_only("input").write_to("output")},
                        channels={"input": channels.LastValue(int), "output": channels.LastValue(int)},
                        input_channels="input", output_channels="output")
    try:
        app.invoke(1)
    except errors.InvalidUpdateError as error:
        return type(error).__name__
    return "no error"


def test_two_writes_to_a_last_value_are_refused() -> None:
    assert on_both(conflict_program) == "InvalidUpdateError"


def checkpointed_program(load: Load) -> dict[str, Any]:
    """A running total kept on a thread (BinaryOperatorAggregate), an ephemeral input gone after the step that
    read it, and a fresh thread starting from zero."""
    pregel, channels, memory = load("pregel"), load("channels"), load("checkpoint.memory")
    node = (pregel.NodeBuilder().subscribe_to("input").read_from("total", "note")
            .do(lambda x: x["total"] + x["input"] + len(x.get("note", ""))).write_to("output", "total"))
    app = pregel.Pregel(nodes={"one": node},
                        channels={"input": channels.LastValue(int), "output": channels.LastValue(int),
                                  "note": channels.EphemeralValue(str),
                                  "total": channels.BinaryOperatorAggregate(int, operator.add)},
                        input_channels=["input", "note"], output_channels="output",
                        checkpointer=memory.InMemorySaver())
    first, other = {"configurable": {"thread_id": "1"}}, {"configurable": {"thread_id": "2"}}
    seen = [app.invoke({"input": 2, "note": "ab"}, first), app.invoke({"input": 3}, first),
            app.invoke({"input": 5}, other)]
    state = app.get_state(first)
    return {"results": seen, "values": state.values, "next": state.next}


def test_a_thread_keeps_its_channels_between_runs() -> None:
    seen = on_both(checkpointed_program)
    assert seen["results"] == [4, 7, 5]
    assert "note" not in seen["values"]


def interrupt_program(load: Load) -> dict[str, Any]:
    """``interrupt_after_nodes`` stops the run after a node; ``invoke(None)`` goes on from there."""
    pregel, channels, memory = load("pregel"), load("channels"), load("checkpoint.memory")
    builder = pregel.NodeBuilder
    app = pregel.Pregel(nodes={"one": builder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
                               "two": builder().subscribe_only("inbox").do(lambda x: x + 1).write_to("output")},
                        channels={n: channels.LastValue(int) for n in ("input", "inbox", "output")},
                        input_channels="input", output_channels="output", checkpointer=memory.InMemorySaver(),
                        interrupt_after_nodes=["one"])
    thread = {"configurable": {"thread_id": "1"}}
    stopped = app.invoke(2, thread)
    state = app.get_state(thread)
    return {"stopped": stopped, "inbox": state.values.get("inbox"), "next": state.next,
            "resumed": app.invoke(None, thread)}


def test_a_run_stops_after_a_node_and_goes_on() -> None:
    assert on_both(interrupt_program) == {"stopped": None, "inbox": 3, "next": ("two",), "resumed": 4}


def validation_program(load: Load) -> list[str]:
    """Mistakes in a graph's shape are refused when it is built."""
    pregel, channels = load("pregel"), load("channels")
    builder = pregel.NodeBuilder
    refused = []
    for shape in ({"nodes": {"a": builder().subscribe_only("missing").write_to("out")},
                   "channels": {"out": channels.LastValue(int)}, "input_channels": "out", "output_channels": "out"},
                  {"nodes": {"a": builder().subscribe_only("x").write_to("x")},
                   "channels": {"x": channels.LastValue(int)}, "input_channels": "x", "output_channels": "x",
                   "interrupt_after_nodes": ["b"]}):
        try:
            pregel.Pregel(**shape)
        except ValueError as error:
            refused.append(type(error).__mro__[-3].__name__ if type(error) is not ValueError else "ValueError")
    try:
        pregel.Pregel(nodes={"a": builder().subscribe_only("x")})
    except TypeError:
        refused.append("TypeError")
    return refused


def test_a_wrong_shape_is_refused_when_built() -> None:
    assert len(on_both(validation_program)) == 3


def topic_pause_program(load: Load) -> list[Any]:
    """A Topic written by two nodes (one writing a list), a stop before its reader, going on, and a new input on
    the stopped thread: what each call streams or returns and the thread's values after it."""
    pregel, channels, memory = load("pregel"), load("channels"), load("checkpoint.memory")
    builder = pregel.NodeBuilder
    app = pregel.Pregel(nodes={"a": builder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
                               "b": builder().subscribe_only("input").do(lambda x: [x + 2, x + 3]).write_to("inbox"),
                               "sum": builder().subscribe_only("inbox").do(sorted).write_to("output")},
                        channels={"input": channels.LastValue(int), "inbox": channels.Topic(int),
                                  "output": channels.LastValue(list)},
                        input_channels="input", output_channels="output", checkpointer=memory.InMemorySaver(),
                        interrupt_before_nodes=["sum"])
    thread = {"configurable": {"thread_id": "t"}}
    seen: list[Any] = [merged(list(app.stream(1, thread, stream_mode="updates")))]
    state = app.get_state(thread)
    seen += [state.values, state.next, list(app.stream(None, thread, stream_mode="updates")),
             app.get_state(thread).values, app.invoke(5, thread), app.get_state(thread).values,
             app.invoke(None, thread), app.get_state(thread).values]
    return seen


def test_a_topic_across_a_pause_and_a_new_input() -> None:
    seen = on_both(topic_pause_program)
    assert seen[0] == {"a": {"inbox": 2}, "b": {"inbox": [3, 4]}, "__interrupt__": ()}
    assert seen[5] is None


def nested_program(load: Load) -> list[Any]:
    """A graph run on each item of a list inside another graph's node (``inner.map()``), without a checkpointer,
    with one, and with the inner graph's checkpointing turned off."""
    pregel, channels, memory = load("pregel"), load("channels"), load("checkpoint.memory")
    builder, last = pregel.NodeBuilder, channels.LastValue
    inner = pregel.Pregel(nodes={"one": builder().subscribe_only("input").do(lambda x: x + 1).write_to("output")},
                          channels={"output": last(int), "input": last(int)}, input_channels="input",
                          output_channels="output")
    app = pregel.Pregel(
        nodes={"one": builder().subscribe_only("input").do(lambda x: [y + 10 for y in x]).write_to("inbox"),
               "two": builder().subscribe_only("inbox").do(inner.map()).write_to("outbox"),
               "three": builder().subscribe_only("outbox").do(sum).write_to("output")},
        channels={"inbox": channels.Topic(int), "outbox": last(int), "output": last(int), "input": last(int)},
        input_channels="input", output_channels="output")
    seen = [app.invoke([2, 3]), app.batch([[1], [2, 3]])]
    app.checkpointer = memory.InMemorySaver()
    seen.append(app.invoke([2, 3], {"configurable": {"thread_id": "1"}}))
    inner.checkpointer = False
    seen.append(app.invoke([2, 3], {"configurable": {"thread_id": "1"}}))
    return seen


def test_a_graph_mapped_over_a_list_in_a_node() -> None:
    assert on_both(nested_program) == [27, [12, 27], 27, 27]


def keep_last_three(state: list[Any], writes: list[Any]) -> list[Any]:
    """A batching-invariant reducer, as a DeltaChannel's must be: the last three items written."""
    items = list(state)
    for write in writes:
        items.extend(write if isinstance(write, list) else [write])
    return items[-3:]


def delta_program(load: Load) -> list[Any]:
    """``Annotated[list, DeltaChannel(reducer)]`` in a StateGraph (two writers in a step, a thread's turns, an
    ``Overwrite``), and a DeltaChannel as a Pregel channel."""
    graph, channels, memory, types, pregel = (load("graph"), load("channels"), load("checkpoint.memory"),
                                              load("types"), load("pregel"))
    # the functional form: the annotation names this program's library, which a class body's string annotation
    # (this module's ``from __future__ import annotations``) could not resolve
    state = TypedDict("State", {"items": Annotated[list, channels.DeltaChannel(keep_last_three)]})  # type: ignore[misc]  # noqa: UP013
    def count(values: Any) -> dict[str, Any]:
        return {"items": [len(values["items"])]}

    builder = graph.StateGraph(state)
    builder.add_node("a", count)
    builder.add_node("b", count)
    builder.add_edge(graph.START, "a")
    builder.add_edge(graph.START, "b")
    app = builder.compile(checkpointer=memory.InMemorySaver())
    thread = {"configurable": {"thread_id": "1"}}
    seen = [app.invoke({"items": ["x"]}, thread), app.invoke({"items": ["y", "z"]}, thread),
            app.get_state(thread).values, app.invoke({"items": types.Overwrite(["reset"])}, thread)]
    low = pregel.Pregel(nodes={"n": pregel.NodeBuilder().subscribe_only("input").do(lambda x: [x, x]).write_to("log")},
                        channels={"input": channels.LastValue(int), "log": channels.DeltaChannel(keep_last_three)},
                        input_channels="input", output_channels="log", checkpointer=memory.InMemorySaver())
    seen += [low.invoke(value, thread) for value in (1, 2)]
    return seen


def test_a_delta_channel_folds_writes_with_its_reducer() -> None:
    seen = on_both(delta_program)
    assert seen[-1] == [1, 2, 2]


def approval_program(load: Load) -> list[Any]:
    """``interrupt()`` in a low-level node, streamed with ``astream``, answered with ``Command(resume=)``; the node
    after it is async."""
    pregel, channels, memory, types = load("pregel"), load("channels"), load("checkpoint.memory"), load("types")
    last = channels.LastValue

    def ask(value: str) -> str:
        return f"{value}:{types.interrupt(f'approve {value}?')}"

    async def shout(value: str) -> str:
        await asyncio.sleep(0)
        return value.upper()

    app = pregel.Pregel(nodes={"ask": pregel.NodeBuilder().subscribe_only("input").do(ask).write_to("answer"),
                               "shout": pregel.NodeBuilder().subscribe_only("answer").do(shout).write_to("output")},
                        channels={"input": last(str), "answer": last(str), "output": last(str)},
                        input_channels="input", output_channels="output", checkpointer=memory.InMemorySaver())
    thread = {"configurable": {"thread_id": "1"}}

    async def run() -> list[Any]:
        chunks = [chunk async for chunk in app.astream("go", thread, stream_mode="updates")]
        asked = [[i.value for i in chunk["__interrupt__"]] for chunk in chunks]
        state = await app.aget_state(thread)
        return [asked, state.next, [i.value for i in state.interrupts],
                await app.ainvoke(types.Command(resume="yes"), thread), (await app.aget_state(thread)).values]

    return asyncio.run(run())


def test_a_low_level_node_asks_and_is_answered() -> None:
    assert on_both(approval_program)[3] == "GO:YES"


def retry_program(load: Load) -> list[Any]:
    """A graph-wide retry policy calls a failing node again; an error past it reaches the caller."""
    pregel, channels, types = load("pregel"), load("channels"), load("types")
    calls: list[int] = []

    def flaky(value: int) -> int:
        calls.append(value)
        if len(calls) == 1 or value > 5:
            raise ConnectionError("down")
        return value * 2

    app = pregel.Pregel(nodes={"n": pregel.NodeBuilder().subscribe_only("input").do(flaky).write_to("output")},
                        channels={"input": channels.LastValue(int), "output": channels.LastValue(int)},
                        input_channels="input", output_channels="output",
                        retry_policy=types.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False))
    seen: list[Any] = [app.invoke(2)]
    try:
        app.invoke(9)
    except ConnectionError as error:
        seen.append(str(error))
    return [*seen, calls]


def test_a_retry_policy_covers_every_node() -> None:
    assert on_both(retry_program) == [4, "down", [2, 2, 9, 9]]


def bound_config_program(load: Load) -> list[Any]:
    """``with_config``: a thread bound to a copy of the graph, and a bound recursion limit."""
    pregel, channels, memory, errors = load("pregel"), load("channels"), load("checkpoint.memory"), load("errors")
    builder, last = pregel.NodeBuilder, channels.LastValue
    app = pregel.Pregel(nodes={"one": builder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
                               "two": builder().subscribe_only("inbox").do(lambda x: x + 1).write_to("output")},
                        channels={n: last(int) for n in ("input", "inbox", "output")}, input_channels="input",
                        output_channels="output", checkpointer=memory.InMemorySaver())
    seen: list[Any] = [app.with_config({"configurable": {"thread_id": "t"}}).invoke(1),
                       app.get_state({"configurable": {"thread_id": "t"}}).values]
    try:
        app.with_config(recursion_limit=1).invoke(1, {"configurable": {"thread_id": "u"}})
    except errors.GraphRecursionError as error:
        seen.append(type(error).__name__)
    return seen


def test_a_copy_with_a_bound_config() -> None:
    assert on_both(bound_config_program)[0] == 3


def input_errors_program(load: Load) -> list[Any]:
    """Inputs that write no input channel, and one that is not a dict where a dict is taken."""
    pregel, channels, errors = load("pregel"), load("channels"), load("errors")
    last = channels.LastValue
    app = pregel.Pregel(nodes={"one": pregel.NodeBuilder().subscribe_only("a").write_to("out")},
                        channels={"a": last(int), "b": last(int), "out": last(int)}, input_channels=["a", "b"],
                        output_channels="out")
    seen = []
    for given in ({}, {"c": 1}, {"b": 2}, {"a": 3}, 5):
        try:
            seen.append(app.invoke(given))
        except (TypeError, errors.EmptyInputError) as error:
            seen.append(type(error).__name__)
    return seen


def test_an_input_that_writes_nothing_is_refused() -> None:
    assert on_both(input_errors_program) == ["EmptyInputError", "EmptyInputError", None, 3, "TypeError"]


class Handle:
    """An object no checkpoint could store (a client, a connection): what an UntrackedValue is for."""

    def __repr__(self) -> str:
        return "Handle()"

    def __eq__(self, other: object) -> bool:  # each library's run makes its own
        return isinstance(other, Handle)

    def __hash__(self) -> int:
        return 0


def untracked_program(load: Load) -> list[Any]:
    """An UntrackedValue holds an object for the run (read two steps after it was written), and neither the
    thread's checkpoints nor its history keep it; two writes in a step are refused."""
    pregel, channels, memory, errors = load("pregel"), load("channels"), load("checkpoint.memory"), load("errors")
    builder, last, handle = pregel.NodeBuilder, channels.LastValue, Handle()
    app = pregel.Pregel(
        nodes={"one": builder().subscribe_only("input").do(lambda x: x + 1).write_to("a", client=lambda _: handle),
               "two": builder().subscribe_only("a").do(lambda x: x + 1).write_to("b"),
               "three": builder().subscribe_to("b").read_from("client")
               .do(lambda x: [x["b"], repr(x.get("client"))]).write_to("output")},
        channels={"input": last(int), "a": last(int), "b": last(int), "output": last(list),
                  "client": channels.UntrackedValue(object)},
        input_channels="input", output_channels="output", checkpointer=memory.InMemorySaver())
    thread = {"configurable": {"thread_id": "1"}}
    seen: list[Any] = [app.invoke(1, thread), app.get_state(thread).values,
                       [s.values for s in app.get_state_history(thread)][:3],  # (a run's start: see the docs)
                       list(app.stream(5, {"configurable": {"thread_id": "2"}}, stream_mode="updates"))]
    twice = pregel.Pregel(nodes={"x": builder().subscribe_only("input").write_to("u"),
                                 "y": builder().subscribe_only("input").write_to("u")},
                          channels={"input": last(int), "u": channels.UntrackedValue(int)},
                          input_channels="input", output_channels="u")
    try:
        twice.invoke(1)
    except errors.InvalidUpdateError as error:
        seen.append(type(error).__name__)
    return seen


def test_an_untracked_value_lives_in_the_run_only() -> None:
    seen = on_both(untracked_program)
    assert seen[0] == [3, "Handle()"]
    assert "client" not in seen[1]


def update_program(load: Load) -> list[Any]:
    """``update_state`` without ``as_node`` writes as the node that ran last (through its writers, waking its
    subscribers); a resumed run's result and values stream start from the thread's values; two nodes that ran
    last in one step make it ambiguous."""
    pregel, channels, memory, errors = load("pregel"), load("channels"), load("checkpoint.memory"), load("errors")
    builder, last = pregel.NodeBuilder, channels.LastValue
    app = pregel.Pregel(nodes={"one": builder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
                               "two": builder().subscribe_only("inbox").do(lambda x: x + 1).write_to("output", "again"),
                               "three": builder().subscribe_only("again").write_to("side")},
                        channels={n: last(int) for n in ("input", "inbox", "output", "again", "side")},
                        input_channels="input", output_channels="output", checkpointer=memory.InMemorySaver(),
                        interrupt_after_nodes=["two"])
    thread, other = {"configurable": {"thread_id": "1"}}, {"configurable": {"thread_id": "2"}}
    seen: list[Any] = [app.invoke(1, thread)]
    app.update_state(thread, 10)
    state = app.get_state(thread)
    seen += [state.values, state.next, app.invoke(None, thread), app.invoke(1, other),
             list(app.stream(None, other)), list(app.stream(None, other, stream_mode="updates"))]
    both = pregel.Pregel(nodes={"a": builder().subscribe_only("input").write_to("x"),
                                "b": builder().subscribe_only("input").write_to("y")},
                         channels={n: last(int) for n in ("input", "x", "y")}, input_channels="input",
                         output_channels=["x", "y"], checkpointer=memory.InMemorySaver())
    seen.append(both.invoke(1, thread))
    try:
        both.update_state(thread, 5)
    except errors.InvalidUpdateError as error:
        seen.append(str(error))
    return seen


def test_an_update_without_a_node_is_the_last_writers() -> None:
    seen = on_both(update_program)
    assert seen[1]["output"] == 10
    assert seen[-1] == "Ambiguous update, specify as_node"


def stream_channels_state_program(load: Load) -> list[Any]:
    """With ``stream_channels=``, a thread's snapshots show those channels' values (one channel's value itself
    when it is a name), in ``get_state`` and in history."""
    pregel, channels, memory = load("pregel"), load("channels"), load("checkpoint.memory")
    builder, last = pregel.NodeBuilder, channels.LastValue
    seen: list[Any] = []
    for shown in (["output", "between"], "output"):
        app = pregel.Pregel(
            nodes={"one": builder().subscribe_only("input").do(lambda x: x + 1).write_to("output", "between"),
                   "two": builder().subscribe_only("between").do(lambda x: x + 1).write_to("output")},
            channels={n: last(int) for n in ("input", "between", "output")}, stream_channels=shown,
            input_channels="input", output_channels="output", checkpointer=memory.InMemorySaver())
        thread = {"configurable": {"thread_id": "1"}}
        seen += [app.invoke(2, thread), app.get_state(thread).values,
                 [s.values for s in app.get_state_history(thread)][:2],  # (a run's start: see the docs)
                 list(app.stream(3, thread))]
    return seen


def test_snapshots_show_the_stream_channels() -> None:
    assert on_both(stream_channels_state_program)[1] == {"output": 4, "between": 3}


def _write_entry(load: Load) -> Any:
    """``ChannelWriteEntry``: LangGraph keeps it in a private module, statehitl with ``NodeBuilder``."""
    try:
        return load("pregel._write").ChannelWriteEntry
    except ModuleNotFoundError:
        return load("pregel.node_builder").ChannelWriteEntry


def concept_program(load: Load) -> list[Any]:
    """The shapes LangGraph's Pregel concept page walks through: one node, two in a row, an accumulating Topic,
    a BinaryOperatorAggregate with a reducer of its own, and a node that wakes itself until it writes None."""
    pregel, channels = load("pregel"), load("channels")
    builder, ephemeral, last = pregel.NodeBuilder, channels.EphemeralValue, channels.LastValue
    doubled = builder().subscribe_only("a").do(lambda x: x + x).write_to("b")
    again = builder().subscribe_only("b").do(lambda x: x + x).write_to("c")
    both = builder().subscribe_only("a").do(lambda x: x + x).write_to("b", "c")
    reader = builder().subscribe_to("b").do(lambda x: x["b"] + x["b"]).write_to("c")

    def joined(current: str, update: str) -> str:
        return f"{current} | {update}" if current else update

    looping = builder().subscribe_only("value").do(lambda x: x + x if len(x) < 10 else None) \
        .write_to(_write_entry(load)("value", skip_none=True))
    graphs = [({"one": doubled}, {"a": ephemeral(str), "b": ephemeral(str)}, ["b"]),
              ({"one": doubled, "two": again}, {"a": ephemeral(str), "b": last(str), "c": ephemeral(str)}, ["b", "c"]),
              ({"one": both, "two": reader}, {"a": ephemeral(str), "b": ephemeral(str),
                                              "c": channels.Topic(str, accumulate=True)}, ["c"]),
              ({"one": both, "two": reader}, {"a": ephemeral(str), "b": ephemeral(str),
                                              "c": channels.BinaryOperatorAggregate(str, operator=joined)}, ["c"])]
    seen = [pregel.Pregel(nodes=nodes, channels=chans, input_channels=["a"], output_channels=out).invoke({"a": "foo"})
            for nodes, chans, out in graphs]
    loop = pregel.Pregel(nodes={"n": looping}, channels={"value": ephemeral(str)}, input_channels=["value"],
                         output_channels=["value"])
    return [*seen, loop.invoke({"value": "a"})]


def test_the_concept_pages_shapes() -> None:
    assert on_both(concept_program)[-1] == {"value": "a" * 16}
