"""A Graph holding a Swarm, run one call per process on a shared session store (file, DynamoDB, S3).

Every call builds NEW agents, a new Swarm and a new Graph on the session, as a server does per request;
the store is the only thing the processes share. Each process's scripted models hold only the replies
its call needs (a resumed agent is not asked again for the turn whose tool was waiting), so a call that
redid finished work would run out of replies and fail loudly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from resume_processes import _race

ORCHESTRATION_APP = textwrap.dedent(
    '''
    import json
    import sys
    import time
    from pathlib import Path

    from statehitl import Agent, tool
    from statehitl.errors import CheckpointConflict, NotInterruptedError, UnknownInterruptError
    from statehitl.hooks import BeforeNodeCallEvent
    from statehitl.models import ScriptedModel
    from statehitl.multiagent import GraphBuilder, Swarm
    from statehitl.session import SessionManager

    STAGES = {  # the replies each call's agents give, by call
        "start": {"intake": ["a ticket"],
                  "triage": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "h1",
                             "name": "handoff_to_agent", "input": {"agent_name": "fixer", "message": "fix"}}}]},
                             "passing it on"],
                  "fixer": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "delete",
                            "input": {"path": "tmp/x"}}}]}]},
        "fix": {"fixer": ["fixed"]},
        "close": {"cleanup": ["closed the ticket"]},
    }


    def build(store, session_id, stage, runs):
        @tool(context=True)
        def delete(path: str, tool_context) -> str:
            """Delete a file (pretend).

            Args:
                path: the file
            """
            if tool_context.interrupt("delete-ok", reason={"path": path}) != "y":
                return "kept"
            with open(runs, "a") as log:  # counts real executions across processes
                log.write(f"delete {path}\\n")
            return f"deleted {path}"

        def agent(name, tools=()):
            replies = STAGES[stage].get(name, [])
            return Agent(name=name, model=ScriptedModel(replies), tools=list(tools), callback_handler=None)

        def gate(event):
            if event.node_id == "cleanup" and event.interrupt("close-ok", reason="close?") != "y":
                event.cancel_node = "not closed"

        team = Swarm([agent("triage"), agent("fixer", [delete])], id="team")
        builder = GraphBuilder()
        builder.add_node(agent("intake"), "intake")
        builder.add_node(team, "team")
        builder.add_node(agent("cleanup"), "cleanup")
        builder.add_edge("intake", "team")
        builder.add_edge("team", "cleanup")
        builder.set_session_manager(SessionManager.from_url(store, session_id=session_id))
        graph = builder.build()
        graph.add_hook(gate, BeforeNodeCallEvent)
        return graph


    def report(result):
        print(json.dumps({"status": result.status.value,
                          "interrupts": [{"id": i.id, "name": i.name, "node": i.node} for i in result.interrupts],
                          "order": [n.node_id for n in result.execution_order],
                          "results": {k: str(v) for k, v in result.results.items()}}))


    store, session_id, runs, stage = sys.argv[1:5]
    graph = build(store, session_id, stage, runs)
    if stage == "start":
        report(graph("handle the ticket"))
    else:
        interrupt_id, response = sys.argv[5:7]
        pending = [i.id for i in graph.interrupts]  # what a restarted server lists before answering
        assert interrupt_id in pending, pending
        if len(sys.argv) > 8:  # a race: load, say ready, wait for the start line
            go, ready = Path(sys.argv[7]), Path(sys.argv[8])
            ready.touch()
            while not go.exists():
                time.sleep(0.005)
        try:
            report(graph([{"interruptResponse": {"interruptId": interrupt_id, "response": response}}]))
        # another process answered it first: it won the claim, or is running the answer (the thread then
        # reads as executing), or has moved on past the interrupt
        except (CheckpointConflict, NotInterruptedError, UnknownInterruptError) as exc:
            print(f"lost: {exc}")
            sys.exit(3)
    '''
)


def write_app(workdir: Path) -> Path:
    script = workdir / "orchestration_app.py"
    script.write_text(ORCHESTRATION_APP)
    return script


def call(script: Path, store: str, runs: Path, stage: str, *answer: str) -> dict[str, Any]:
    """One call of the app in a new process; its report."""
    done = subprocess.run([sys.executable, str(script), store, "s1", str(runs), stage, *answer],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def race(script: Path, store: str, runs: Path, stage: str, interrupt_id: str, workdir: Path,
         processes: int = 4) -> list[tuple[str, str, int]]:
    """``processes`` new processes answer ``interrupt_id`` at once; each one's (stdout, stderr, code)."""
    go = workdir / "go"
    command = [sys.executable, str(script), store, "s1", str(runs), stage, interrupt_id, "y", str(go)]
    return _race(command, workdir, go, processes)


def run_through(script: Path, store: str, workdir: Path, *, racers: int = 0) -> dict[str, Any]:
    """The whole story, one process per call (the deep answer raced by ``racers`` processes if given)."""
    runs = workdir / "runs.txt"
    first = call(script, store, runs, "start")
    assert first["status"] == "interrupted"
    [deep] = first["interrupts"]
    assert (deep["name"], deep["node"]) == ("delete-ok", "team/fixer/delete")
    if racers:
        outcomes = race(script, store, runs, "fix", deep["id"], workdir, racers)
        codes = sorted(code for _, _, code in outcomes)
        assert codes == [0] + [3] * (racers - 1), [err for _, err, _ in outcomes]
        second = json.loads(next(out for out, _, code in outcomes if code == 0))
    else:
        second = call(script, store, runs, "fix", deep["id"], "y")
    [gate] = second["interrupts"]
    assert (gate["name"], gate["node"]) == ("close-ok", "cleanup")
    third = call(script, store, runs, "close", gate["id"], "y")
    assert runs.read_text() == "delete tmp/x\n"  # the approved action ran exactly once, in all processes
    return third
