"""Module paths LangGraph's documentation imports from, as programs written once against a root package
(``langgraph`` or ``statehitl``), run on each, and compared: ``START``/``END`` from ``graph.state``,
``RemainingSteps`` from ``managed.is_last_step``, the Agent Inbox request and answer shapes of
``prebuilt.interrupt``, and a compiled graph given to ``add_node`` alone, used as the documentation uses them."""

from __future__ import annotations

import importlib
import operator
from types import ModuleType
from typing import Annotated, Any

import pytest
from test_langgraph_parity import plain
from typing_extensions import TypedDict

pytest.importorskip("langgraph")


def load(root: str) -> Any:
    return lambda path: importlib.import_module(f"{root}.{path}")


def state_module_program(module: Any) -> list[Any]:
    """A loop that stops when few steps remain, built with ``START``/``END`` from ``graph.state`` and
    ``RemainingSteps`` from ``managed.is_last_step``."""
    state: ModuleType = module("graph.state")
    remaining_steps = module("managed.is_last_step").RemainingSteps

    # the functional form: a class body's annotations would name a local that get_type_hints cannot see
    loop = TypedDict("loop", {"seen": Annotated[list[int], operator.add],  # noqa: UP013
                              "remaining_steps": remaining_steps})

    def step(current: Any) -> dict[str, Any]:
        return {"seen": [current["remaining_steps"]]}

    def route(current: Any) -> str:
        return state.END if current["remaining_steps"] <= 2 else "step"

    graph = state.StateGraph(loop)
    graph.add_node("step", step).add_edge(state.START, "step").add_conditional_edges("step", route)
    return [graph.compile().invoke({"seen": []}, {"recursion_limit": 6}), state.START, state.END]


def inbox_program(module: Any) -> list[Any]:
    """A tool call put to a person as a ``HumanInterrupt`` and answered with a ``HumanResponse``."""
    shapes, types = module("prebuilt.interrupt"), module("types")
    state = module("graph.state")

    class Call(TypedDict):
        command: str
        outcome: str

    def review(current: Call) -> dict[str, str]:
        request = shapes.HumanInterrupt(
            action_request=shapes.ActionRequest(action="run", args={"command": current["command"]}),
            config=shapes.HumanInterruptConfig(allow_ignore=True, allow_respond=True, allow_edit=True,
                                               allow_accept=False),
            description="run this?")
        response: Any = types.interrupt([request])[0]
        if response["type"] == "edit":
            return {"outcome": f"ran {response['args']['args']['command']}"}
        return {"outcome": response["type"]}

    graph = state.StateGraph(Call)
    graph.add_node("review", review).add_edge(state.START, "review")
    app = graph.compile(checkpointer=module("checkpoint.memory").InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    asked = app.invoke({"command": "ls", "outcome": ""}, config)
    answer = shapes.HumanResponse(type="edit", args=shapes.ActionRequest(action="run", args={"command": "ls -l"}))
    return [asked, app.invoke(types.Command(resume=[answer]), config),
            sorted(shapes.HumanInterrupt.__annotations__), sorted(shapes.HumanResponse.__annotations__)]


def graph_as_its_own_node_program(module: Any) -> list[Any]:
    """``add_node(compiled_graph)`` (LangGraph's multi-agent guide adds agents so): the node is named after the
    graph's ``compile(name=)``, ``LangGraph`` when it has none, and runs it as a subgraph."""
    state = module("graph.state")

    class Count(TypedDict):
        n: Annotated[int, operator.add]

    inner = state.StateGraph(Count)
    inner.add_node("inc", lambda current: {"n": 1}).add_edge(state.START, "inc")
    seen = []
    for options in ({"name": "helper"}, {}):
        sub = inner.compile(**options)
        outer = state.StateGraph(Count)
        outer.add_node(sub).add_edge(state.START, sub.get_name())
        app = outer.compile()
        seen.append([list(app.get_graph().nodes), app.invoke({"n": 1})])
    return seen


@pytest.mark.parametrize("program", [state_module_program, inbox_program, graph_as_its_own_node_program])
def test_a_documented_module_path_ports_by_renaming(program: Any) -> None:
    assert plain(program(load("statehitl"))) == plain(program(load("langgraph")))
