"""A failed run reads as failed everywhere, with its error; one status vocabulary; schema-1 records read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import stored_records
from statehitl.checkpoint import FileCheckpointer
from statehitl.cli import main
from statehitl.errors import StepLimitError
from statehitl.graph import END, START, StateGraph, Status


class S(BaseModel):
    n: int = 0


FLAKY = {"fail": True}


def flaky(state: S) -> dict[str, Any]:
    if FLAKY["fail"]:
        raise ConnectionError("the payment service is down")
    return {"n": state.n + 1}


def app(store: Path, *, loop: bool = False) -> Any:
    g = StateGraph(S)
    g.add_node("first", lambda s: {"n": s.n + 1})
    g.add_node("pay", flaky)
    g.add_edge(START, "first")
    g.add_edge("first", "pay")
    g.add_conditional_edges("pay", lambda s: "pay" if loop else END, ["pay", END])
    return g.compile(checkpointer=FileCheckpointer(store))


def test_a_node_that_raises_leaves_its_thread_failed_with_the_error_and_invoke_none_retries(tmp_path: Path,
                                                                                         capsys: Any) -> None:
    FLAKY["fail"] = True
    graph = app(tmp_path)
    with pytest.raises(ConnectionError, match="payment service is down"):
        graph.invoke({}, thread_id="t")
    state = graph.get_state("t")
    assert state is not None
    assert (state.status, state.next, state.values.n) == (Status.FAILED, ("pay",), 1)
    assert state.error is not None
    assert str(state.error) == "node 'pay' raised ConnectionError: the payment service is down"
    entry = asyncio.run(graph.checkpointer.thread_info("t"))
    assert entry is not None
    assert (entry.status, entry.error) == ("failed", state.error)
    assert main(["threads", "list", "--store", str(tmp_path), "--status", "failed"]) == 0
    listed = capsys.readouterr().out
    assert "failed" in listed
    assert "node 'pay' raised ConnectionError: the payment service is down" in listed
    assert main(["threads", "show", "t", "--store", str(tmp_path)]) == 0
    assert "retry the step with invoke(None" in capsys.readouterr().out
    FLAKY["fail"] = False
    done = graph.invoke(None, thread_id="t")  # retries the failed step; "first" does not run again
    assert (done.status, done.state.n) == (Status.COMPLETED, 2)


def test_the_cli_takes_the_apis_status_names_only(tmp_path: Path, capsys: Any) -> None:
    assert main(["threads", "list", "--store", str(tmp_path), "--status", "executing"]) == 0
    assert main(["threads", "list", "--store", str(tmp_path), "--status", "running"]) == 2
    assert "invalid choice: 'running'" in capsys.readouterr().err


def test_records_written_with_the_first_schema_read_with_todays_names(tmp_path: Path, capsys: Any) -> None:
    FLAKY["fail"] = False
    graph = app(tmp_path, loop=True)
    with pytest.raises(StepLimitError):
        graph.invoke({}, thread_id="t", step_limit=2)
    head_key = stored_records.keys(tmp_path, "threads/t/")[0]
    record = stored_records.read_json(tmp_path, head_key)
    assert record["status"] == "executing"
    record.update(status="running", schema_version=1)  # what statehitl wrote before the names were unified
    stored_records.rewrite_json(tmp_path, head_key, record)
    index = stored_records.read_json(tmp_path, "index/t/entry")
    index.update(status="running", schema_version=1)
    stored_records.rewrite_json(tmp_path, "index/t/entry", index)
    state = graph.get_state("t")
    assert state is not None
    assert state.status == Status.EXECUTING
    assert main(["threads", "list", "--store", str(tmp_path), "--status", "executing"]) == 0
    assert "executing" in capsys.readouterr().out
    with pytest.raises(StepLimitError):  # still continues from where it stopped
        graph.invoke(None, thread_id="t", step_limit=1)
