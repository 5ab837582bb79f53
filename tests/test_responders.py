"""Who may answer: ``interrupt(..., responders=[...])`` on every interrupt site, checked inside the one
create-once write of the answer. A refused answer is not stored (it does not bind: a later allowed answer
wins), the refusal is kept in the audit trail (outcome ``refused``), and the engine reads a thread with
refusals as before. The app door (a StateGraph's and an agent's own call) is tested here; the inbox, its
CLI and its page in ``tests/inbox/test_who_may_answer.py``."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl import Agent, ToolContext, tool
from statehitl.checkpoint import Checkpointer, FileCheckpointer, InterruptRecord, MemoryCheckpointer
from statehitl.checkpoint.codec import decode
from statehitl.checkpoint.refusals import is_refusal_key
from statehitl.checkpoint.storage import ABSENT
from statehitl.errors import (
    AlreadyAnsweredError,
    CheckpointCorruptError,
    InvalidRespondersError,
    InvalidResponseError,
    ResponderNotAllowedError,
)
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from statehitl.interrupt import Interrupt, InterruptRaised, InterruptScope
from statehitl.models import ScriptedModel
from statehitl.responders import describe, may_answer, responders_of

ALLOWED = ["ann", "group:finance"]


class State(BaseModel):
    decision: Any = None
    paid: int = 0


def refund_app(checkpointer: Checkpointer, responders: Any = ALLOWED, ran: list[str] | None = None) -> Any:
    """One node asks (who may answer: ``responders``), then pays: ``ran`` counts the payments."""

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        answer = ctx.interrupt("refund-ok", reason={"amount": 120}, responders=responders)
        if answer == "y" and ran is not None:
            ran.append(ctx.thread_id)
        return {"decision": answer, "paid": 120 if answer == "y" else 0}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=checkpointer)


def block(iid: str, response: Any, **extra: Any) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": iid, "response": response, **extra}}]


def keys(checkpointer: Checkpointer, thread: str) -> list[str]:
    return asyncio.run(checkpointer.storage.list(f"threads/{thread}/"))


# -- the list, where interrupt() is called ---------------------------------------------------------


@pytest.mark.parametrize(("given", "says"), [
    ("ann", "for one responder write responders=['ann']"),
    ({"ann"}, "must be a list"),
    ([], "would let nobody answer"),
    ([""], "non-empty name"),
    ([" ann"], "without surrounding spaces"),
    (["ann", 3], "holds 3"),
    (["group:"], "a group is written 'group:NAME'"),
])
def test_a_responders_list_that_cannot_work_is_refused_where_interrupt_is_called(given: Any, says: str) -> None:
    app = refund_app(MemoryCheckpointer(), responders=given)
    with pytest.raises(InvalidRespondersError, match=re.escape(says)) as refused:
        app.invoke({}, thread_id="t")
    assert isinstance(refused.value, ValueError)
    assert "interrupt 'refund-ok'" in str(refused.value)


def test_the_list_keeps_its_order_and_drops_repeats() -> None:
    assert responders_of("x", ("ann", "group:ops", "ann")) == ["ann", "group:ops"]
    assert responders_of("x", None) is None


def test_who_may_answer_names_and_groups() -> None:
    assert may_answer(None, None)
    assert may_answer(ALLOWED, "ann")
    assert may_answer(ALLOWED, "bob", ["finance"])
    assert may_answer(ALLOWED, "bob", ["group:finance"])  # a group given as written in the list is the same group
    assert not may_answer(ALLOWED, "bob", ["ops"])
    assert not may_answer(ALLOWED, None, ["finance"])  # nobody named vouches for no group
    assert not may_answer(ALLOWED, "Ann")  # names are compared exactly
    assert not may_answer(["group:finance"], "finance")  # a person is not the group of that name
    assert describe(["ann", "bob", "group:finance", "group:ops"]) == "ann, bob or a member of groups finance or ops"


def test_every_interrupt_site_takes_responders() -> None:
    scope = InterruptScope("node:1:n", {}, thread="t")
    with pytest.raises(InterruptRaised) as raised:
        scope.interrupt("a", responders=["ann"])
    assert raised.value.interrupts[0].responders == ["ann"]
    with pytest.raises(InvalidRespondersError):
        InterruptScope("node:1:n", {}, thread="t").interrupt("a", responders="ann")  # type: ignore[arg-type]

    class Ask(HookProvider):
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add_callback(BeforeToolCallEvent, self.ask)

        def ask(self, event: BeforeToolCallEvent) -> None:
            if event.tool_use["name"] == "pay":
                event.interrupt("hook-ok", reason="pay?", responders=["ann"])
                event.approve("approve-ok", responders=["group:finance"])

    @tool(context=True)
    def pay(tool_context: ToolContext, amount: int) -> str:
        """Pay.

        Args:
            amount: cents
        """
        tool_context.interrupt("tool-ok", reason=amount, responders=["bob"])
        return "paid"

    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "pay", "input": {"amount": 5}}}]}
    agent = Agent(model=ScriptedModel([call, "done"]), tools=[pay], hooks=[Ask()], callback_handler=None)
    [asked] = agent("pay").interrupts
    assert (asked.name, asked.responders, asked.source) == ("hook-ok", ["ann"], "hook")
    [asked] = agent(block(asked.id, "y", responder="ann")).interrupts
    assert (asked.name, asked.responders) == ("approve-ok", ["group:finance"])
    [asked] = agent(block(asked.id, {"type": "approve"}, responder="carol", groups=["finance"])).interrupts
    assert (asked.name, asked.responders, asked.source) == ("tool-ok", ["bob"], "tool")
    assert agent(block(asked.id, "y", responder="bob")).stop_reason == "end_turn"


# -- what is stored --------------------------------------------------------------------------------


def test_an_interrupt_without_responders_is_stored_as_before(tmp_path: Path) -> None:
    record = InterruptRecord(id="v2:abc", name="ok", reason={"x": 1})
    assert record.model_dump_json() == '{"id":"v2:abc","name":"ok","reason":{"x":1},"source":"node","node":""}'
    assert "responders" not in Interrupt("v2:abc", "ok").to_dict()
    checkpointer = FileCheckpointer(tmp_path)
    refund_app(checkpointer, responders=None).invoke({}, thread_id="t")
    [head] = keys(checkpointer, "t")  # the run's one record: the checkpoint that asked
    stored = decode("head", asyncio.run(checkpointer.storage.read(head))[0], None)  # type: ignore[index]
    assert stored["status"] == "interrupted"
    assert "responders" not in stored["interrupts"][0]
    entry = asyncio.run(checkpointer.thread_info("t"))
    assert entry is not None
    assert entry.interrupts[0].responders is None


def test_the_responders_are_stored_with_the_interrupt_and_in_the_index(tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(tmp_path)
    asked = refund_app(checkpointer).invoke({}, thread_id="t").interrupts[0]
    assert asked.responders == ALLOWED
    assert asked.to_dict()["responders"] == ALLOWED
    fresh = FileCheckpointer(tmp_path)  # another process's view: from the store alone
    entry = asyncio.run(fresh.thread_info("t"))
    assert entry is not None
    assert entry.interrupts[0].responders == ALLOWED
    assert refund_app(fresh).get_state("t").interrupts[0].responders == ALLOWED


# -- the app's own call -----------------------------------------------------------------------------


@pytest.mark.parametrize("make", [MemoryCheckpointer, "file"])
def test_a_responder_not_named_is_refused_binds_nothing_and_is_audited(make: Any, tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(tmp_path) if make == "file" else make()
    ran: list[str] = []
    app = refund_app(checkpointer, ran=ran)
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError) as refused:
        app.invoke(block(iid, "y", responder="mallory", comment="pay me"), thread_id="t")
    message = str(refused.value)
    assert "may be answered only by ann or a member of group finance" in message
    assert "mallory (in no group) may not" in message
    assert (refused.value.responder, refused.value.responders, refused.value.interrupt_id) == (
        "mallory", ("ann", "group:finance"), iid)
    assert ran == []
    assert not any(key.rsplit("/", 1)[-1].startswith("a.") for key in keys(checkpointer, "t"))  # no answer stored
    assert app.get_state("t").answers == {}
    [entry] = app.audit("t")
    assert (entry.outcome, entry.responder, entry.response, entry.comment, entry.via) == (
        "refused", "mallory", "y", "pay me", "app")
    assert (entry.name, entry.reason, entry.interrupt_id) == ("refund-ok", {"amount": 120}, iid)
    # it never bound: an allowed answer, a different one, still wins
    done = app.invoke(block(iid, "n", responder="ann"), thread_id="t")
    assert done.state.decision == "n"
    assert [(e.outcome, e.responder, e.response) for e in app.audit("t")] == [
        ("refused", "mallory", "y"), ("applied", "ann", "n")]
    assert app.history("t")[0].status == "completed"
    assert ran == []


def test_an_answer_that_names_nobody_is_refused() -> None:
    app = refund_app(MemoryCheckpointer())
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError, match="an answer that names no responder may not"):
        app.invoke(block(iid, "y"), thread_id="t")
    [entry] = app.audit("t")
    assert (entry.outcome, entry.responder) == ("refused", None)


def test_a_member_of_a_named_group_may_answer_and_is_audited_by_name() -> None:
    ran: list[str] = []
    app = refund_app(MemoryCheckpointer(), ran=ran)
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError, match=r"carol \(groups: ops\) may not"):
        app.invoke(block(iid, "y", responder="carol", groups=["ops"]), thread_id="t")
    done = app.invoke(block(iid, "y", responder="carol", groups=["ops", "finance"]), thread_id="t")
    assert done.state.paid == 120
    assert ran == ["t"]
    assert [(e.outcome, e.responder) for e in app.audit("t")] == [("refused", "carol"), ("applied", "carol")]


def test_groups_in_a_block_must_be_a_list_of_names() -> None:
    app = refund_app(MemoryCheckpointer())
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(InvalidResponseError, match="it must be a list of group names"):
        app.invoke(block(iid, "y", responder="carol", groups="finance"), thread_id="t")
    assert app.audit("t") == []  # a malformed call is refused before any write, not audited as a refusal


def test_a_refused_responder_learns_nothing_of_the_answer_given_first() -> None:
    app = refund_app(MemoryCheckpointer())
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError):
        app.invoke(block(iid, "n", responder="mallory"), thread_id="t")
    app.invoke(block(iid, "n", responder="ann"), thread_id="t")
    fresh = refund_app(MemoryCheckpointer())
    iid = fresh.invoke({}, thread_id="u").interrupts[0].id
    asyncio.run(_store_only(fresh, "u", iid, "n", "ann"))
    for response in ("n", "y"):  # neither "the same answer" nor "already answered by ann, with 'n'"
        with pytest.raises(ResponderNotAllowedError) as refused:
            fresh.invoke(block(iid, response, responder="mallory"), thread_id="u")
        assert "ann" not in str(refused.value).split("may be answered only by")[1].split(";")[1]
    with pytest.raises(AlreadyAnsweredError):  # someone allowed is told who answered first
        fresh.invoke(block(iid, "y", responder="bob", groups=["finance"]), thread_id="u")


async def _store_only(app: Any, thread: str, iid: str, response: Any, responder: str) -> None:
    """Store an answer as the inbox does (without applying it)."""
    from statehitl.inbox.answers import answer_waiting

    await answer_waiting(app.checkpointer, thread, iid, response, responder=responder)


def test_one_refused_answer_in_a_call_binds_none_of_the_call() -> None:
    class Two(BaseModel):
        a: Any = None
        b: Any = None

    def both(state: Two, ctx: NodeContext) -> dict[str, Any]:
        return {"a": ctx.interrupt("a", responders=["ann"]), "b": ctx.interrupt("b", responders=["bob"])}

    def ask_a(state: Two, ctx: NodeContext) -> dict[str, Any]:
        return {"a": ctx.interrupt("a")}

    def ask_b(state: Two, ctx: NodeContext) -> dict[str, Any]:
        return {"b": ctx.interrupt("b", responders=["bob"])}

    g = StateGraph(Two)
    g.add_node("ask_a", ask_a)
    g.add_node("ask_b", ask_b)
    g.add_edge(START, "ask_a")
    g.add_edge(START, "ask_b")
    g.add_edge("ask_a", END)
    g.add_edge("ask_b", END)
    app = g.compile(checkpointer=MemoryCheckpointer())
    asked = {i.name: i.id for i in app.invoke({}, thread_id="t").interrupts}
    answers = [*block(asked["a"], 1, responder="ann"), *block(asked["b"], 2, responder="ann")]
    with pytest.raises(ResponderNotAllowedError):
        app.invoke(answers, thread_id="t")
    assert app.get_state("t").answers == {}  # ann's allowed answer to "a" was not stored either
    done = app.invoke([*block(asked["a"], 1, responder="ann"), *block(asked["b"], 2, responder="bob")],
                      thread_id="t")
    assert (done.state.a, done.state.b) == (1, 2)


def test_an_agent_tool_and_its_hook_refuse_a_responder_not_named() -> None:
    paid: list[int] = []

    @tool(context=True)
    def pay(tool_context: ToolContext, amount: int) -> str:
        """Pay.

        Args:
            amount: cents
        """
        if tool_context.interrupt("tool-ok", reason=amount, responders=["bob"]) == "y":
            paid.append(amount)
        return "paid"

    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "pay", "input": {"amount": 5}}}]}
    agent = Agent(model=ScriptedModel([call, "done"]), tools=[pay], callback_handler=None)
    [asked] = agent("pay").interrupts
    with pytest.raises(ResponderNotAllowedError, match="may be answered only by bob"):
        agent(block(asked.id, "y", responder="ann"))
    assert paid == []
    result = agent(block(asked.id, "y", responder="bob"))
    assert result.stop_reason == "end_turn"
    assert paid == [5]
    assert [(e.outcome, e.responder, e.name) for e in agent.audit()] == [("refused", "ann", "tool-ok"),
                                                                         ("applied", "bob", "tool-ok")]


# -- the engine reads around refusals ---------------------------------------------------------------


def test_refusals_are_not_checkpoints_survive_prune_and_go_with_the_thread(tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(tmp_path)
    app = refund_app(checkpointer)
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    for who in ("mallory", "eve"):
        with pytest.raises(ResponderNotAllowedError):
            app.invoke(block(iid, "y", responder=who), thread_id="t")
    assert sum(is_refusal_key(k) for k in keys(checkpointer, "t")) == 2
    fresh = FileCheckpointer(tmp_path)  # a cold read: the bulk read meets the refusals, and leaves them out
    assert asyncio.run(fresh.count_checkpoints("t")) == 1  # the run's one record, which asked
    assert refund_app(fresh).get_state("t").interrupts[0].id == iid
    refund_app(fresh).invoke(block(iid, "y", responder="ann"), thread_id="t")
    # the checkpoint that asked, and the claim that answered it
    assert asyncio.run(fresh.prune("t", 1)) == 2
    assert sum(is_refusal_key(k) for k in keys(checkpointer, "t")) == 2
    trail = asyncio.run(FileCheckpointer(tmp_path).audit("t"))
    assert [(e.outcome, e.responder) for e in trail] == [("refused", "mallory"), ("refused", "eve"), ("applied", "ann")]
    assert all(e.reason == {"amount": 120} for e in trail)  # the refusals hold what was asked: its checkpoint is gone
    asyncio.run(fresh.delete_thread("t"))
    assert keys(fresh, "t") == []


def test_a_refusal_copied_to_another_interrupt_is_refused_when_read(tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(tmp_path, signing_key=b"k" * 32)
    app = refund_app(checkpointer)
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError):
        app.invoke(block(iid, "y", responder="mallory"), thread_id="t")
    [key] = [k for k in keys(checkpointer, "t") if is_refusal_key(k)]
    data = asyncio.run(checkpointer.storage.read(key))[0]  # type: ignore[index]
    moved = key.replace(iid, "v2:000000000000000000000000")
    asyncio.run(checkpointer.storage.write(moved, data, expect=ABSENT))
    with pytest.raises(CheckpointCorruptError, match="fails its signature check"):
        asyncio.run(checkpointer.audit("t"))
    unsigned = FileCheckpointer(tmp_path / "plain")
    plain = refund_app(unsigned)
    iid = plain.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError):
        plain.invoke(block(iid, "y", responder="mallory"), thread_id="t")
    [key] = [k for k in keys(unsigned, "t") if is_refusal_key(k)]
    data = asyncio.run(unsigned.storage.read(key))[0]  # type: ignore[index]
    asyncio.run(unsigned.storage.write(key.replace(iid, "v2:000000000000000000000000"), data, expect=ABSENT))
    with pytest.raises(CheckpointCorruptError, match="not the one its key names"):
        asyncio.run(unsigned.audit("t"))


def test_the_cli_audit_shows_who_was_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from statehitl.cli import main

    monkeypatch.setenv("NO_COLOR", "1")
    app = refund_app(FileCheckpointer(tmp_path))
    iid = app.invoke({}, thread_id="t").interrupts[0].id
    with pytest.raises(ResponderNotAllowedError):
        app.invoke(block(iid, "y", responder="mallory"), thread_id="t")
    app.invoke(block(iid, "n", responder="ann"), thread_id="t")
    capsys.readouterr()
    assert main(["threads", "audit", "t", "--store", f"file://{tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert "refused  refund-ok  by mallory (app), who may not answer it" in out
    assert "applied  refund-ok  by ann" in out
    assert main(["threads", "audit", "t", "--json", "--store", f"file://{tmp_path}"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["outcome"], e["responder"]) for e in lines] == [("refused", "mallory"), ("applied", "ann")]
