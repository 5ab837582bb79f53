"""What a run keeps between steps is typed (``statehitl.progress``): each kind reads the records written
before it existed, writes what older readers read, and refuses what it cannot hold with a clear error.
A failed step's nodes are a list, stored as older readers read them."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

import stored_records
from statehitl import Agent, tool
from statehitl.checkpoint import FileCheckpointer
from statehitl.checkpoint.codec import encode
from statehitl.checkpoint.record_parts import FailureRecord
from statehitl.checkpoint.records import CheckpointRecord
from statehitl.errors import CheckpointCorruptError, InvalidUpdateError
from statehitl.graph import END, START, NodeContext, StateGraph, Status
from statehitl.models import ScriptedModel
from statehitl.multiagent import GraphBuilder
from statehitl.progress import InvokedGraphs, KeptRun, RestartedNode, Schedule, SwarmTurn, ToolBatch, WorkflowTasks
from statehitl.session import FileSessionManager
from statehitl.supersteps import schedule_of, stored_schedule
from statehitl.types import Send
from statehitl.types.tools import ToolContext

KEPT_RUN = {"values": {"n": 1}, "appended": {"log": ["a"]}, "pending": ["b"], "step": 2, "completed": {},
            "responses": {}, "progress": {}}
"""A nested run's progress as statehitl stored it before the models (no ``kind``)."""

LEGACY = {
    KeptRun: KEPT_RUN,
    Schedule: {"sends": {"work:0": {"item": 1}}, "joins": {"a+b>c": ["a"]}},
    InvokedGraphs: {"kind": "invoked graphs", "calls": {"0": KEPT_RUN}},
    ToolBatch: {"results": {"t1": {"toolUseId": "t1", "status": "success", "content": [{"text": "4"}]}}},
    RestartedNode: {"$restarted": KEPT_RUN},
    SwarmTurn: {"node": KEPT_RUN, "turn": {"agents": ["a"], "handoff": None, "context": {}}, "added": {},
                "result": {"status": "interrupted"}},
    WorkflowTasks: {"kind": "tasks", "results": {"lookup:1": {"order": 7}}},
}


@pytest.mark.parametrize("kind", list(LEGACY), ids=lambda k: k.__name__)
def test_each_kind_reads_what_was_stored_before_it_and_writes_what_older_readers_read(kind: Any) -> None:
    legacy = LEGACY[kind]
    kept = kind.load(legacy, "node 'x'")
    stored = kept.stored()
    assert kind.load(stored, "node 'x'") == kept
    # An older reader read these by key: every key it read is there, holding the same value (nested ones
    # are written with their kind too, which it ignores).
    for key, value in legacy.items():
        assert key in stored
        if not isinstance(value, dict) or "values" not in value:
            assert stored[key] == value or key == "calls"
    assert set(stored) - set(legacy) <= {"kind"}
    assert [k for k in stored if k != "kind"] == [k for k in legacy if k != "kind"]  # in the order they were
    assert kind in (RestartedNode, InvokedGraphs, WorkflowTasks) or list(stored)[-1] == "kind"  # the new tag comes last
    assert kind is RestartedNode or stored["kind"] == kind.model_fields["kind"].default


@pytest.mark.parametrize("kind", list(LEGACY), ids=lambda k: k.__name__)
def test_a_kind_refuses_a_newer_version_and_a_malformed_record_saying_where(kind: Any) -> None:
    newer = {**LEGACY[kind], "version": kind.VERSION + 1}
    with pytest.raises(CheckpointCorruptError, match=r"node 'x' is a \w+ record of version 2, newer.*upgrade"):
        kind.load(newer, "node 'x'")
    with pytest.raises(CheckpointCorruptError, match=r"node 'x' is not a \w+ record"):
        kind.load({**LEGACY[kind], "surprise": 1}, "node 'x'")
    with pytest.raises(CheckpointCorruptError, match=r"node 'x' is not a \w+ record"):
        kind.load(["not", "a", "record"], "node 'x'")


def test_an_empty_field_stays_out_of_the_json_and_a_changed_agent_state_stays_even_when_empty() -> None:
    assert ToolBatch(agent_state={}).stored() == {"kind": "tool batch", "agent_state": {}}
    assert ToolBatch(results={"t": {}}).stored() == {"kind": "tool batch", "results": {"t": {}}}
    assert Schedule(deferred=["d"]).stored() == {"kind": "schedule", "deferred": ["d"]}
    assert "schedule" not in KeptRun.load(KEPT_RUN, "x").stored()


def failure_json(record: FailureRecord) -> dict[str, Any]:
    return record.model_dump(mode="json")


def test_a_failure_keeps_its_nodes_as_a_list_stored_as_older_readers_read_it() -> None:
    one = FailureRecord(nodes=["pay"], type="ConnectionError", message="down")
    assert failure_json(one) == {"node": "pay", "type": "ConnectionError", "message": "down"}  # as before
    both = FailureRecord(nodes=["a", "b"], type="InvalidUpdateError", message="two writes")
    assert failure_json(both) == {"node": "a, b", "type": "InvalidUpdateError", "message": "two writes",
                                  "nodes": ["a", "b"]}
    odd = FailureRecord(nodes=["x, y"], type="E", message="m")  # a name that does not split back
    assert failure_json(odd)["nodes"] == ["x, y"]
    for record in (one, both, odd):
        assert FailureRecord.model_validate(failure_json(record)) == record
    # Written before the list: a step's nodes joined, split back as the readers of the time did.
    assert FailureRecord.model_validate({"node": "a, b", "type": "E", "message": "m"}).nodes == ["a", "b"]
    assert str(both) == "node 'a, b' raised InvalidUpdateError: two writes"


def test_a_checkpoint_stores_its_schedule_as_the_schedules_json_and_reads_it_back_through_it() -> None:
    base = {"thread_id": "t", "seq": 1, "created_at": 1.0, "machine": "m", "fingerprint": "f", "status": "executing",
            "step": 1}
    assert schedule_of(CheckpointRecord.model_validate({**base, "schedule": {}}).schedule, "r") is None
    record = CheckpointRecord.model_validate({**base, "schedule": stored_schedule(Schedule(sends={"w:0": 1}))})
    assert schedule_of(record.schedule, "r") == Schedule(sends={"w:0": 1})
    assert b'"schedule":{"sends":{"w:0":1},"kind":"schedule"}' in encode(record, None)
    with pytest.raises(CheckpointCorruptError, match=r"checkpoint 7 is not a Schedule record"):
        schedule_of({"sends": "not a mapping"}, "checkpoint 7")


# -- the same, through runs -------------------------------------------------------------------------------


class Counter(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]


def test_a_step_that_fails_outside_its_nodes_records_each_of_them(tmp_path: Path) -> None:
    g = StateGraph(Counter)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("b", lambda s: {"n": 2})  # two writes to a channel without a reducer in one step
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], END)
    app = g.compile(checkpointer=FileCheckpointer(tmp_path))
    with pytest.raises(InvalidUpdateError):
        app.invoke({"n": 0}, thread_id="t")
    state = app.get_state("t")
    assert state.error is not None
    assert state.error.nodes == ["a", "b"]
    assert state.status == Status.FAILED
    assert [t.name for t in state.tasks if t.error is not None] == ["a", "b"]


def newest(root: Path) -> str:
    """The key of the newest record of the one thread under ``root``."""
    keys = [k for k in stored_records.keys(root, "threads/") if k.rsplit("/", 1)[1].isdigit()]
    return min(keys, key=lambda k: k.rsplit("/", 1)[1])  # slots count down: the newest sorts first


def strip_kinds(value: Any) -> Any:
    """``value`` as statehitl stored it before progress was typed: no ``kind`` on what a run kept."""
    if isinstance(value, dict):
        return {k: strip_kinds(v) for k, v in value.items()
                if not (k == "kind" and v in ("schedule", "nested run", "tool batch", "swarm turn"))}
    if isinstance(value, list):
        return [strip_kinds(v) for v in value]
    return value


def make_legacy(root: Path) -> dict[str, Any]:
    key = newest(root)
    record = stored_records.read_json(root, key)
    legacy = {**record, "progress": strip_kinds(record.get("progress", {}))}
    if "schedule" in record:
        legacy["schedule"] = strip_kinds(record["schedule"])
    assert legacy != record, "the run kept something typed"
    stored_records.rewrite_json(root, key, legacy)
    return legacy


def test_an_agent_goes_on_from_a_tool_batch_kept_before_progress_was_typed(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    def look(path: str) -> str:
        """Look.

        Args:
            path: where
        """
        ran.append(f"look {path}")
        return "seen"

    @tool(context=True)
    def remove(path: str, tool_context: ToolContext) -> str:
        """Remove.

        Args:
            path: what
        """
        if tool_context.interrupt("ok?", reason=path) == "y":
            ran.append(f"remove {path}")
        return "done"

    batch = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "look", "input": {"path": "p"}}},
                                              {"toolUse": {"toolUseId": "t2", "name": "remove",
                                                           "input": {"path": "p"}}}]}

    def make(replies: list[Any]) -> Agent:
        return Agent(model=ScriptedModel(replies), tools=[look, remove], callback_handler=None, agent_id="a",
                     session_manager=FileSessionManager("s", storage_dir=str(tmp_path)))

    result = make([batch, "done"])("go")
    assert ran == ["look p"]
    legacy = make_legacy(tmp_path)
    assert set(legacy["progress"]["tools"]) == {"results"}
    answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in result.interrupts]
    assert make(["done"])(answers).stop_reason == "end_turn"
    assert ran == ["look p", "remove p"]  # the finished call was kept, not run again


def test_a_graph_goes_on_from_sends_kept_before_the_schedule_was_typed(tmp_path: Path) -> None:
    def work(state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        return {"log": [f"{state['item']}:{ctx.interrupt('go?', reason=state['item'])}"]}

    def build() -> Any:
        g = StateGraph(Counter)
        g.add_node("plan", lambda s: {"n": 2})
        g.add_node("work", work)
        g.add_edge(START, "plan")
        g.add_conditional_edges("plan", lambda s: [Send("work", {"item": i}) for i in range(s["n"])], ["work"])
        g.add_edge("work", END)
        return g.compile(checkpointer=FileCheckpointer(tmp_path))

    stopped = build().invoke({"n": 0}, thread_id="t")
    legacy = make_legacy(tmp_path)
    assert "kind" not in legacy["schedule"]
    assert legacy["schedule"]["sends"]
    answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in stopped.interrupts]
    assert sorted(build().invoke(answers, thread_id="t")["log"]) == ["0:y", "1:y"]


class Subtask(BaseModel):
    items: list[str] = []


def test_a_multiagent_graph_goes_on_from_a_nested_run_kept_before_it_was_typed(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool(context=True)
    def ship(what: str, tool_context: ToolContext) -> str:
        """Ship.

        Args:
            what: the parcel
        """
        if tool_context.interrupt("ship?", reason=what) == "y":
            ran.append(what)
        return "shipped"

    def build(replies: list[Any]) -> Any:
        worker = Agent(model=ScriptedModel(replies), tools=[ship], name="worker", callback_handler=None)
        builder = GraphBuilder()
        builder.add_node(worker, "worker")
        builder.set_session_manager(FileSessionManager("g", storage_dir=str(tmp_path)))
        return builder.build()

    use = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "s1", "name": "ship", "input": {"what": "box"}}}]}
    stopped = build([use, "sent"])("send the box")
    legacy = make_legacy(tmp_path)
    assert "kind" not in legacy["progress"]["worker"]
    answers = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in stopped.interrupts]
    assert build(["sent"])(answers).status.value == "completed"
    assert ran == ["box"]
