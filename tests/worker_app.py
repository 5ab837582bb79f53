"""The apps the worker tests resume: StateGraphs that ask before they act, and an agent that does.

``build(thread_id)`` is the ``--app worker_app:build`` registration (store from
``STATEHITL_WORKER_TEST_STORE``). Every action goes to a ledger keyed by the node's idempotency key,
as a service that honours idempotency keys would keep it (``Ledger``): each call is an attempt, and
only the first attempt of a key is applied, so a test counts attempts (how often the action ran) and
applications (how often it took effect) across processes. With ``STATEHITL_WORKER_TEST_HOLD`` set
to a directory, the action, once applied, says so (``<thread>.started``) and waits there until the
test lets it go (``<thread>.go``), which is where a test kills the worker running it (its pid is in the
``.started`` file).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel

from statehitl import Agent, tool
from statehitl.checkpoint.engine import Checkpointer
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.models.base import Model
from statehitl.models.scripted import ScriptedModel
from statehitl.session import SessionManager
from statehitl.types.tools import ToolContext

STORE_ENV = "STATEHITL_WORKER_TEST_STORE"
LEDGER_ENV = "STATEHITL_WORKER_TEST_LEDGER"
HOLD_ENV = "STATEHITL_WORKER_TEST_HOLD"
APPROVAL = "ship-approval"


class Ledger:
    """A directory standing for an outside service that honours idempotency keys."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def apply(self, key: str, what: str) -> bool:
        """Record an attempt of ``key``; apply it if it is the first. True if this call applied it."""
        (self.root / "applied").mkdir(parents=True, exist_ok=True)
        with open(self.root / "attempts", "a", encoding="utf-8") as attempts:
            attempts.write(f"{key} {what}\n")
        try:
            fd = os.open(self.root / "applied" / key, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as applied:
            applied.write(what)
        return True

    def attempts(self) -> list[str]:
        path = self.root / "attempts"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def applied(self) -> dict[str, str]:
        folder = self.root / "applied"
        return {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()} if folder.exists() else {}


class Order(BaseModel):
    item: str
    expires_in: float | None = None
    on_expire: Any = "expired"
    decision: Any = None
    shipped: bool = False


def ask(state: Order, ctx: NodeContext) -> dict[str, Any]:
    options = {"expires_in": state.expires_in, "on_expire": state.on_expire} if state.expires_in else {}
    return {"decision": ctx.interrupt(APPROVAL, reason={"item": state.item}, **options)}


def ship(state: Order, ctx: NodeContext) -> dict[str, Any]:
    Ledger(os.environ[LEDGER_ENV]).apply(ctx.idempotency_key, f"{ctx.thread_id} ship {state.decision}")
    hold = os.environ.get(HOLD_ENV)
    if hold:
        Path(hold, f"{ctx.thread_id}.started").write_text(str(os.getpid()))  # who to kill
        while not Path(hold, f"{ctx.thread_id}.go").exists():
            time.sleep(0.01)
    return {"shipped": True}


def graph(name: str = "ShipGraph") -> StateGraph[Order]:
    g = StateGraph(Order, name=name)
    g.add_node("ask", ask)
    g.add_node("ship", ship)
    g.add_edge(START, "ask")
    g.add_edge("ask", "ship")
    g.add_edge("ship", END)
    return g


_COMPILED: dict[tuple[str, str], Any] = {}


def _compiled(name: str) -> Any:
    store = os.environ[STORE_ENV]
    if (name, store) not in _COMPILED:
        _COMPILED[name, store] = graph(name).compile(checkpointer=Checkpointer.from_url(store))
    return _COMPILED[name, store]


def build(thread_id: str) -> Any:
    """The registration: one compiled graph for every thread, on the store the test names."""
    return _compiled("ShipGraph")


def build_refunds(thread_id: str) -> Any:
    """A second app, of another machine (``RefundGraph``), for routing by machine name."""
    return _compiled("RefundGraph")


@tool(context=True)
def delete_files(tool_context: ToolContext, path: str) -> str:
    """Delete files under a path.

    Args:
        path: what to delete
    """
    answer = tool_context.interrupt("delete-approval", reason={"path": path})
    ledger = Ledger(os.environ[LEDGER_ENV])
    ledger.apply(tool_context.idempotency_key, f"{tool_context.agent.thread_id} delete {answer}")
    return f"deleted {path}" if answer == "y" else "not deleted"


class AskThenFinish(Model):
    """Asks for the tool on a new prompt and finishes once its result is in: the same in every process."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {}

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncIterator[Any]:
        if any("toolResult" in block for block in messages[-1]["content"]):
            reply: Any = "done"
        else:
            reply = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "delete_files",
                                                                  "input": {"path": "/tmp/x"}}}]}
        async for event in ScriptedModel([reply]).stream(messages, tool_specs, system_prompt):
            yield event

    def update_config(self, **config: Any) -> None:
        self.config.update(config)

    def get_config(self) -> dict[str, Any]:
        return self.config


def build_agent(thread_id: str) -> Agent:
    """The registration for agents: one agent per thread, on the session that thread is."""
    session = SessionManager.from_url(os.environ[STORE_ENV], session_id=thread_id)
    return Agent(model=AskThenFinish(), tools=[delete_files], session_manager=session, callback_handler=None)


MEET_ENV = "STATEHITL_WORKER_TEST_MEET"
MEET_COUNT_ENV = "STATEHITL_WORKER_TEST_MEET_COUNT"
FLAKY_ENV = "STATEHITL_WORKER_TEST_FLAKY"


def meet(kind: str, name: str) -> None:
    """Wait until ``$STATEHITL_WORKER_TEST_MEET_COUNT`` callers of ``kind`` have arrived, each a file in
    ``$STATEHITL_WORKER_TEST_MEET/<kind>``: they can all arrive only if they run at the same time. One left
    waiting alone for 20 s says so (``alone.<kind>.<name>``) and raises."""
    root = Path(os.environ[MEET_ENV])
    folder = root / kind
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).touch()
    deadline = time.monotonic() + 20
    while len(list(folder.iterdir())) < int(os.environ[MEET_COUNT_ENV]):
        if time.monotonic() > deadline:
            (root / f"alone.{kind}.{name}").touch()
            raise RuntimeError(f"{kind} {name} waited alone: nothing else ran meanwhile")
        time.sleep(0.01)


def act_together(state: Order, ctx: NodeContext) -> dict[str, Any]:
    """A slow sync action (a payment API taking its time): it returns once the other threads' are running too."""
    meet("node", ctx.thread_id)
    Ledger(os.environ[LEDGER_ENV]).apply(ctx.idempotency_key, f"{ctx.thread_id} act {state.decision}")
    return {"shipped": True}


def meet_graph() -> Any:
    """ask -> act_together: the app whose actions meet."""
    store = os.environ[STORE_ENV]
    if ("MeetGraph", store) not in _COMPILED:
        g = StateGraph(Order, name="MeetGraph")
        g.add_node("ask", ask)
        g.add_node("act", act_together)
        g.add_edge(START, "ask")
        g.add_edge("ask", "act")
        g.add_edge("act", END)
        _COMPILED["MeetGraph", store] = g.compile(checkpointer=Checkpointer.from_url(store))
    return _COMPILED["MeetGraph", store]


def build_meet(thread_id: str) -> Any:
    """A slow ``build`` (it opens a connection, say): it returns once the other threads' builds are running too."""
    meet("build", thread_id)
    return meet_graph()


def build_flaky(thread_id: str) -> Any:
    """``build`` failing on each thread's first call (a database restarting), counted across processes."""
    from statehitl.testing.builds import FailingBuild

    return FailingBuild(build, failures=1, state_dir=os.environ[FLAKY_ENV])(thread_id)


def _upper(text: str) -> str:
    if text != text.upper():
        raise ValueError("must be upper case")
    return text


def ask_code(state: Order, ctx: NodeContext) -> dict[str, Any]:
    """A typed interrupt whose type carries a validator no JSON schema states."""
    return {"decision": ctx.interrupt("code", reason={"item": state.item},
                                      response_type=Annotated[str, AfterValidator(_upper)])}


def build_code(thread_id: str) -> Any:
    """ask_code -> ship."""
    store = os.environ[STORE_ENV]
    if ("CodeGraph", store) not in _COMPILED:
        g = StateGraph(Order, name="CodeGraph")
        g.add_node("ask", ask_code)
        g.add_node("ship", ship)
        g.add_edge(START, "ask")
        g.add_edge("ask", "ship")
        g.add_edge("ship", END)
        _COMPILED["CodeGraph", store] = g.compile(checkpointer=Checkpointer.from_url(store))
    return _COMPILED["CodeGraph", store]
