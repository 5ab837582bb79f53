"""The application the inbox tests resume: a StateGraph and an agent that ask before they act.

``build(thread_id)`` is the ``--app inbox_app:build`` registration the inbox calls; the store comes from
``STATEHITL_INBOX_TEST_STORE``. Every action appends a line to the file ``STATEHITL_INBOX_TEST_LOG``,
so a test counts how many times it really ran, across processes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from statehitl import Agent, tool
from statehitl.checkpoint.engine import Checkpointer
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.models.base import Model
from statehitl.models.scripted import ScriptedModel
from statehitl.session import SessionManager
from statehitl.types.tools import ToolContext

STORE_ENV = "STATEHITL_INBOX_TEST_STORE"
LOG_ENV = "STATEHITL_INBOX_TEST_LOG"
APPROVAL = "ship-approval"


class Order(BaseModel):
    item: str
    reason: Any = None
    expires_in: float | None = None
    on_expire: Any = None
    choice: bool = False
    """Ask with ``response_type=Literal["approve", "reject"]``: the page offers the two as choices."""
    responders: list[str] | None = None
    """Who may answer (``responders=``); None: anyone."""
    decision: Any = None
    shipped: bool = False


def actions(log: Path) -> list[str]:
    """The actions that really ran, one per line of the action log (``action_log`` in conftest)."""
    return log.read_text().splitlines()


def _log(line: str) -> None:
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
        log.write(line + "\n")


def ask(state: Order, ctx: NodeContext) -> dict[str, Any]:
    reason = state.reason if state.reason is not None else {"question": f"Ship {state.item}?"}
    options: dict[str, Any] = {}
    if state.expires_in is not None:
        options = {"expires_in": state.expires_in, "on_expire": state.on_expire}
    if state.choice:
        options["response_type"] = Literal["approve", "reject"]
    if state.responders is not None:
        options["responders"] = state.responders
    return {"decision": ctx.interrupt(APPROVAL, reason=reason, **options)}


def ship(state: Order, ctx: NodeContext) -> dict[str, Any]:
    _log(f"{ctx.thread_id} ship {state.item} {state.decision!r}")
    return {"shipped": True}


def graph() -> StateGraph[Order]:
    g = StateGraph(Order)
    g.add_node("ask", ask)
    g.add_node("ship", ship)
    g.add_edge(START, "ask")
    g.add_edge("ask", "ship")
    g.add_edge("ship", END)
    return g


def build(thread_id: str) -> Any:
    """The registration: the same compiled graph for every thread, on the store the test names."""
    return graph().compile(checkpointer=Checkpointer.from_url(os.environ[STORE_ENV]))


@tool(context=True)
def delete_files(tool_context: ToolContext, path: str) -> str:
    """Delete files under a path.

    Args:
        path: what to delete
    """
    answer = tool_context.interrupt("delete-approval", reason={"path": path}, expires_in=3600,
                                    on_expire="n")
    _log(f"{tool_context.agent.thread_id} delete {path} {answer!r}")
    return f"deleted {path}" if answer == "y" else "not deleted"


class AskThenFinish(Model):
    """Asks for the tool on a new prompt and finishes once its result is in: the same in every process."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {}

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncIterator[Any]:
        last = messages[-1]["content"]
        if any("toolResult" in block for block in last):
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


def build_orchestrator(thread_id: str) -> Any:
    """The registration for a multi-agent Graph: one graph per thread, on the session that thread is in
    (a graph's thread is ``<session>@<graph id>``)."""
    from statehitl.multiagent import GraphBuilder

    builder = GraphBuilder()
    builder.add_node(Agent(model=AskThenFinish(), tools=[delete_files], name="cleaner", callback_handler=None),
                     "cleaner")
    builder.set_entry_point("cleaner")
    session = thread_id.split("@", 1)[0]
    builder.set_session_manager(SessionManager.from_url(os.environ[STORE_ENV], session_id=session))
    return builder.build()
