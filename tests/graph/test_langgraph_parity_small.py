"""Small LangGraph behaviours its own tests check, as programs written once against each library's names, run
on LangGraph and on statehitl, and compared (as ``test_langgraph_parity``'s are).

Ids that each library makes its own way (task ids inside ``checkpoint_ns``, message ids) are left out of
what the programs return; everything else a node or a stream reader sees must be equal.
"""

from __future__ import annotations

import asyncio
import operator
import warnings
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from test_langgraph_parity import langgraph_names, plain, statehitl_names


class Log(TypedDict):
    log: Annotated[list, operator.add]


LOCATION = ("langgraph_node", "langgraph_step", "langgraph_triggers", "langgraph_path")


def with_messages(names: SimpleNamespace, module: str) -> SimpleNamespace:
    graph = __import__(f"{module}.graph", fromlist=["MessagesState"])
    return SimpleNamespace(**vars(names), MessagesState=graph.MessagesState)


def located(metadata: dict[str, Any]) -> dict[str, Any]:
    """A metadata dict without the ids each library derives its own way (what follows the node's name in
    ``checkpoint_ns``: a task id)."""
    return {k: v.partition(":")[0] if k.endswith("checkpoint_ns") else v for k, v in metadata.items()}


# -- the programs -----------------------------------------------------------------------------------


def node_config_says_how_the_node_was_reached(lg: SimpleNamespace) -> list[Any]:
    """A node's config metadata names what triggered it: the edge into it (``branch:to:<node>``), every
    waiting edge that leads to it (``join:<a>+<b>:<node>``), or a ``Send`` (with its place among the step's
    sends); its path says which (``__pregel_pull`` or ``__pregel_push``)."""

    def noting(name: str) -> Any:
        def node(state: Log, config: RunnableConfig) -> dict[str, Any]:
            metadata = config["metadata"]
            return {"log": [(name, {key: metadata.get(key) for key in LOCATION})]}
        return node

    g = lg.StateGraph(Log)
    for name in ("a", "b", "c", "joined", "sent", "after"):
        g.add_node(name, noting(name))
    g.add_node("go", lambda s: lg.Command(goto="after"))
    g.add_edge(lg.START, "a")
    g.add_conditional_edges("a", lambda s: ["b", "c"])
    g.add_edge(["b", "c"], "joined")
    g.add_conditional_edges("joined", lambda s: [lg.Send("sent", {"log": []}), lg.Send("sent", {"log": []}), "go"])
    g.add_edge("sent", lg.END)
    g.add_edge("after", lg.END)
    return sorted(g.compile().invoke({"log": []})["log"], key=repr)


def messages_metadata_names_node_triggers_and_path(lg: SimpleNamespace) -> list[Any]:
    """``stream_mode="messages"`` pairs each message a node returned with the node's metadata, LangGraph's
    ``ls_integration`` included; a chat model's own tags (not LangGraph's ``seq:step``) come along."""
    model = GenericFakeChatModel(messages=iter(["from the model"]), tags=["meow"])

    def first(state: Any) -> dict[str, Any]:
        return {"messages": HumanMessage(content="first")}

    def second(state: Any) -> Any:
        return lg.Command(update={"messages": HumanMessage(content="second")})

    def third(state: Any) -> dict[str, Any]:
        return {"messages": model.invoke(state["messages"])}

    g = lg.StateGraph(lg.MessagesState).add_sequence([first, second, third]).add_edge(lg.START, "first")
    return [(message.content, located(metadata))
            for message, metadata in g.compile().stream({"messages": []}, stream_mode="messages")]


def builder_nodes_show_what_runs(lg: SimpleNamespace) -> list[Any]:
    """``builder.nodes[name]`` is the node as added: ``runnable.func`` the function or callable object a sync
    node runs (so a test can count its calls), ``runnable.afunc`` an async one's; a Runnable or a compiled
    graph is its own ``runnable``; ``metadata``, ``retry_policy``, ``defer`` and ``ends`` as given."""

    class State(TypedDict):
        n: int

    class Counted:
        def __init__(self) -> None:
            self.calls = 0

        def __call__(self, state: State) -> dict[str, Any]:
            self.calls += 1
            return {"n": state["n"] + 1}

    async def later(state: State) -> dict[str, Any]:
        return {}

    inner = lg.StateGraph(State)
    inner.add_node("inside", lambda s: {})
    inner.add_edge(lg.START, "inside")
    sub, lam, counted = inner.compile(), RunnableLambda(lambda s: {}), Counted()
    g = lg.StateGraph(State)
    g.add_node("counted", counted, metadata={"team": "a"}, retry_policy=lg.RetryPolicy(max_attempts=2))
    g.add_node("later", later, defer=True, destinations=("counted",))
    g.add_node("sub", sub)
    g.add_node("lam", lam)
    g.add_edge(lg.START, "counted")
    for _ in range(2):
        g.compile().invoke({"n": 0})
    nodes = g.nodes
    spec = nodes["counted"]
    return [sorted(nodes), spec.runnable.func is counted, spec.runnable.func.calls, spec.runnable.name,
            spec.metadata, spec.retry_policy.max_attempts, nodes["later"].runnable.func,
            nodes["later"].runnable.afunc is later, nodes["later"].defer, nodes["later"].ends,
            nodes["sub"].runnable is sub, nodes["lam"].runnable is lam]


def run_log_has_each_nodes_run(lg: SimpleNamespace) -> list[Any]:
    """``astream_log`` yields LangChain's JSON patches: the run's own and one log per node run, with each
    node's final output and the chunks the run streamed (LangChain deprecates it, with a warning)."""

    class State(TypedDict):
        n: int

    g = lg.StateGraph(State)
    g.add_node("a", lambda s: {"n": s["n"] + 1})
    g.add_node("b", lambda s: {"n": s["n"] * 10})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile()

    async def patches() -> list[Any]:
        return [patch async for patch in app.astream_log({"n": 1})]

    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        ops = [op for patch in asyncio.run(patches()) for op in patch.ops]
    return [sorted({op["path"] for op in ops}),
            [(op["path"], op["value"]) for op in ops if op["path"].endswith(("final_output", "streamed_output/-"))],
            sorted({type(w.message).__name__ for w in warned})]


def a_dict_of_runnables_is_one_node(lg: SimpleNamespace) -> list[Any]:
    """A dict of Runnables (or functions) as a node runs each value on the node's input and writes what each
    returns to its key, as LangChain's ``RunnableParallel``; a value that is neither is LangChain's
    ``TypeError`` at ``add_node``."""

    class State(TypedDict):
        total: int
        doubled: int

    g = lg.StateGraph(State)
    g.add_node("both", {"total": RunnableLambda(lambda s: s["total"] + 1), "doubled": lambda s: s["doubled"] * 2})
    g.add_edge(lg.START, "both")
    seen: list[Any] = [g.compile().invoke({"total": 1, "doubled": 5}), type(g.nodes["both"].runnable).__name__]
    try:
        lg.StateGraph(State).add_node("bad", {"total": 5})
    except TypeError as exc:
        seen.append(("TypeError", str(exc)))
    return seen


PROGRAMS = [node_config_says_how_the_node_was_reached, messages_metadata_names_node_triggers_and_path,
            builder_nodes_show_what_runs, run_log_has_each_nodes_run, a_dict_of_runnables_is_one_node]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    ours = program(with_messages(statehitl_names(), "statehitl"))
    theirs = program(with_messages(langgraph_names(), "langgraph"))
    assert plain(ours) == plain(theirs)
