"""The saver programs (tests/saver_programs.py) run on LangGraph's InMemorySaver and on statehitl's in-memory and
file checkpointers, and compared: what a LangGraph program that reads its checkpointer directly sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver as LangGraphSaver

from saver_programs import PROGRAMS, names
from statehitl.checkpoint import FileCheckpointer
from statehitl.checkpoint.memory import InMemorySaver


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
@pytest.mark.parametrize("store", ["memory", "file"])
def test_a_saver_reads_as_langgraph_s(program: Any, store: str, tmp_path: Path) -> None:
    expected = program(names("langgraph"), LangGraphSaver())
    saver = InMemorySaver() if store == "memory" else FileCheckpointer(tmp_path)
    assert program(names("statehitl"), saver) == expected
