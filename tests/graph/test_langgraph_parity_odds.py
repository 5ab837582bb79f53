"""LangGraph behaviours at the edges of the graph API (root-value graphs called from code, validation, values
that are never stored), as programs written once against each library's names, run on LangGraph and on
statehitl, and compared (as ``test_langgraph_parity``'s are)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, NotRequired, TypedDict

import pytest
from test_langgraph_parity import Log, config, langgraph_names, plain, statehitl_names


def with_functional(names: SimpleNamespace, module: str) -> SimpleNamespace:
    func = __import__(f"{module}.func", fromlist=["entrypoint", "task"])
    managed = __import__(f"{module}.managed", fromlist=["RemainingSteps"])
    return SimpleNamespace(**vars(names), entrypoint=func.entrypoint, task=func.task,
                           RemainingSteps=managed.RemainingSteps)


# -- the programs -----------------------------------------------------------------------------------


def root_value_graph_invoked_in_code(lg: SimpleNamespace) -> list[Any]:
    """A graph whose state is one value (``StateGraph(list[str])``), invoked from an entrypoint and from
    another graph's node, takes that value as its input, whatever its type, and returns its own value."""

    def suffix(items: list[str]) -> list[str]:
        return [item + "a" for item in items]

    inner = lg.StateGraph(list[str])
    inner.add_node("suffix", suffix)
    inner.add_edge(lg.START, "suffix")
    add_a = inner.compile()

    @lg.entrypoint(checkpointer=lg.InMemorySaver())
    def workflow(items: list[str]) -> list[str]:
        answer = lg.interrupt("which?")
        return add_a.invoke([item + answer for item in items])

    seen: list[Any] = [list(workflow.stream(["x", "y"], config("1")))]
    seen.append(workflow.invoke(lg.Command(resume="!"), config("1")))

    outer = lg.StateGraph(list[str])
    outer.add_node("calls", lambda items: add_a.invoke([*items, "z"]))
    outer.add_edge(lg.START, "calls")
    seen.append(outer.compile().invoke(["w"]))
    return seen


def builder_lists_managed_keys(lg: SimpleNamespace) -> list[Any]:
    """``StateGraph.managed`` names the keys the run fills in (``RemainingSteps``), required or not."""

    plain_state = TypedDict("plain_state", {"items": list[str], "remaining_steps": lg.RemainingSteps})  # noqa: UP013 (eager: the annotations name lg)
    optional = TypedDict("optional", {"items": list[str], "remaining_steps": NotRequired[lg.RemainingSteps]})  # noqa: UP013
    return [sorted(lg.StateGraph(plain_state).managed), sorted(lg.StateGraph(optional).managed),
            sorted(lg.StateGraph(Log).managed)]


PROGRAMS = [root_value_graph_invoked_in_code, builder_lists_managed_keys]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    ours = program(with_functional(statehitl_names(), "statehitl"))
    theirs = program(with_functional(langgraph_names(), "langgraph"))
    assert plain(ours) == plain(theirs)
