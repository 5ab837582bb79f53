"""Node types of the user's own: a ``MultiAgentBase`` subclass with ``invoke_async``, as Strands documents
custom nodes, runs as a Graph node between agents, with hooks, streaming and sessions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ma_helpers import Approval, agent, answer, text_of

from statehitl.agent.agent_result import AgentMetrics, AgentResult  # where Strands imports it from
from statehitl.errors import InvalidUpdateError
from statehitl.multiagent import GraphBuilder, MultiAgentBase, MultiAgentResult, NodeResult, Status
from statehitl.multiagent.base import MultiAgentBase as StrandsPathBase
from statehitl.session import FileSessionManager


class FunctionNode(MultiAgentBase):
    """Strands' documented custom node: a deterministic function as a graph node."""

    def __init__(self, func: Any, name: str | None = None) -> None:
        super().__init__()
        self.func = func
        self.name = name or func.__name__
        self.calls: list[Any] = []

    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> MultiAgentResult:
        self.calls.append(task)
        result = self.func(task if isinstance(task, str) else str(task))
        agent_result = AgentResult(stop_reason="end_turn",
                                   message={"role": "assistant", "content": [{"text": str(result)}]},
                                   metrics=AgentMetrics(), state={})
        return MultiAgentResult(status=Status.COMPLETED, results={self.name: NodeResult(result=agent_result)},
                                accumulated_usage={"inputTokens": 1, "outputTokens": 2, "totalTokens": 3})


def validate(data: str) -> str:
    if "[]" in data:
        raise ValueError("Empty input")
    return "Validated"


def pipeline(validator: MultiAgentBase, *, writer_replies: tuple[str, ...] = ("report written",),
             hooks: list[Any] | None = None, session: Any = None) -> Any:
    builder = GraphBuilder()
    builder.add_node(validator, "validator")
    builder.add_node(agent("writer", *writer_replies), "writer")
    builder.add_edge("validator", "writer")
    if hooks:
        builder.set_hook_providers(hooks)
    if session is not None:
        builder.set_session_manager(session)
    return builder.build()


def test_the_strands_custom_node_runs_between_agents_and_feeds_the_next_one() -> None:
    assert StrandsPathBase is MultiAgentBase  # importable where Strands' example imports it from
    validator = FunctionNode(validate, name="validator")
    graph = pipeline(validator)

    result = graph("quarterly numbers")

    assert result.status == Status.COMPLETED
    assert [n.node_id for n in result.execution_order] == ["validator", "writer"]
    assert validator.calls == [[{"text": "quarterly numbers"}]]  # the task as content blocks, as Strands hands it
    node = result.results["validator"]
    assert node.status == Status.COMPLETED
    assert isinstance(node.result, MultiAgentResult)
    assert node.accumulated_usage["totalTokens"] == 3
    writer = graph.nodes["writer"].executor
    assert writer.messages[0]["content"][-1] == {"text": "  - Agent: Validated"}  # its output reached the writer
    assert text_of(result, "writer") == "report written"


def test_a_custom_node_streams_its_own_events_inside_the_graphs_stream() -> None:
    class Streaming(FunctionNode):
        async def stream_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                               **kwargs: Any) -> Any:
            yield {"data": "checking..."}
            yield {"result": await self.invoke_async(task, invocation_state)}

    graph = pipeline(Streaming(validate, name="validator"))

    async def events() -> list[dict[str, Any]]:
        return [e async for e in graph.stream_async("numbers")]

    seen = asyncio.run(events())
    mine = [e for e in seen if e.get("node_id") == "validator"]
    assert [e["type"] for e in mine] == ["multiagent_node_start", "multiagent_node_stream", "multiagent_node_stop"]
    assert mine[0]["node_type"] == "multiagent"
    assert mine[1]["event"] == {"data": "checking..."}
    assert seen[-1]["result"].status == Status.COMPLETED


def test_a_custom_node_works_on_its_own_too() -> None:
    validator = FunctionNode(validate, name="validator")
    assert str(validator("numbers")) == "validator: Validated"

    async def events() -> list[dict[str, Any]]:
        return [e async for e in validator.stream_async("numbers")]

    [only] = asyncio.run(events())
    assert only["type"] == "multiagent_result"
    assert isinstance(only["result"], MultiAgentResult)


def test_a_custom_node_that_raises_fails_the_call_with_its_exception() -> None:
    graph = pipeline(FunctionNode(lambda data: validate("[]"), name="validator"))
    with pytest.raises(ValueError, match="Empty input"):
        graph("numbers")


def test_a_failed_result_fails_the_node_and_the_call_and_its_successors_do_not_run() -> None:
    class Failing(FunctionNode):
        async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                               **kwargs: Any) -> MultiAgentResult:
            return MultiAgentResult(status=Status.FAILED, failure="the ledger is closed")

    graph = pipeline(Failing(validate, name="validator"))
    result = graph("numbers")

    assert result.status == Status.FAILED
    assert result.failure == "node 'validator' failed: the ledger is closed"
    assert result.results["validator"].status == Status.FAILED
    assert "writer" not in result.results
    assert result.failed_nodes == 1
    assert graph("numbers again").failure == result.failure  # the next task starts afresh, and fails the same


@pytest.mark.parametrize(("returned", "says"), [
    ("just text", r"Bad ended without a MultiAgentResult \(its last result event held 'just text'\)"),
    (MultiAgentResult(status=Status.INTERRUPTED), "Bad returned an INTERRUPTED result"),
    (MultiAgentResult(status=Status.COMPLETED, results={"x": NodeResult(result="text")}),
     "a NodeResult's result must be an AgentResult, a MultiAgentResult or an exception"),
])
def test_what_a_custom_node_cannot_return_is_refused_by_name(returned: Any, says: str) -> None:
    class Bad(MultiAgentBase):
        async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                               **kwargs: Any) -> Any:
            return returned

    graph = pipeline(Bad())
    with pytest.raises(InvalidUpdateError, match=says):
        graph("numbers")


def test_a_subclass_without_invoke_async_cannot_be_made() -> None:
    class Incomplete(MultiAgentBase):
        pass

    with pytest.raises(TypeError, match="invoke_async"):
        Incomplete()  # type: ignore[abstract]


def test_a_new_graph_on_the_session_keeps_a_custom_nodes_result_and_does_not_run_it_again(tmp_path: Path) -> None:
    first = FunctionNode(validate, name="validator")
    graph = pipeline(first, hooks=[Approval("writer")], session=FileSessionManager("s1", storage_dir=str(tmp_path)))
    stopped = graph("numbers")
    assert stopped.status == Status.INTERRUPTED
    assert len(first.calls) == 1

    second = FunctionNode(validate, name="validator")  # a new process builds everything again
    again = pipeline(second, hooks=[Approval("writer")], session=FileSessionManager("s1", storage_dir=str(tmp_path)))
    done = again(answer(stopped))

    assert done.status == Status.COMPLETED
    assert second.calls == []
    stored = done.results["validator"].result  # read back from the thread
    assert isinstance(stored, MultiAgentResult)
    assert str(stored) == "validator: Validated"
    writer = again.nodes["writer"].executor
    assert writer.messages[0]["content"][-1] == {"text": "  - Agent: Validated"}


NEW_PROCESS_APP = textwrap.dedent(
    '''
    import json, sys
    from statehitl import Agent
    from statehitl.agent import AgentMetrics, AgentResult
    from statehitl.hooks import BeforeNodeCallEvent
    from statehitl.models import ScriptedModel
    from statehitl.multiagent import GraphBuilder
    from statehitl.multiagent.base import MultiAgentBase, MultiAgentResult, NodeResult, Status
    from statehitl.session import FileSessionManager

    store, runs, given = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

    class Charge(MultiAgentBase):
        async def invoke_async(self, task, invocation_state=None, **kwargs):
            with open(runs, "a") as log:
                log.write("charged\\n")
            message = {"role": "assistant", "content": [{"text": "charged 10 EUR"}]}
            result = AgentResult("end_turn", message, AgentMetrics(), {})
            return MultiAgentResult(status=Status.COMPLETED, results={"charge": NodeResult(result=result)})

    def ask(event: BeforeNodeCallEvent) -> None:
        if event.node_id == "charge" and event.interrupt("charge-ok", reason={"amount": 10}) != "y":
            event.cancel_node = "not approved"

    builder = GraphBuilder()
    builder.add_node(Agent(name="quote", model=ScriptedModel(["10 EUR"]), callback_handler=None), "quote")
    builder.add_node(Charge(), "charge")
    builder.add_edge("quote", "charge")
    builder.set_session_manager(FileSessionManager("order-1", storage_dir=store))
    graph = builder.build()
    graph.add_hook(ask, BeforeNodeCallEvent)
    result = graph(given)
    print(json.dumps({"status": result.status.value, "ids": [i.id for i in result.interrupts],
                      "results": {k: str(v) for k, v in result.results.items()}}))
    '''
)


def test_a_hook_asks_before_a_custom_node_and_another_process_runs_it_once(tmp_path: Path) -> None:
    app, runs, store = tmp_path / "app.py", tmp_path / "runs.log", tmp_path / "store"
    app.write_text(NEW_PROCESS_APP)

    def call(given: Any) -> dict[str, Any]:
        done = subprocess.run([sys.executable, str(app), str(store), str(runs), json.dumps(given)],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        out: dict[str, Any] = json.loads(done.stdout)
        return out

    first = call("charge the order")
    assert first["status"] == "interrupted"
    assert not runs.exists()
    final = call([{"interruptResponse": {"interruptId": first["ids"][0], "response": "y"}}])

    assert final["status"] == "completed"
    assert final["results"] == {"quote": "10 EUR", "charge": "charge: charged 10 EUR"}
    assert runs.read_text() == "charged\n"
