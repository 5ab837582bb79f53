"""A Graph or Swarm built on a session shows where its thread stands at once; the same task sent again
after a crash or a failed step goes on from where the call stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from ma_helpers import RUNS, Approval, agent, answer, delete, handoff, uses

from statehitl.cli import main
from statehitl.errors import NodeCancelledError
from statehitl.models import ScriptedModel
from statehitl.models.errors import ModelError
from statehitl.multiagent import GraphBuilder, Status, Swarm
from statehitl.session import FileSessionManager


@pytest.fixture(autouse=True)
def _clean_runs() -> None:
    RUNS.clear()


def inspect_then_cleanup(tmp_path: Path, inspect: tuple[Any, ...] = ("found 3",),
                         cleanup: tuple[Any, ...] = ("cleaned",), *, approval: bool = True) -> Any:
    builder = GraphBuilder()
    builder.add_node(agent("inspect", *inspect), "inspect")
    builder.add_node(agent("cleanup", *cleanup), "cleanup")
    builder.add_edge("inspect", "cleanup")
    builder.set_hook_providers([Approval("cleanup")] if approval else [])
    builder.set_session_manager(FileSessionManager("s", storage_dir=str(tmp_path)))
    return builder.build()


# -- item 6: the thread's last state, as soon as it is built --------------------------------------------


def test_a_graph_built_on_a_session_shows_its_last_call_before_it_is_called(tmp_path: Path) -> None:
    first = inspect_then_cleanup(tmp_path)
    first(answer(first("inspect and clean")))

    again = inspect_then_cleanup(tmp_path, (), ())  # another process, before any call
    assert again.state.status == Status.COMPLETED
    assert again.state.task == "inspect and clean"
    assert {n: str(r.result) for n, r in again.state.results.items()} == {"inspect": "found 3", "cleanup": "cleaned"}
    assert [(n.node_id, n.execution_status) for n in again.nodes.values()] == [
        ("inspect", Status.COMPLETED), ("cleanup", Status.COMPLETED)]
    inspector = again.nodes["inspect"].executor
    assert [m["role"] for m in inspector.messages] == ["user", "assistant"]  # its conversation, from the thread
    assert inspector.messages[-1]["content"] == [{"text": "found 3"}]


def test_a_graph_cancelled_by_a_human_shows_why_after_a_restart(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    first = inspect_then_cleanup(tmp_path)
    with pytest.raises(NodeCancelledError):
        first(answer(first("inspect and clean"), "n"))

    again = inspect_then_cleanup(tmp_path, (), ())
    assert again.state.status == Status.FAILED
    cancelled = again.state.results["cleanup"]
    assert cancelled.status == Status.FAILED
    assert isinstance(cancelled.result, NodeCancelledError)  # its type, read back in a new object
    assert (cancelled.result.node_id, str(cancelled.result)) == ("cleanup", "User denied permission to cleanup "
                                                                            "resources")
    assert again.nodes["cleanup"].execution_status == Status.FAILED

    assert main(["threads", "list", "--store", f"file://{tmp_path}"]) == 0
    listed = capsys.readouterr().out
    assert "cancelled cleanup: User denied permission to cleanup resources" in listed  # not "-"


def test_threads_list_says_which_limit_ended_an_orchestration(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    swarm = Swarm([agent("ping", handoff("pong"), "x"), agent("pong", "y")], max_handoffs=1,
                  session_manager=FileSessionManager("s", storage_dir=str(tmp_path)))
    assert swarm("go").status == Status.FAILED
    assert main(["threads", "list", "--store", f"file://{tmp_path}"]) == 0
    assert "Max handoffs reached: 1" in capsys.readouterr().out


def test_a_swarm_built_on_a_session_shows_where_its_agents_stopped(tmp_path: Path) -> None:
    def build(*replies: Any) -> Swarm:
        return Swarm([agent("worker", *replies, tools=[delete])],
                     session_manager=FileSessionManager("s", storage_dir=str(tmp_path)))

    waiting = build(uses(("t1", "delete", {"path": "x"})))("clean x")
    again = build("deleted it")
    shown = again.state
    assert shown.completion_status == Status.INTERRUPTED
    assert shown.current_node.node_id == "worker"
    assert shown.results["worker"].status == Status.INTERRUPTED
    assert [i.id for i in shown.results["worker"].interrupts] == [i.id for i in waiting.interrupts]
    assert again.serialize_state()["next_nodes_to_execute"] == ["worker"]

    assert again(answer(waiting)).status == Status.COMPLETED
    assert RUNS == ["delete x"]


def test_a_failed_swarm_agents_error_keeps_its_type_in_a_new_process(tmp_path: Path) -> None:
    def build() -> Swarm:
        return Swarm([agent("broken")], session_manager=FileSessionManager("s", storage_dir=str(tmp_path)))

    assert build()("go").status == Status.FAILED
    failed = build().state.results["broken"]
    assert failed.status == Status.FAILED
    assert isinstance(failed.result, ModelError)


# -- item 4: the same task again after a crash or a failed step --------------------------------------------

CRASHING_APP = textwrap.dedent(
    '''
    import json
    import os
    import sys

    from statehitl import Agent, tool
    from statehitl.models import ScriptedModel
    from statehitl.multiagent import GraphBuilder
    from statehitl.session import FileSessionManager

    store, mode, task, runs = sys.argv[1:5]


    @tool
    def ship(order: str) -> str:
        """Ship an order.

        Args:
            order: the order
        """
        if mode == "crash":
            os._exit(7)  # the process dies in the middle of the call, after "check" finished
        with open(runs, "a") as log:
            log.write(f"ship {order}\\n")
        return "shipped"


    def agent(name, replies, tools=()):
        return Agent(name=name, model=ScriptedModel(replies), tools=list(tools), callback_handler=None)


    ship_call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "s1", "name": "ship",
                                                               "input": {"order": "o-1"}}}]}
    # a retry has no reply for "check": were it run again, its model would fail the call
    check = agent("check", [] if mode == "retry" else ["checked"])
    builder = GraphBuilder()
    builder.add_node(check, "check")
    builder.add_node(agent("ship", [ship_call, "shipped it"], [ship]), "ship")
    builder.add_edge("check", "ship")
    builder.set_session_manager(FileSessionManager("orders", storage_dir=store, lease_seconds=0.2))
    result = builder.build()(task)
    print(json.dumps({"status": result.status.value, "order": [n.node_id for n in result.execution_order],
                      "results": {k: str(v) for k, v in result.results.items()}}))
    '''
)


def run_app(script: Path, store: Path, mode: str, task: str, runs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), str(store), mode, task, str(runs)], capture_output=True,
                          text=True, timeout=120)


def test_the_same_task_after_a_crash_goes_on_and_another_task_starts_afresh(tmp_path: Path) -> None:
    script, store, runs = tmp_path / "app.py", tmp_path / "store", tmp_path / "runs.txt"
    script.write_text(CRASHING_APP)
    assert run_app(script, store, "crash", "ship o-1", runs).returncode == 7
    time.sleep(0.3)  # the dead process's lease on the thread runs out (nothing here measures time)

    done = run_app(script, store, "retry", "ship o-1", runs)  # a client's retry of the request that died
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "completed"
    assert report["order"] == ["check", "ship"]  # "check" finished before the crash and did not run again
    assert report["results"] == {"check": "checked", "ship": "shipped it"}
    assert runs.read_text() == "ship o-1\n"

    assert run_app(script, store, "crash", "ship o-2", runs).returncode == 7
    time.sleep(0.3)
    fresh = run_app(script, store, "fresh", "ship o-3", runs)  # a different task is run as asked
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["order"] == ["check", "ship"]


def test_the_same_task_after_a_failed_step_retries_it_and_another_task_starts_afresh(tmp_path: Path) -> None:
    graph = inspect_then_cleanup(tmp_path, cleanup=(), approval=False)  # cleanup's model has no reply: it fails
    with pytest.raises(ModelError):
        graph("inspect and clean")
    cleanup = graph.nodes["cleanup"].executor
    cleanup.model = ScriptedModel(["cleaned on retry"])  # what was wrong is fixed; inspect has no reply left

    retried = graph("inspect and clean")
    assert retried.status == Status.COMPLETED
    assert [n.node_id for n in retried.execution_order] == ["inspect", "cleanup"]
    assert str(retried.results["cleanup"].result) == "cleaned on retry"

    graph.nodes["inspect"].executor.model = ScriptedModel(["found 1"])
    cleanup.model = ScriptedModel(["cleaned 1"])
    other = graph("a different task")
    assert [str(other.results[n].result) for n in ("inspect", "cleanup")] == ["found 1", "cleaned 1"]
