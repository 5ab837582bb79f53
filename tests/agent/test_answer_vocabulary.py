"""The answer vocabulary on an agent's tool calls, approvals bound to the call (digest), and the audit
trail of who answered: ``BeforeToolCallEvent.approve`` with ``Approve``, ``Reject``, ``Edit``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import uses

from replies import reply
from statehitl import Agent, tool
from statehitl.action_digest import tool_call_digest
from statehitl.answers import Approve, Edit, Reject
from statehitl.errors import DigestMismatchError, ResponseValidationError
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager
from statehitl.types.tools import ToolContext


class Approval(HookProvider):
    """The seed's approval hook, with the vocabulary: every call of ``transfer`` waits on a human."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeToolCallEvent, self.ask)

    def ask(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "transfer":
            self.answers.append(event.approve("approval", reason={"input": event.tool_use["input"]}))


def build(tmp_path: Path, replies: list[Any], calls: list[Any], answers: list[Any],
          hooks: list[Any] | None = None) -> Agent:
    @tool
    def transfer(amount: int, to: str) -> str:
        """Move money.

        Args:
            amount: how much, in cents
            to: the account
        """
        calls.append((amount, to))
        return f"sent {amount} to {to}"

    return Agent(model=ScriptedModel(replies), tools=[transfer], callback_handler=None,
                 hooks=[*(hooks or []), Approval(answers)],
                 session_manager=FileSessionManager("s", storage_dir=str(tmp_path)))


def store_bytes(directory: Path) -> dict[str, bytes]:
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                found[os.path.relpath(os.path.join(root, name), directory)] = f.read()
    return found



CALL = {"amount": 500, "to": "acme"}


def result_text(agent: Agent) -> str:
    return str(agent.messages[-2]["content"][0]["toolResult"]["content"][0]["text"])


def test_approve_runs_the_call_and_the_interrupt_carries_its_digest_and_form(tmp_path):
    calls: list[Any] = []
    answers: list[Any] = []
    agent = build(tmp_path, [uses(("t1", "transfer", CALL)), "done"], calls, answers)
    first = agent("pay acme")
    waiting = first.interrupts[0]
    assert waiting.digest == tool_call_digest("transfer", CALL)
    assert agent.interrupts[0].digest == waiting.digest  # read back from the thread
    edit_input = waiting.response_schema["$defs"]["Edit"]["properties"]["input"]
    assert edit_input["required"] == ["amount", "to"]  # the form knows the tool's input

    result = agent(reply(waiting, {"type": "approve"}, responder="ada", comment="invoice 42",
                         digest=waiting.digest))
    assert str(result) == "done"
    assert calls == [(500, "acme")]
    assert answers == [Approve()]
    [entry] = agent.audit()
    assert (entry.name, entry.responder, entry.comment, entry.outcome, entry.digest) == (
        "approval", "ada", "invoice 42", "applied", waiting.digest)
    assert entry.reason == {"input": CALL}
    assert entry.response == {"type": "approve"}
    assert entry.interrupt_id == waiting.id
    assert entry.source == "hook"
    assert entry.node == "transfer"


def test_reject_cancels_the_call_with_the_message(tmp_path):
    calls: list[Any] = []
    answers: list[Any] = []
    agent = build(tmp_path, [uses(("t1", "transfer", CALL)), "ok, not sent"], calls, answers)
    waiting = agent("pay acme").interrupts[0]
    agent(reply(waiting, {"type": "reject", "message": "acme is not a supplier"}, responder="bob"))
    assert calls == []
    assert answers == [Reject(message="acme is not a supplier")]
    assert result_text(agent) == "acme is not a supplier"
    assert [(e.outcome, e.responder) for e in agent.audit()] == [("rejected", "bob")]


def test_edit_runs_the_call_with_the_new_input(tmp_path):
    calls: list[Any] = []
    answers: list[Any] = []
    agent = build(tmp_path, [uses(("t1", "transfer", CALL)), "sent less"], calls, answers)
    waiting = agent("pay acme").interrupts[0]
    agent(reply(waiting, {"type": "edit", "input": {"amount": 200, "to": "acme"}}))
    assert calls == [(200, "acme")]
    assert answers == [Edit(input={"amount": 200, "to": "acme"})]
    assert result_text(agent) == "sent 200 to acme"
    assert [e.outcome for e in agent.audit()] == ["edited"]


def test_edit_that_does_not_fit_the_tool_is_refused_with_the_store_unchanged(tmp_path):
    calls: list[Any] = []
    agent = build(tmp_path, [uses(("t1", "transfer", CALL)), "sent"], calls, [])
    waiting = agent("pay acme").interrupts[0]
    before = store_bytes(tmp_path)
    with pytest.raises(ResponseValidationError, match=r"at \$\.input\.amount: expected integer, got 'lots'"):
        agent(reply(waiting, {"type": "edit", "input": {"amount": "lots", "to": "acme"}}))
    with pytest.raises(ResponseValidationError, match=r"missing required field 'to'"):
        agent(reply(waiting, {"type": "edit", "input": {"amount": 1}}))
    with pytest.raises(ResponseValidationError, match=r"expected one of 'approve', 'edit', 'reject', got 'maybe'"):
        agent(reply(waiting, {"type": "maybe"}))
    assert store_bytes(tmp_path) == before
    assert calls == []
    agent(reply(waiting, {"type": "edit", "input": {"amount": 1, "to": "acme"}}))  # corrected: applied at once
    assert calls == [(1, "acme")]


def test_an_answer_quoting_another_calls_digest_is_refused_with_the_store_unchanged(tmp_path):
    calls: list[Any] = []
    agent = build(tmp_path, [uses(("t1", "transfer", CALL)), "sent"], calls, [])
    waiting = agent("pay acme").interrupts[0]
    before = store_bytes(tmp_path)
    shown = tool_call_digest("transfer", {"amount": 5, "to": "acme"})  # what a stale UI showed
    with pytest.raises(DigestMismatchError, match=rf"was given for tool call {shown}, but the call waiting is "
                                                  rf"{waiting.digest}"):
        agent(reply(waiting, {"type": "approve"}, digest=shown))
    assert store_bytes(tmp_path) == before
    assert calls == []
    assert agent.audit() == []
    agent(reply(waiting, {"type": "approve"}, digest=waiting.digest))
    assert calls == [(500, "acme")]


def test_a_call_whose_input_changed_since_it_was_shown_is_not_run_on_the_old_approval(tmp_path):
    """A hook before the approval fills in a live quote: when the quote moved between the question and the
    answer, the call that would run is not the one approved. The resume is refused on re-run, before the
    tool runs or any checkpoint is written; answering the call as it is now goes through at once."""
    quote = {"amount": 500}

    class Quote(HookProvider):
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add_callback(BeforeToolCallEvent, self.fill)

        def fill(self, event: BeforeToolCallEvent) -> None:
            event.tool_use = {**event.tool_use, "input": {**event.tool_use["input"], "amount": quote["amount"]}}

    calls: list[Any] = []
    agent = build(tmp_path, [uses(("t1", "transfer", {"to": "acme"})), "sent"], calls, [], hooks=[Quote()])
    waiting = agent("pay acme").interrupts[0]
    assert waiting.digest == tool_call_digest("transfer", CALL)
    storage = agent.checkpointer.storage
    keys = run(storage.list("threads/"))
    stored = {k: run(storage.read(k)) for k in keys}
    quote["amount"] = 900
    now = tool_call_digest("transfer", {"amount": 900, "to": "acme"})
    with pytest.raises(DigestMismatchError, match=rf"was given for tool call {waiting.digest}, but the call that "
                                                  rf"would run now is {now}"):
        agent(reply(waiting, {"type": "approve"}, responder="ada"))
    assert calls == []
    assert [(e.outcome, e.responder) for e in agent.audit()] == [("refused", "ada")]  # withdrawn, and kept as such
    assert {k: run(storage.read(k)) for k in keys} == stored  # every checkpoint as it was, byte for byte
    assert [i.id for i in agent.interrupts] == [waiting.id]
    quote["amount"] = 500  # the quote is back to what was approved: the approval applies
    agent(reply(waiting, {"type": "approve"}, responder="ada"))
    assert calls == [(500, "acme")]
    assert [(e.outcome, e.responder) for e in agent.audit()] == [("refused", "ada"), ("applied", "ada")]


def test_a_tool_that_asks_from_inside_binds_its_interrupt_to_the_call(tmp_path):
    seen: list[Any] = []

    @tool(context=True)
    def ship(tool_context: ToolContext, box: str) -> str:
        """Ship a box.

        Args:
            box: which
        """
        seen.append(tool_context.interrupt("carrier", reason=box, response_type=str))
        return "shipped"

    agent = Agent(model=ScriptedModel([uses(("t1", "ship", {"box": "b1"})), "ok"]), tools=[ship],
                  callback_handler=None)
    waiting = agent("ship").interrupts[0]
    assert waiting.digest == tool_call_digest("ship", {"box": "b1"})
    assert waiting.response_schema == {"type": "string"}
    with pytest.raises(ResponseValidationError, match="expected string, got 3"):
        agent(reply(waiting, 3))
    agent(reply(waiting, "dhl", responder="cy"))
    assert seen == ["dhl"]
    assert [(e.response, e.responder, e.source, e.digest) for e in agent.audit()] == [
        ("dhl", "cy", "tool", waiting.digest)]


def run(awaitable: Any) -> Any:
    import asyncio

    return asyncio.run(awaitable)
