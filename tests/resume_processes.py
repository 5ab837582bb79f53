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


def race_resumes(store: str, workdir: Path, processes: int = 6) -> tuple[list[tuple[str, str, int]], Path]:
    """Resume the interrupted thread ``"t"`` of ``store`` from ``processes`` interpreters at once.

    Every process loads the interrupt, waits at a start line, then answers it. Returns each process's
    ``(stdout, stderr, exit code)`` (3 for a lost race) and the file the approved action appends to.
    """
    actions, go = workdir / "actions.txt", workdir / "go"
    script = workdir / "resume.py"
    script.write_text(RESUMER)
    readies = [workdir / f"ready-{n}" for n in range(processes)]
    procs = [
        subprocess.Popen([sys.executable, str(script), store, str(actions), str(go), str(ready)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for ready in readies
    ]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        time.sleep(0.01)  # every process has loaded the interrupt and waits at the start line
    go.touch()
    return [(*p.communicate(timeout=120), p.returncode) for p in procs], actions


def assert_one_winner(outcomes: list[tuple[str, str, int]], actions: Path) -> None:
    """Exactly one process resumed and ran the action once; every other one saw a conflict."""
    codes = sorted(code for _, _, code in outcomes)
    assert codes == [0] + [3] * (len(outcomes) - 1), [err for _, err, _ in outcomes]
    assert actions.read_text() == "deleted the files\n"
    assert all("conflict:" in out for out, _, code in outcomes if code == 3)
