"""What both sides of bench_multiagent.py run: the Graph chain, the Swarm chain and the seed's Graph round trip.

Each side runs in a worker process of its own (`worker_main`) and is driven through one interface
(`multiagent_kit(side)`: agent_workload's kit, which has the Agent, the session manager and the replay
model Strands lacks, plus the framework's GraphBuilder, Swarm, Status and BeforeNodeCallEvent), so
every workload is written once and runs on either side. Every trial checks what it ran (statuses,
execution order, each node's answer, each model's calls, what the next node was given) before it
returns a time, so a broken run cannot produce a number.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agent_workload import ApprovalHook, kit, result_text, tool_use_message
from harness.timing import Trial
from harness.workers import serve

NODES = 10
"""Agents in the Graph chain and in the Swarm chain."""

TASK = "Summarise the quarterly report."
RT_TASK = "Inspect and clean up my resources"
APP_NAME = "myapp"
INSPECTED = "Found 3 resources older than 5 days."
CLEANED = "Cleaned up 3 resources."


def ignore_unbounded_graph_warning() -> None:
    """Strands warns at every build of a graph without limits; the chains are acyclic, so it says nothing here."""
    warnings.filterwarnings("ignore", message="graph has no max_node_executions", category=UserWarning)


@functools.cache
def multiagent_kit(side: str) -> SimpleNamespace:
    """agent_workload's kit for `side` plus its multi-agent classes; both import lists are the seed's."""
    if side == "statehitl":
        from statehitl.hooks import BeforeNodeCallEvent
        from statehitl.multiagent import GraphBuilder, Status, Swarm
    else:
        from strands.hooks import BeforeNodeCallEvent
        from strands.multiagent import GraphBuilder, Status, Swarm
    return SimpleNamespace(**vars(kit(side)), GraphBuilder=GraphBuilder, Swarm=Swarm, Status=Status,
                           BeforeNodeCallEvent=BeforeNodeCallEvent)


def new_agent(side: str, name: str, script: list[Any], system_prompt: str | None = None) -> tuple[Any, Any]:
    """`Agent(name=..., model=..., callback_handler=None)` on a replay model of `script`; the agent and its model.

    Each side keeps its default agent setup (conversation manager included): a node's conversation here
    is at most four messages, far below Strands' sliding window.
    """
    k = multiagent_kit(side)
    model = k.Model(script)
    kwargs: dict[str, Any] = {"name": name, "model": model, "callback_handler": None}
    if system_prompt is not None:
        kwargs["system_prompt"] = system_prompt
    return k.Agent(**kwargs), model


def user_text(request: dict[str, Any]) -> str:
    """All the text of a model request's first message (a node's input), joined, without trailing whitespace
    (Strands ends an agent result's text with a newline, and its Graph passes it on: see normalized_requests)."""
    return "".join(block.get("text", "") for block in request["messages"][0]["content"]).rstrip()


def graph_input(task: str, before: str, answer: str) -> str:
    """What a Graph node after `before` is given: the task, then `before`'s answer (Strands' words)."""
    return f"Original Task: {task}\nInputs from previous nodes:\nFrom {before}:  - Agent: {answer}"


# --------------------------------------------------------------------------- 1. the Graph chain


def chain_reply(i: int) -> str:
    return f"Step {i} of the summary is done."


def build_chain(side: str) -> tuple[Any, list[Any]]:
    """n0 -> n1 -> ... -> n9, each an agent that answers one text turn; the graph and the models."""
    k = multiagent_kit(side)
    builder = k.GraphBuilder()
    models = []
    for i in range(NODES):
        agent, model = new_agent(side, f"n{i}", [chain_reply(i)])
        models.append(model)
        builder.add_node(agent, f"n{i}")
        if i:
            builder.add_edge(f"n{i - 1}", f"n{i}")
    builder.set_entry_point("n0")
    return builder.build(), models


def check_chain(side: str, result: Any, models: list[Any]) -> None:
    k = multiagent_kit(side)
    names = [f"n{i}" for i in range(NODES)]
    assert result.status == k.Status.COMPLETED, (side, result.status)
    assert [node.node_id for node in result.execution_order] == names, (side, result.execution_order)
    assert result.completed_nodes == NODES, (side, result.completed_nodes)
    for i, model in enumerate(models):
        assert result_text(result.results[f"n{i}"].result) == chain_reply(i), (side, i, result.results[f"n{i}"])
        assert model.calls == 1, (side, i, model.calls)
        given = user_text(model.requests[0])
        expected = graph_input(TASK, f"n{i - 1}", chain_reply(i - 1)) if i else TASK
        assert given == expected, (side, i, given)


def invocation_trial(side: str, build: Callable[[str], tuple[Any, list[Any]]],
                     check: Callable[[str, Any, list[Any]], None]) -> Trial:
    """One invocation of a new graph or swarm from `build`: built before the clock starts, checked after it."""

    def trial(_label: str) -> float:
        orchestrator, models = build(side)
        t0 = time.perf_counter()
        result = orchestrator(TASK)
        elapsed = time.perf_counter() - t0
        check(side, result, models)
        return elapsed

    return trial


def chain_trial(side: str) -> Trial:
    return invocation_trial(side, build_chain, check_chain)


# --------------------------------------------------------------------------- 2. the Swarm chain


def handoff_message(i: int) -> str:
    return f"a{i} read its part; a{i + 1}, take the next one."


def swarm_script(i: int) -> list[Any]:
    """a0..a8: hand off to the next agent (a toolUse turn), then a short text turn; a9: the final answer."""
    if i == NODES - 1:
        return [chain_reply(i)]
    use = tool_use_message(f"tooluse_handoff_{i}", "handoff_to_agent",
                           {"agent_name": f"a{i + 1}", "message": handoff_message(i)})
    return [use, f"Handed off to a{i + 1}."]


def build_swarm(side: str) -> tuple[Any, list[Any]]:
    """A Swarm of a0..a9 (entry a0, each framework's default limits and timeouts); the swarm and the models."""
    agents, models = zip(*(new_agent(side, f"a{i}", swarm_script(i)) for i in range(NODES)), strict=True)
    return multiagent_kit(side).Swarm(list(agents)), list(models)


def check_swarm(side: str, result: Any, models: list[Any]) -> None:
    k = multiagent_kit(side)
    names = [f"a{i}" for i in range(NODES)]
    assert result.status == k.Status.COMPLETED, (side, result.status)
    assert [node.node_id for node in result.node_history] == names, (side, result.node_history)
    assert result_text(result.results[names[-1]].result) == chain_reply(NODES - 1), (side, result.results)
    for i, model in enumerate(models):
        assert model.calls == len(swarm_script(i)), (side, i, model.calls)
        given = user_text(model.requests[0])
        if i:
            assert f"Handoff Message: {handoff_message(i - 1)}" in given, (side, i, given)
            assert f"Previous agents who worked on this: {' → '.join(names[:i])}" in given, (side, i, given)
        if i < NODES - 1:  # the handoff tool ran and succeeded before the agent's text turn
            tool_result = model.requests[1]["messages"][-1]["content"][0]["toolResult"]
            assert tool_result["status"] == "success", (side, i, tool_result)


def swarm_trial(side: str) -> Trial:
    return invocation_trial(side, build_swarm, check_swarm)


# --------------------------------------------------------------------------- 3. the seed's Graph round trip


class NodeApprovalHook(ApprovalHook):
    """The seed's Graph hook: before the node "cleanup", ask; anything but "y" cancels the node."""

    def approve(self, event: Any) -> None:
        if event.node_id != "cleanup":
            return
        approval = event.interrupt(f"{self.app_name}-approval", reason={"resources": "example"})
        if approval.lower() != "y":
            event.cancel_node = "User denied permission to cleanup resources"


def roundtrip_server(side: str, storage_dir: Path) -> Callable[[Any, str], tuple[Any, Any, Any]]:
    """What a server does per request: build the seed's Graph on a FileSessionManager and call it.

    Everything is new per request: the session manager (same session id), both agents and their
    models, the hook and the graph. The models say what they would in that request: a new task gets
    the inspector's report, the answers get the cleanup's. Returns the result and the two models.
    """
    k = multiagent_kit(side)

    def server(task: Any, session_id: str) -> tuple[Any, Any, Any]:
        first = isinstance(task, str)
        inspector, inspector_model = new_agent(side, "inspector", [INSPECTED] if first else [],
                                               "You inspect resources.")
        cleanup, cleanup_model = new_agent(side, "cleanup", [] if first else [CLEANED],
                                           "You clean up resources older than 5 days.")
        builder = k.GraphBuilder()
        builder.add_node(inspector, "inspector")
        builder.add_node(cleanup, "cleanup")
        builder.add_edge("inspector", "cleanup")
        builder.set_entry_point("inspector")
        builder.set_hook_providers([NodeApprovalHook(APP_NAME, k.BeforeNodeCallEvent)])
        builder.set_session_manager(k.FileSessionManager(session_id=session_id, storage_dir=str(storage_dir)))
        graph = builder.build()
        return graph(task), inspector_model, cleanup_model

    return server


def answers(paused: Any) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": "y"}}
            for i in paused.interrupts if i.name == f"{APP_NAME}-approval"]


def check_roundtrip(side: str, first: tuple[Any, Any, Any], second: tuple[Any, Any, Any]) -> None:
    k = multiagent_kit(side)
    (paused, inspector1, cleanup1), (done, inspector2, cleanup2) = first, second
    assert paused.status == k.Status.INTERRUPTED, (side, paused.status)
    assert [(i.name, i.reason) for i in paused.interrupts] == [(f"{APP_NAME}-approval", {"resources": "example"})], \
        (side, paused.interrupts)
    assert (inspector1.calls, cleanup1.calls) == (1, 0), (side, inspector1.calls, cleanup1.calls)
    assert done.status == k.Status.COMPLETED, (side, done.status)
    assert (inspector2.calls, cleanup2.calls) == (0, 1), (side, "the inspector ran again", inspector2.calls)
    assert [node.node_id for node in done.execution_order] == ["inspector", "cleanup"], (side, done.execution_order)
    assert result_text(done.results["inspector"].result) == INSPECTED, (side, done.results)
    assert result_text(done.results["cleanup"].result) == CLEANED, (side, done.results)
    assert done.results["cleanup"].result.message["content"] == [{"text": CLEANED}], (side, done.results["cleanup"])
    given = user_text(cleanup2.requests[0])
    assert given == graph_input(RT_TASK, "inspector", INSPECTED), (side, given)


def roundtrip_trial(side: str, storage_dir: Path) -> Trial:
    """server(task) -> interrupt -> server(answers) -> done, on the trial's fresh session id.

    The hook class and the model scripts exist before the clock starts (a server defines them at
    import); the clock covers both requests, each building its session manager, agents and graph,
    loading the session, running and saving.
    """
    server = roundtrip_server(side, storage_dir)

    def trial(session_id: str) -> float:
        t0 = time.perf_counter()
        first = server(RT_TASK, session_id)
        second = server(answers(first[0]), session_id)
        elapsed = time.perf_counter() - t0
        check_roundtrip(side, first, second)
        return elapsed

    return trial


# --------------------------------------------------------------------------- both sides see the same conversations


def normalized_requests(models: list[Any]) -> list[list[list[dict[str, Any]]]]:
    """Every model's requests as role and content only, texts without trailing whitespace.

    Strands adds its own keys to stored assistant messages (`metadata`, `tracking_id`), and ends the
    text of an agent result with a newline, which its Graph passes on into the next node's input
    (`  - Agent: ...\\n`); statehitl does neither. Neither changes what a model is asked.
    """

    def block(b: dict[str, Any]) -> dict[str, Any]:
        return {"text": b["text"].rstrip()} if "text" in b else b

    return [[[{"role": m["role"], "content": [block(b) for b in m["content"]]} for m in request["messages"]]
             for request in model.requests] for model in models]


def requests_seen(side: str, workdir: Path) -> list[Any]:
    """Run each workload once on `side` (checked) and return what every agent was asked, normalized."""
    graph, chain_models = build_chain(side)
    check_chain(side, graph(TASK), chain_models)
    swarm, swarm_models = build_swarm(side)
    check_swarm(side, swarm(TASK), swarm_models)
    server = roundtrip_server(side, workdir)
    first = server(RT_TASK, "same-requests")
    second = server(answers(first[0]), "same-requests")
    check_roundtrip(side, first, second)
    return [normalized_requests(models) for models in
            (chain_models, swarm_models, [first[1], first[2], second[1], second[2]])]


def check_same_requests(seen: dict[str, list[Any]]) -> None:
    """Both sides' agents were asked exactly the same things (`requests_seen` of each side)."""
    for name, ours, theirs in zip(("Graph chain", "Swarm chain", "round trip"), seen["statehitl"], seen["strands"],
                                  strict=True):
        if ours != theirs:
            raise AssertionError(f"{name}: the agents of statehitl and Strands were asked different things\n"
                                 f"statehitl: {ours}\nstrands: {theirs}")


def statehitl_bytes_per_call(directory: Path) -> list[int]:
    """What statehitl's round trip writes (bytes passed to write syscalls), on a new session, per forced write:
    one for the first request, two for the resume (its claim, forced before the approved action runs, and
    the checkpoint it returns on; its bytes split between them, which an fdatasync this small does not feel)."""
    from storage_workload import measured, probe_overhead  # it imports statehitl: not in the Strands worker

    server = roundtrip_server("statehitl", directory)
    overhead = probe_overhead()
    first, written_first = measured(lambda: server(RT_TASK, "bytes-probe"), overhead)
    _, written_second = measured(lambda: server(answers(first[0]), "bytes-probe"), overhead)
    return [written_first.wchar, written_second.wchar // 2, written_second.wchar - written_second.wchar // 2]


# --------------------------------------------------------------------------- the worker process


def worker_main(conn: Connection, side: str, tmpfs_str: str, disk_str: str) -> None:
    """One framework's worker (harness/workers.py): `trial NAME LABEL` runs one timed repetition of NAME."""
    tmpfs, disk = Path(tmpfs_str), Path(disk_str)
    ignore_unbounded_graph_warning()
    trials = {"graph": chain_trial(side), "swarm": swarm_trial(side),
              "roundtrip-tmpfs": roundtrip_trial(side, tmpfs / side),
              "roundtrip-disk": roundtrip_trial(side, disk / side)}

    def handle(command: str, *args: Any) -> Any:
        if command == "trial":  # name, label (the fresh session id of a round trip)
            return trials[args[0]](args[1])
        if command == "requests":
            return requests_seen(side, tmpfs / f"{side}-same-requests")
        if command == "bytes-per-call":
            return statehitl_bytes_per_call(disk / "bytes-probe")
        raise ValueError(f"unknown worker command {command!r}")

    serve(conn, handle)
