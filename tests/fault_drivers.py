"""What the fault tests drive: a refund approved by a human, as a StateGraph and as an agent, an
outside world that counts the refund's attempts by idempotency key, and the operator who takes a thread
from nothing to its end through whatever fails."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl import Agent, tool
from statehitl.checkpoint import Checkpointer, Storage
from statehitl.errors import (
    ActionOutcomeUnknownError,
    CheckpointConflict,
    NotInterruptedError,
    StorageError,
)
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel
from statehitl.status import Status
from statehitl.types.tools import ToolContext


class Ledger:
    """The outside world: counts every attempt of the action, applies each idempotency key once."""

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()

    def apply(self, key: str) -> None:
        self.attempts[key] += 1

    @property
    def effects(self) -> int:
        return len(self.attempts)


class Refund(BaseModel):
    approved: bool = False
    paid: bool = False


def refund_graph(checkpointer: Checkpointer, ledger: Ledger):
    def review(state: Refund, ctx: NodeContext) -> dict[str, Any]:
        return {"approved": ctx.interrupt("approve", reason={"amount": 40}) == "y"}

    def pay(state: Refund, ctx: NodeContext) -> dict[str, Any]:
        if state.approved:
            ledger.apply(ctx.idempotency_key)
        return {"paid": state.approved}

    g = StateGraph(Refund)
    g.add_node("review", review)
    g.add_node("pay", pay)
    g.add_edge(START, "review")
    g.add_edge("review", "pay")
    g.add_edge("pay", END)
    return g.compile(checkpointer=checkpointer)


class GraphDriver:
    """Drives the refund graph: each call builds a new app, as a server does per request."""

    def __init__(self, storage: Storage, ledger: Ledger, thread: str = "t") -> None:
        self.storage, self.ledger, self.thread = storage, ledger, thread

    def app(self):
        return refund_graph(Checkpointer(self.storage), self.ledger)

    def status(self) -> tuple[Status | None, list[Any]]:
        state = self.app().get_state(self.thread)
        return (None, []) if state is None else (state.status, state.interrupts)

    def start(self) -> None:
        self.app().invoke({}, thread_id=self.thread)

    def go_on(self) -> None:
        self.app().invoke(None, thread_id=self.thread)

    def answer(self, interrupts: list[Any]) -> None:
        self.app().invoke([{"interruptResponse": {"interruptId": i.id, "response": "y", "responder": "ann"}}
                           for i in interrupts], thread_id=self.thread)

    def audit(self) -> list[Any]:
        return self.app().audit(self.thread)


@tool(context=True)
def refund(tool_context: ToolContext, amount: int) -> str:
    """Refund an amount.

    Args:
        amount: in euros
    """
    tool_context.invocation_state["ledger"].apply(tool_context.idempotency_key)
    return f"refunded {amount}"


class RefundModel(ScriptedModel):
    """Asks for the refund until the conversation holds its result, then says it is done: the same model
    in every request, whatever the earlier requests of the thread were."""

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncIterator[Any]:
        self.calls = int(any("toolResult" in block for m in messages for block in m["content"]))
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event


class AgentDriver:
    """Drives an agent whose ``refund`` tool waits on an approval hook, on a session per request."""

    SCRIPT = [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "refund",
                                                             "input": {"amount": 40}}}]}, "done"]

    def __init__(self, storage: Storage, ledger: Ledger, thread: str = "t") -> None:
        self.storage, self.ledger, self.thread = storage, ledger, thread

    def agent(self) -> Agent:
        from statehitl.session import SessionManager

        def approve(event: BeforeToolCallEvent) -> None:
            if event.interrupt("approve", reason=event.tool_use["input"]) != "y":
                event.cancel_tool = "denied"

        agent = Agent(model=RefundModel(self.SCRIPT), tools=[refund], callback_handler=None,
                      session_manager=SessionManager(session_id=self.thread, checkpointer=Checkpointer(self.storage)))
        agent.add_hook(BeforeToolCallEvent, approve)
        return agent

    def status(self) -> tuple[Status | None, list[Any]]:
        record = asyncio.run(Checkpointer(self.storage).latest(self.thread))
        if record is None:
            return None, []
        return Status(record.status), [i.to_interrupt() for i in record.interrupts]

    def start(self) -> None:
        self.agent()("refund 40", ledger=self.ledger)

    def go_on(self) -> None:
        self.agent()(ledger=self.ledger)

    def answer(self, interrupts: list[Any]) -> None:
        self.agent()([{"interruptResponse": {"interruptId": i.id, "response": "y", "responder": "ann"}}
                      for i in interrupts], ledger=self.ledger)

    def audit(self) -> list[Any]:
        return self.agent().audit()


def drive(driver: Any, checkpointer: Checkpointer, heal: Callable[[], None], case: str = "") -> list[str]:
    """Take the thread from nothing to its end as an operator would, calling ``heal`` (the store is back)
    after a storage error; returns what happened, in order."""
    story: list[str] = []
    for _ in range(12):
        try:
            status, interrupts = driver.status()
            if status is None:
                story.append("start")
                driver.start()
            elif status == Status.INTERRUPTED:
                story.append("answer")
                driver.answer(interrupts)
            elif status == Status.COMPLETED:
                return story
            else:
                story.append(f"continue from {status}")
                driver.go_on()
        except ActionOutcomeUnknownError as unknown:
            # The operator looks at the ledger by the action's key: if the refund went out there, a retry
            # is harmless (the key makes it the same refund); either way the go-ahead is theirs to give.
            story.append(f"outcome unknown ({unknown.thread_id}): retry")
            asyncio.run(checkpointer.retry_unknown(driver.thread, responder="ops", comment="ledger checked"))
        except NotInterruptedError:
            story.append("already moved on")  # an answer whose run was recorded although its call failed
        except CheckpointConflict as conflict:  # nothing else runs here: no conflict is a true one
            pytest.fail(f"{case}: a storage fault was reported as another process's doing: {conflict} ({story})")
        except StorageError as failed:
            story.append(f"failed: {failed.code}")
            heal()
    pytest.fail(f"{case}: the thread did not finish: {story}")




def check_outcome(driver: Any, story: list[str], case: str) -> int:
    """Assert what every fault case must end with; returns how many go-aheads to retry it took."""
    ledger: Ledger = driver.ledger
    retries = story.count(f"outcome unknown ({driver.thread}): retry")
    assert ledger.effects == 1, case
    assert sum(ledger.attempts.values()) <= 1 + retries, case  # never run again without a go-ahead
    trail = driver.audit()
    applied = [e for e in trail if e.outcome in ("applied", "edited", "rejected")]
    assert [(e.responder, e.response) for e in applied] == [("ann", "y")], case
    assert [e.responder for e in trail if e.outcome == "retried"] == ["ops"] * retries, case
    unknown = [e for e in trail if e.outcome == "unknown"]
    assert len(unknown) <= retries, case
    assert all(e.responder == "ann" for e in unknown), case
    return retries
