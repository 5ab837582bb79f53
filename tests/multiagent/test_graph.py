"""Graph: building, running, the seed's interrupt rules, results, conditions, limits and bad input."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, answer, delete, note, text_of, uses
from pydantic import BaseModel

from statehitl import ToolContext, tool
from statehitl.errors import (
    GraphValidationError,
    InterruptResponseError,
    InvalidThreadIdError,
    NodeCancelledError,
    ResumeInputError,
    UnknownInterruptError,
)
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.hooks import BeforeNodeCallEvent, BeforeToolCallEvent, HookRegistry
from statehitl.multiagent import GraphBuilder, GraphNode, GraphResult, GraphState, NodeResult, Status
from statehitl.session import FileSessionManager


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


def seed_graph(**agents: Any) -> Any:
    builder = GraphBuilder()
    builder.add_node(agents.get("inspector") or agent("inspector", "found 3 old resources"), "inspector")
    builder.add_node(agents.get("cleanup") or agent("cleanup", "cleaned up"), "cleanup")
    builder.add_edge("inspector", "cleanup")
    builder.set_entry_point("inspector")
    builder.set_hook_providers([Approval()])
    return builder.build()


def test_the_seed_graph_asks_before_cleanup_and_finishes_on_yes() -> None:
    graph = seed_graph()
    result = graph("Inspect and clean up my resources")
    assert result.status == Status.INTERRUPTED
    [interrupt] = result.interrupts
    assert (interrupt.name, interrupt.reason, interrupt.source) == ("myapp-approval", {"resources": "example"},
                                                                    "multiagent-hook")
    assert list(result.results) == ["inspector"]  # the completed node's result is there already
    assert isinstance(result, GraphResult)
    result = graph(answer(result))
    assert result.status == Status.COMPLETED
    assert result.results["cleanup"].result.message == {"role": "assistant", "content": [{"text": "cleaned up"}]}
    assert [n.node_id for n in result.execution_order] == ["inspector", "cleanup"]
    assert (result.total_nodes, result.completed_nodes, result.failed_nodes) == (2, 2, 0)
    assert isinstance(result.execution_order[0], GraphNode)
    node = result.results["inspector"]
    assert isinstance(node, NodeResult)
    assert node.status == Status.COMPLETED
    assert node.execution_count == 1
    assert node.accumulated_usage["totalTokens"] > 0
    assert result.accumulated_usage["totalTokens"] == sum(r.accumulated_usage["totalTokens"]
                                                          for r in result.results.values())


def test_a_denied_node_raises_after_the_thread_is_saved_failed_and_the_graph_takes_a_new_task() -> None:
    inspector = agent("inspector", "first look", "second look")
    graph = seed_graph(inspector=inspector, cleanup=agent("cleanup", "cleaned"))
    result = graph("clean up")
    with pytest.raises(NodeCancelledError, match="User denied permission") as err:
        graph(answer(result, "n"))
    assert isinstance(err.value, RuntimeError)
    assert err.value.node_id == "cleanup"
    saved = asyncio.run(graph.checkpointer.latest(graph.thread_id))  # the thread says how it ended
    assert saved is not None
    assert (saved.status, saved.cancelled) == ("failed", {"cleanup": "User denied permission to cleanup resources"})
    again = graph("look again")  # not stuck in an interrupt state, unlike Strands
    assert again.status == Status.INTERRUPTED
    assert text_of(again, "inspector") == "second look"


def test_every_hook_runs_and_each_may_interrupt_and_ask_again_after_its_answer() -> None:
    asked: list[str] = []

    def twice(event: BeforeNodeCallEvent) -> None:
        if event.node_id == "only":
            asked.append(event.interrupt("first"))
            asked.append(event.interrupt("second"))

    def another(event: BeforeNodeCallEvent) -> None:
        if event.node_id == "only":
            asked.append(event.interrupt("other"))

    hooks = HookRegistry()
    hooks.add_callback(BeforeNodeCallEvent, twice)
    hooks.add_callback(BeforeNodeCallEvent, another)
    builder = GraphBuilder()
    builder.add_node(agent("only", "ran"), "only")
    graph = builder.set_hook_providers([hooks]).build()
    result = graph("go")
    assert sorted(i.name for i in result.interrupts) == ["first", "other"]  # both hooks ran and interrupted
    result = graph(answer(result, "a"))
    assert [i.name for i in result.interrupts] == ["second"]  # one hook, again, after its first answer
    result = graph(answer(result, "b"))
    assert result.status == Status.COMPLETED
    assert text_of(result, "only") == "ran"
    assert asked[-3:] == ["a", "b", "a"]


def test_concurrent_nodes_all_run_and_all_may_interrupt_and_finished_work_is_not_redone() -> None:
    left = agent("left", uses(("t1", "delete", {"path": "l"})), "left done", tools=[delete])
    right = agent("right", uses(("t2", "delete", {"path": "r"})), "right done", tools=[delete])
    steady = agent("steady", uses(("t3", "note", {"text": "s"})), "steady done", tools=[note])
    builder = GraphBuilder()
    for a in (left, right, steady):
        builder.add_node(a)
    builder.add_node(agent("join", "joined"), "join")
    for name in ("left", "right", "steady"):
        builder.add_edge(name, "join")
    graph = builder.build()
    result = graph("go")
    assert result.status == Status.INTERRUPTED
    assert sorted((i.name, i.node) for i in result.interrupts) == [("delete-ok", "left/delete"),
                                                                   ("delete-ok", "right/delete")]
    assert result.interrupted_nodes == 2
    assert RUNS == ["note s"]
    result = graph(answer(result))
    assert result.status == Status.COMPLETED
    assert sorted(RUNS) == ["delete l", "delete r", "note s"]  # steady's work was kept, not redone
    assert [n.node_id for n in result.execution_order][-1] == "join"
    assert len(steady.model.requests) == 2


def test_a_join_runs_once_after_branches_of_different_lengths() -> None:
    builder = GraphBuilder()
    for name in ("a", "b1", "b2", "join"):
        builder.add_node(agent(name, f"{name} out"), name)
    builder.add_edge("a", "join")
    builder.add_edge("b1", "b2")
    builder.add_edge("b2", "join")
    result = builder.build()("go")
    order = [n.node_id for n in result.execution_order]
    assert order.count("join") == 1
    assert order[-1] == "join"
    prompt = result.results["join"].result  # the join saw both predecessors' outputs
    assert prompt is not None


def test_a_node_input_carries_the_task_and_its_predecessors_outputs() -> None:
    second = agent("second", "ok")
    builder = GraphBuilder()
    builder.add_node(agent("first", "first output"), "first")
    builder.add_node(second, "second")
    builder.add_edge("first", "second")
    builder.build()("the task")
    [request] = second.model.requests
    text = "".join(b.get("text", "") for b in request["messages"][-1]["content"])
    assert text == "Original Task: the task\nInputs from previous nodes:\nFrom first:  - Agent: first output"


def test_conditions_see_the_graph_state() -> None:
    def approved(state: Any) -> bool:
        return "approve" in str(state.results["review"].result)

    def rejected(state: Any) -> bool:
        return not approved(state)

    def run(verdict: str) -> list[str]:
        builder = GraphBuilder()
        builder.add_node(agent("review", verdict), "review")
        builder.add_node(agent("ship", "shipped"), "ship")
        builder.add_node(agent("fix", "fixed"), "fix")
        builder.add_edge("review", "ship", condition=approved)
        builder.add_edge("review", "fix", condition=rejected)
        return [n.node_id for n in builder.build()("go").execution_order]

    assert run("I approve") == ["review", "ship"]
    assert run("no") == ["review", "fix"]


def test_a_condition_reads_the_counts_and_shape_strands_gives_it() -> None:
    seen: list[dict[str, Any]] = []

    def look(state: Any) -> bool:
        seen.append({"count": state.execution_count, "total": state.total_nodes,
                     "tokens": state.accumulated_usage["totalTokens"], "latency": state.accumulated_metrics,
                     "edges": [(a.node_id, b.node_id) for a, b in state.edges],
                     "entry": [n.node_id for n in state.entry_points], "status": state.status,
                     "done": {n.node_id for n in state.completed_nodes}, "interrupted": state.interrupted_nodes})
        return True

    builder = GraphBuilder()
    builder.add_node(agent("first", "one"), "first")
    builder.add_node(agent("second", "two"), "second")
    builder.add_edge("first", "second", condition=look)
    result = builder.build()("go")

    state = seen[0]  # asked when routing and again for the input of "second", as Strands asks it
    assert all(s == state for s in seen)
    assert state == {"count": 1, "total": 2, "tokens": result.results["first"].accumulated_usage["totalTokens"],
                     "latency": {"latencyMs": result.results["first"].accumulated_metrics["latencyMs"]},
                     "edges": [("first", "second")], "entry": ["first"], "status": Status.EXECUTING,
                     "done": {"first"}, "interrupted": set()}
    assert state["tokens"] > 0


IMAGE = b"\x89PNG\r\n\x1a\n-not-really"


def image_bytes_given(model: Any) -> list[Any]:
    """The bytes of every image block the model was sent, call by call."""
    return [b["image"]["source"]["bytes"] for r in model.requests for m in r["messages"] for b in m["content"]
            if "image" in b]


def test_an_image_in_the_task_reaches_every_node_as_bytes_after_a_resume_in_a_new_graph(tmp_path: Path) -> None:
    task = [{"text": "describe this"}, {"image": {"format": "png", "source": {"bytes": IMAGE}}}]

    def build() -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("looker", "a cat"), "looker")
        builder.add_node(agent("cleanup", "summary"), "cleanup")
        builder.add_edge("looker", "cleanup", condition=lambda s: s.task[1]["image"]["source"]["bytes"] == IMAGE)
        builder.set_hook_providers([Approval("cleanup")])
        return builder.set_session_manager(FileSessionManager("img", storage_dir=str(tmp_path))).build()

    first = build()
    stopped = first(task)
    assert image_bytes_given(first.nodes["looker"].executor.model) == [IMAGE]
    again = build()  # a new process would build everything again; the condition sees the image too
    done = again(answer(stopped))

    assert done.status == Status.COMPLETED
    assert image_bytes_given(again.nodes["cleanup"].executor.model) == [IMAGE]
    assert again.nodes["looker"].executor.messages[0]["content"][1]["image"]["source"]["bytes"] == IMAGE


def test_a_loop_ends_failed_at_its_limit_and_resets_nodes_on_revisit() -> None:
    looper = agent("looper", *[f"pass {i}" for i in range(10)])
    builder = GraphBuilder()
    builder.add_node(looper, "looper")
    builder.add_node(agent("check", *["again"] * 10), "check")
    builder.add_edge("looper", "check")
    builder.add_edge("check", "looper", condition=lambda state: True)
    builder.set_entry_point("looper")
    builder.set_max_node_executions(5).reset_on_revisit()
    result = builder.build()("go")
    assert result.status == Status.FAILED
    assert result.failure == "Max node executions reached: 5"
    assert len(result.execution_order) == 5
    assert len(looper.model.requests[-1]["messages"]) == 1  # started afresh on its revisit


def test_a_compiled_state_graph_and_an_agent_hook_interrupt_as_nodes() -> None:
    class Form(BaseModel):
        task: str = ""
        value: str = ""

    def fill(state: Form, ctx: NodeContext) -> dict[str, Any]:
        return {"value": ctx.interrupt("fill", reason=f"a value for: {state.task}")}

    sg = StateGraph(Form)
    sg.add_node("fill", fill)
    sg.add_edge(START, "fill")
    sg.add_edge("fill", END)
    clerk = agent("clerk", uses(("t1", "note", {"text": "x"})), "noted it", tools=[note])
    clerk.add_hook(BeforeToolCallEvent, lambda event: event.interrupt("allow", reason=event.tool_use["name"]))
    builder = GraphBuilder()
    builder.add_node(sg.compile(), "form")
    builder.add_node(clerk, "clerk")
    builder.add_edge("form", "clerk")
    graph = builder.build()
    result = graph("the task")
    [interrupt] = result.interrupts
    assert (interrupt.name, interrupt.node, interrupt.source, interrupt.reason) == (
        "fill", "form/fill", "node", "a value for: the task")
    result = graph(answer(result, "42"))
    [interrupt] = result.interrupts
    assert (interrupt.name, interrupt.node, interrupt.source) == ("allow", "clerk/note", "hook")
    assert result.results["form"].result.state.value == "42"  # a StateGraph node's result is its run's
    assert RUNS == []
    result = graph(answer(result))
    assert result.status == Status.COMPLETED
    assert RUNS == ["note x"]
    assert text_of(result, "clerk") == "noted it"


def test_build_errors_name_what_is_wrong() -> None:
    builder = GraphBuilder()
    builder.add_node(agent("a", "x"), "a")
    with pytest.raises(GraphValidationError, match="node 'a' already exists"):
        builder.add_node(agent("a2", "x"), "a")
    with pytest.raises(GraphValidationError, match="target node 'zz' not found"):
        builder.add_edge("a", "zz")
    with pytest.raises(GraphValidationError, match="entry node 'zz' not found"):
        builder.set_entry_point("zz")
    builder.add_node(agent("b", "x"), "b")
    builder.add_edge("a", "b")
    builder.add_edge("b", "a")
    with pytest.raises(GraphValidationError, match="no entry points"):
        builder.build()
    with pytest.raises(GraphValidationError, match="a graph needs at least one node"):
        GraphBuilder().build()


@pytest.mark.parametrize(("bad", "error", "says"), [
    ("a plain prompt", ResumeInputError, "waiting on interrupts"),
    ([{"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}], UnknownInterruptError, "not pending"),
    (None, ResumeInputError, "resume it with a list"),
])
def test_bad_input_while_interrupted_changes_nothing(bad: Any, error: type[Exception], says: str) -> None:
    graph = seed_graph()
    result = graph("go")
    before = graph.interrupts
    with pytest.raises(error, match=says):
        graph(bad)
    assert graph.interrupts == before
    assert graph(answer(result)).status == Status.COMPLETED


def test_a_non_json_response_is_refused() -> None:
    graph = seed_graph()
    result = graph("go")
    with pytest.raises(InterruptResponseError, match="must be JSON-serializable"):
        graph([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": {1, 2}}}])
    assert graph.interrupts == result.interrupts


def test_a_task_must_be_text_or_content_blocks() -> None:
    with pytest.raises(ResumeInputError, match="a task must be a str or a list of content blocks"):
        seed_graph()(42)


def test_a_nested_graphs_conditions_see_the_outer_calls_invocation_state() -> None:
    seen: list[dict[str, Any]] = []

    def go_on(state: Any, invocation_state: dict[str, Any]) -> bool:
        seen.append(dict(invocation_state))
        return True

    inner = GraphBuilder()
    inner.add_node(agent("a", "x"), "a")
    inner.add_node(agent("b", "y"), "b")
    inner.add_edge("a", "b", condition=go_on)
    outer = GraphBuilder()
    outer.add_node(inner.build(), "inner")
    assert outer.build()("task", invocation_state={"user": "alice"}).status == Status.COMPLETED
    assert seen
    assert all(s.get("user") == "alice" for s in seen)


def test_the_callers_invocation_state_is_the_one_hooks_nodes_and_tools_share() -> None:
    @tool(context=True)
    def remember(tool_context: ToolContext) -> str:
        """Write into the shared state."""
        tool_context.invocation_state["seen_by"] = [*tool_context.invocation_state.get("seen_by", []), "tool"]
        return "ok"

    hooked: list[bool] = []
    builder = GraphBuilder()
    builder.add_node(agent("worker", uses(("t1", "remember", {})), "done", tools=[remember]), "worker")
    graph = builder.build()
    shared: dict[str, Any] = {"user": "alice"}
    graph.add_hook(lambda event: hooked.append(event.invocation_state is shared), BeforeNodeCallEvent)

    assert graph("go", invocation_state=shared, region="eu").status == Status.COMPLETED

    assert hooked == [True]
    assert shared == {"user": "alice", "region": "eu", "seen_by": ["tool"]}  # keyword arguments join it, as in Strands


def test_any_graph_id_will_do_without_a_session_and_a_session_refuses_one_it_cannot_store(tmp_path: Path) -> None:
    def build(graph_id: str, session: Any = None) -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("only", "done"), "only")
        builder.set_graph_id(graph_id)
        if session is not None:
            builder.set_session_manager(session)
        return builder.build()

    assert build("Research Graph #1")("go").status == Status.COMPLETED
    with pytest.raises(InvalidThreadIdError, match="agent id 'team/a' cannot be stored in session 's'"):
        build("team/a", FileSessionManager("s", storage_dir=str(tmp_path)))


def test_graph_nodes_and_graph_state_show_each_call_as_strands_does(tmp_path: Path) -> None:
    looked: list[Any] = []

    def look(event: BeforeNodeCallEvent) -> None:  # hooks read the orchestrator, as in Strands
        graph = event.source
        looked.append((event.node_id, graph.state.status, sorted(graph.state.results),
                       graph.nodes[event.node_id].execution_status))

    def build() -> Any:
        builder = GraphBuilder()
        builder.add_node(agent("first", "one"), "first")
        builder.add_node(agent("cleanup", "two"), "cleanup")
        builder.add_edge("first", "cleanup", condition=lambda state: builder.nodes["first"] in state.completed_nodes)
        builder.set_hook_providers([Approval("cleanup")])
        graph = builder.set_session_manager(FileSessionManager("shown", storage_dir=str(tmp_path))).build()
        graph.add_hook(look, BeforeNodeCallEvent)
        return graph

    graph = build()
    assert graph.state.status == Status.PENDING
    stopped = graph("go")
    first, cleanup = graph.nodes["first"], graph.nodes["cleanup"]
    assert isinstance(first, GraphNode)
    assert (first.execution_status, str(first.result), cleanup.execution_status) == (
        Status.COMPLETED, "one", Status.INTERRUPTED)
    assert graph.state.status == Status.INTERRUPTED

    again = build()  # another process: the nodes the first one ran show as it left them, once it is built
    assert again.state.status == Status.INTERRUPTED
    assert [(n.node_id, n.execution_status) for n in again.nodes.values()] == [
        ("first", Status.COMPLETED), ("cleanup", Status.INTERRUPTED)]
    done = again(answer(stopped))
    assert done.status == Status.COMPLETED
    assert [(n.node_id, n.execution_status, str(n.result)) for n in again.nodes.values()] == [
        ("first", Status.COMPLETED, "one"), ("cleanup", Status.COMPLETED, "two")]
    assert again.state.status == Status.COMPLETED
    assert again.state.execution_count == 2
    assert looked[0] == ("first", Status.EXECUTING, [], Status.PENDING)
    assert looked[-1] == ("cleanup", Status.EXECUTING, ["first"], Status.INTERRUPTED)  # asked again, on resume

    again("a new task")  # starts every node afresh
    assert again.nodes["cleanup"].execution_status == Status.INTERRUPTED
    assert again.nodes["first"].execution_status == Status.COMPLETED


def test_a_condition_can_be_tested_with_a_graph_state_built_by_hand() -> None:
    def approved(state: GraphState) -> bool:
        review = state.results.get("review")
        return review is not None and "approve" in str(review.result)

    assert not approved(GraphState())
    assert approved(GraphState(task="t", results={"review": NodeResult("I approve", status=Status.COMPLETED)}))
