"""Programs that run in separate processes against one store, shared by the resume tests of every backend.

A store (a directory, or a URL such as ``s3://bucket/prefix?endpoint_url=...``) is the only thing the
processes share, which is the deployment story: an interrupt raised on one machine is answered on
another. The file store tests and the cloud backends' tests run the same scripts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

REFUND_APP = textwrap.dedent(
    '''
    """Refund approval: classify, then review (asks a human) and audit side by side, then pay."""
    import json
    import sys
    from pathlib import Path
    from typing import Annotated

    from pydantic import BaseModel

    from statehitl.checkpoint import Checkpointer
    from statehitl.graph import END, START, StateGraph, append

    HERE = Path(__file__).parent


    class Ticket(BaseModel):
        text: str
        log: Annotated[list[str], append] = []
        approved: bool = False


    def classify(state):
        return {"log": "classified"}


    def review(state, ctx):
        answer = ctx.interrupt("refund-approval", reason={"text": state.text})
        return {"approved": answer == "y", "log": f"reviewed: {answer}"}


    def audit(state):
        with open(HERE / "audit-runs.txt", "a") as runs:  # counts runs across processes
            runs.write("ran\\n")
        return {"log": "audited"}


    def pay(state):
        return {"log": "paid" if state.approved else "refused"}


    def build(store):  # a directory or a store URL (s3://..., dynamodb://...)
        g = StateGraph(Ticket)
        g.add_node("classify", classify)
        g.add_node("review", review)
        g.add_node("audit", audit)
        g.add_node("pay", pay)
        g.add_edge(START, "classify")
        g.add_edge("classify", "review")
        g.add_edge("classify", "audit")
        g.add_edge(["review", "audit"], "pay")
        g.add_edge("pay", END)
        return g.compile(checkpointer=Checkpointer.from_url(store))


    def report(result):
        print(json.dumps({
            "stop_reason": result.stop_reason,
            "state": result.state.model_dump(),
            "interrupts": [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts],
        }))


    if __name__ == "__main__":
        command, store, thread = sys.argv[1:4]
        app = build(store)
        if command == "start":
            report(app.invoke({"text": "refund please"}, thread_id=thread))
        else:
            interrupt_id, answer = sys.argv[4:6]
            report(app.invoke([{"interruptResponse": {"interruptId": interrupt_id, "response": answer}}],
                              thread_id=thread))
    '''
)


def run_app(script: Path, *args: str) -> dict[str, Any]:
    """Run ``REFUND_APP`` (saved as ``script``) in a new interpreter; its JSON report."""
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


RESUMER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pydantic import BaseModel
    from statehitl.checkpoint import Checkpointer
    from statehitl.errors import CheckpointConflict, NotInterruptedError
    from statehitl.graph import END, START, StateGraph

    store, actions, go, ready = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])

    class Job(BaseModel):  # the same machine as the test's: fingerprints must match to resume
        approved: bool = False
        done: bool = False

    def review(state, ctx):
        return {"approved": ctx.interrupt("approve") == "y"}

    def act(state):
        with actions.open("a") as f:
            f.write("deleted the files\\n")

    g = StateGraph(Job)
    g.add_node("review", review)
    g.add_node("act", act)
    g.add_edge(START, "review")
    g.add_edge("review", "act")
    g.add_edge("act", END)
    app = g.compile(checkpointer=Checkpointer.from_url(store))
    state = app.get_state("t")
    responses = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in state.interrupts]
    ready.touch()
    while not go.exists():
        time.sleep(0.001)
    try:
        app.invoke(responses, thread_id="t")
    except (CheckpointConflict, NotInterruptedError) as exc:  # lost the claim, or came after the winner
        print("conflict:", exc)
        sys.exit(3)
    print("resumed")
    """
)


def park_for_race(store: str) -> None:
    """Stop thread ``"t"`` of ``store`` at the interrupt ``RESUMER`` answers (built from the same machine)."""
    from pydantic import BaseModel

    from statehitl.checkpoint import Checkpointer
    from statehitl.graph import END, START, StateGraph

    class Job(BaseModel):  # RESUMER's machine: same nodes, edges and state fields, so the fingerprints match
        approved: bool = False
        done: bool = False

    g = StateGraph(Job)
    g.add_node("review", lambda s, ctx: {"approved": ctx.interrupt("approve") == "y"})
    g.add_node("act", lambda s: None)
    g.add_edge(START, "review")
    g.add_edge("review", "act")
    g.add_edge("act", END)
    paused = g.compile(checkpointer=Checkpointer.from_url(store)).invoke({}, thread_id="t")
    assert paused.stop_reason == "interrupt"


def _race(command: list[str], workdir: Path, go: Path, processes: int) -> list[tuple[str, str, int]]:
    """Start ``processes`` copies of ``command READY`` (READY a new file each, in ``workdir``), wait until
    every one has touched its READY (or one has died), touch ``go``; each one's ``(stdout, stderr, exit code)``.
    """
    readies = [workdir / f"ready-{n}" for n in range(processes)]
    procs = [
        subprocess.Popen([*command, str(ready)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for ready in readies
    ]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break  # one died before the start line: its stderr says why
        time.sleep(0.01)  # every process loads what it resumes, then waits at the start line
    go.touch()
    return [(*p.communicate(timeout=120), p.returncode) for p in procs]


def _assert_one_resumed(outcomes: list[tuple[str, str, int]]) -> None:
    """Exit codes: one 0 (the winner), every other one 3 (lost the race); else every process's stderr."""
    codes = sorted(code for _, _, code in outcomes)
    assert codes == [0] + [3] * (len(outcomes) - 1), [err for _, err, _ in outcomes]


def race_resumes(store: str, workdir: Path, processes: int = 6) -> tuple[list[tuple[str, str, int]], Path]:
    """Resume the interrupted thread ``"t"`` of ``store`` from ``processes`` interpreters at once.

    Every process loads the interrupt, waits at a start line, then answers it. Returns each process's
    ``(stdout, stderr, exit code)`` (3 for a lost race) and the file the approved action appends to.
    """
    actions, go = workdir / "actions.txt", workdir / "go"
    script = workdir / "resume.py"
    script.write_text(RESUMER)
    return _race([sys.executable, str(script), store, str(actions), str(go)], workdir, go, processes), actions


def assert_one_winner(outcomes: list[tuple[str, str, int]], actions: Path) -> None:
    """Exactly one process resumed and ran the action once; every other one saw a conflict."""
    _assert_one_resumed(outcomes)
    assert actions.read_text() == "deleted the files\n"
    assert all("conflict:" in out for out, _, code in outcomes if code == 3)


# -- agents on sessions -------------------------------------------------------------------------------------

AGENT_FINAL = "Deleted old.log and older.log."
"""The final answer ``AGENT_APP``'s resumed agent gives: keep it equal to ``FINAL`` inside ``AGENT_APP``."""

AGENT_APP = textwrap.dedent(
    '''
    """The seed's session server: an agent whose approval hook asks before ``delete_files`` runs.

    ``python agent_app.py COMMAND SPEC SESSION_ID ...`` where SPEC is JSON naming the session manager:
    ``{"kind": "url", "args": [URL]}`` (``"args": []`` reads STATEHITL_SESSION_URL), ``{"kind": "s3",
    "args": [BUCKET, PREFIX], "options": {...}}``, ``{"kind": "dynamodb", "args": [TABLE], "options": {...}}``
    or ``{"kind": "file", "args": [DIR]}``. Commands: ``start``; ``resume ID ANSWER``; ``race ID ANSWER GO
    READY`` (load the session, touch READY, wait for GO, answer; exit 3 on CheckpointConflict).
    """
    import json
    import os
    import sys
    import time
    from pathlib import Path

    from statehitl import Agent, tool
    from statehitl.errors import CheckpointConflict
    from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
    from statehitl.models.scripted import ScriptedModel
    from statehitl.session import DynamoDBSessionManager, FileSessionManager, S3SessionManager, SessionManager

    HERE = Path(__file__).parent
    PROMPT = "Delete the logs older than 5 days"
    DELETE = {"role": "assistant", "content": [
        {"text": "Deleting the old logs."},
        {"toolUse": {"toolUseId": "tooluse_delete", "name": "delete_files",
                     "input": {"paths": ["old.log", "older.log"]}}},
    ]}
    FINAL = "Deleted old.log and older.log."  # = AGENT_FINAL of resume_processes.py: keep the two equal


    @tool
    def delete_files(paths: list[str]) -> str:
        """Delete files.

        Args:
            paths: The files to delete.
        """
        with open(HERE / "deleted.txt", "a") as log:  # the side effect, counted across processes
            log.write(f"{os.getpid()} {' '.join(paths)}\\n")
        return f"deleted {len(paths)} files"


    class ApprovalHook(HookProvider):
        def __init__(self, app_name):
            self.app_name = app_name

        def register_hooks(self, registry: HookRegistry, **kwargs):
            registry.add_callback(BeforeToolCallEvent, self.approve)

        def approve(self, event: BeforeToolCallEvent):
            if event.tool_use["name"] != "delete_files":
                return
            if event.agent.state.get(f"{self.app_name}-approval") == "t":  # (t)rust
                return
            approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
            if approval.lower() not in ["y", "t"]:
                event.cancel_tool = "User denied permission to delete files"
            event.agent.state.set(f"{self.app_name}-approval", approval.lower())


    def session(spec, session_id):
        args, options = spec.get("args", []), spec.get("options", {})
        if spec["kind"] == "url":
            return SessionManager.from_url(*args, session_id=session_id, **options)
        kinds = {"file": FileSessionManager, "s3": S3SessionManager, "dynamodb": DynamoDBSessionManager}
        return kinds[spec["kind"]](session_id, *args, **options)


    def build(spec, session_id, replies):
        return Agent(
            model=ScriptedModel(replies),
            tools=[delete_files],
            hooks=[ApprovalHook("myapp")],
            session_manager=session(spec, session_id),
            system_prompt="You delete files older than 5 days",
            callback_handler=None,
        )


    def report(agent, result):
        print(json.dumps({
            "pid": os.getpid(),
            "stop_reason": result.stop_reason,
            "message": result.message,
            "interrupts": [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts],
            "messages": agent.messages,
            "state": agent.state.get(),
            "model_calls": agent.model.calls,
            "model_saw": [request["messages"] for request in agent.model.requests],
        }))


    def answer(interrupt_id, response):
        return [{"interruptResponse": {"interruptId": interrupt_id, "response": response}}]


    if __name__ == "__main__":
        command, spec, session_id = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
        if command == "start":
            agent = build(spec, session_id, [DELETE])
            report(agent, agent(PROMPT))
        elif command == "resume":
            agent = build(spec, session_id, [FINAL])  # only the final answer: resuming must not ask the model first
            report(agent, agent(answer(*sys.argv[4:6])))
        elif command == "race":
            interrupt_id, response, go, ready = sys.argv[4], sys.argv[5], Path(sys.argv[6]), Path(sys.argv[7])
            agent = build(spec, session_id, [FINAL])  # loads the interrupted thread
            ready.touch()
            while not go.exists():
                time.sleep(0.001)
            try:
                result = agent(answer(interrupt_id, response))
            except CheckpointConflict as exc:  # lost the claim
                print(json.dumps({"pid": os.getpid(), "conflict": f"{type(exc).__name__}: {exc}",
                                  "model_calls": agent.model.calls}))
                sys.exit(3)
            report(agent, result)
        else:
            sys.exit(f"unknown command {command!r}")
    '''
)
"""An agent on a session; save it to a file and run it with ``run_app(script, COMMAND, SPEC, SESSION_ID, ...)``."""


def session_spec(kind: str, *args: str, **options: Any) -> str:
    """``AGENT_APP``'s SPEC argument: which session manager to build (``"url"``, ``"file"``, ``"s3"``,
    ``"dynamodb"``), its positional arguments after the session id, and its keyword options."""
    return json.dumps({"kind": kind, "args": list(args), "options": options})


def race_agent_resumes(script: Path, spec: str, session_id: str, interrupt_id: str,
                       processes: int = 4) -> list[tuple[str, str, int]]:
    """Answer ``interrupt_id`` of session ``session_id`` with "y" from ``processes`` interpreters at once.

    ``script`` is ``AGENT_APP`` saved to a file (its directory gets ``deleted.txt`` and the start-line
    files). Every process builds its agent on the session (loading the interrupted thread), waits at a
    start line, then answers. Returns each process's ``(stdout, stderr, exit code)`` (3 for a lost race).
    """
    go = script.parent / "go"
    command = [sys.executable, str(script), "race", spec, session_id, interrupt_id, "y", str(go)]
    return _race(command, script.parent, go, processes)


def assert_one_agent_winner(outcomes: list[tuple[str, str, int]], deleted: Path) -> dict[str, Any]:
    """One process resumed the agent and ran ``delete_files`` once; every other one lost the claim with
    ``CheckpointConflict`` before its model or any tool ran. Returns the winner's report."""
    _assert_one_resumed(outcomes)
    [winner] = [json.loads(out) for out, _, code in outcomes if code == 0]
    losers = [json.loads(out) for out, _, code in outcomes if code == 3]
    assert (winner["stop_reason"], winner["message"]["content"]) == ("end_turn", [{"text": AGENT_FINAL}])
    assert winner["model_calls"] == 1
    assert all(loser["conflict"].startswith("CheckpointConflict: ") for loser in losers), losers
    assert all(loser["model_calls"] == 0 for loser in losers), losers
    assert deleted.read_text() == f"{winner['pid']} old.log older.log\n"  # once, by the winner
    return winner
