"""The JSON schemas a compiled graph publishes for its input and output, as LangGraph derives them: programs run
on LangGraph and on statehitl, compared whole.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Annotated, Any, Optional

import pytest
from test_langgraph_parity import langgraph_names, statehitl_names


@dataclasses.dataclass
class Order:
    item: str
    note: str | None
    discount: Annotated[Optional[float], "percent"]  # noqa: UP045 (the spelling a user may have)
    anything: Any
    quantity: int = 1
    tags: list[str] = dataclasses.field(default_factory=list)
    code: str = dataclasses.field(default=...)  # type: ignore[assignment]


def dataclass_state_schemas(lg: SimpleNamespace) -> list[Any]:
    """A dataclass field without a default is required unless its type is a union with None; ``Any`` is
    required like any other type; a default (also ``...``, a factory's value) is shown."""
    g = lg.StateGraph(Order)
    g.add_node("n", lambda state: {})
    g.add_edge(lg.START, "n")
    app = g.compile(name="orders")
    return [app.get_input_jsonschema(), app.get_output_jsonschema()]


PROGRAMS = [dataclass_state_schemas]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert program(statehitl_names()) == program(langgraph_names())
