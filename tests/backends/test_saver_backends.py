"""The saver programs (tests/saver_programs.py) on the S3 and DynamoDB checkpointers, against the local servers,
compared with LangGraph's InMemorySaver running the same programs."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver as LangGraphSaver

from saver_programs import PROGRAMS, names
from statehitl.checkpoint import Checkpointer


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_a_cloud_saver_reads_as_langgraph_s(program: Any, cloud_store_url: str) -> None:
    expected = program(names("langgraph"), LangGraphSaver())
    assert program(names("statehitl"), Checkpointer.from_url(cloud_store_url)) == expected
