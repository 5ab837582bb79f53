"""What ``HumanInTheLoop`` is on statehitl beyond Strands: its question is a durable interrupt, so the answer
is stored once and audited, comes from any door (the app's call, the inbox, a sweep) to an agent rebuilt
on the session, may be typed (approve, edit the arguments, reject with a reason) and is bound to the
call's digest; a wrong answer is refused with the store left exactly as it was."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl import Agent, tool
from statehitl import inbox as inbox_api
from statehitl.action_digest import tool_call_digest
from statehitl.answers import Edit, Reject
from statehitl.errors import (
    DigestMismatchError,
    InvalidExpiryError,
    InvalidRespondersError,
    ResponderNotAllowedError,
    ResponseValidationError,
)
from statehitl.interventions import Confirm, InterventionHandler, Proceed
from statehitl.models import ScriptedModel
from statehitl.session import SessionManager
from statehitl.vended_interventions.hitl import HumanInTheLoop
from statehitl.vended_interventions.hitl.classifier import ClassifierResult
from statehitl.vended_interventions.hitl.hitl import DEADLINE_REJECTION

PROMPT = 'Approve "delete_file"?\n  Input: {"path": "old.log"}'
CALL = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "delete_file",
                                                      "input": {"path": "old.log"}}}]}


@pytest.fixture
def ran() -> list[str]:
    return []


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"file://{tmp_path / 'store'}"


def build(store: str, ran: list[str], **options: Any) -> Agent:
    """What every process builds: the agent of session ``s1`` on ``store`` (a new object each time)."""

    @tool
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: the file, under the working directory
        """
        ran.append(path)
        return f"deleted {path}"

    handler = options.pop("handler", None) or HumanInTheLoop(**options)
    return Agent(model=ScriptedModel([CALL, "done"], keyed_by="position"), tools=[delete_file],
                 session_manager=SessionManager.from_url(store, session_id="s1"), interventions=[handler],
                 callback_handler=None)


def stored(store: str) -> dict[str, bytes]:
    root = Path(store.removeprefix("file://"))
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def answer(agent: Agent, response: Any, **extra: Any) -> Any:
    [asked] = agent.interrupts
    return agent([{"interruptResponse": {"interruptId": asked.id, "response": response, **extra}}])


def results(agent: Agent) -> list[tuple[str, str]]:
    return [(b["toolResult"]["status"], b["toolResult"]["content"][0]["text"])
            for m in agent.messages for b in m["content"] if "toolResult" in b]


def test_the_question_is_an_interrupt_bound_to_the_call_with_a_schema_for_every_door(store: str,
                                                                                     ran: list[str]) -> None:
    result = build(store, ran)("tidy up")
    [asked] = result.interrupts
    assert (asked.name, asked.reason, asked.source) == ("strands:human-in-the-loop", PROMPT, "hook")
    assert asked.digest == tool_call_digest("delete_file", {"path": "old.log"})
    schema = asked.response_schema
    assert schema is not None
    assert schema["anyOf"][1] == {"anyOf": [{"type": "string"}, {"type": "boolean"}]}
    assert schema["$defs"]["Edit"]["properties"]["input"]["required"] == ["path"]  # the tool's own schema
    [waiting] = inbox_api.pending(store)
    assert (waiting.id, waiting.reason, waiting.response_schema) == (asked.id, PROMPT, schema)


def test_a_new_agent_on_the_session_takes_the_answer_and_the_tool_runs_once(store: str, ran: list[str]) -> None:
    build(store, ran)("tidy up")
    done = answer(build(store, ran), "y", responder="ann")
    assert (done.stop_reason, ran) == ("end_turn", ["old.log"])
    assert [(e.name, e.response, e.responder, e.outcome) for e in build(store, ran).audit()] == [
        ("strands:human-in-the-loop", "y", "ann", "applied")]


def test_an_answer_given_in_the_inbox_is_applied_by_the_agents_next_call(store: str, ran: list[str]) -> None:
    build(store, ran)("tidy up")
    [waiting] = inbox_api.pending(store)
    inbox_api.answer(store, waiting.id, "yes", responder="ann")
    assert ran == []  # stored, not applied
    assert build(store, ran)().stop_reason == "end_turn"
    assert ran == ["old.log"]
    assert [(e.responder, e.via) for e in build(store, ran).audit()] == [("ann", "inbox")]


def test_reject_with_a_reason_tells_the_model_why(store: str, ran: list[str]) -> None:
    build(store, ran)("tidy up")
    answer(build(store, ran), {"type": "reject", "message": "that log is evidence"}, responder="ann")
    agent = build(store, ran)
    assert ran == []
    assert results(agent) == [("error", f"CONFIRMATION_FAILED: {PROMPT}\n  Reason: that log is evidence")]
    assert [e.outcome for e in agent.audit()] == ["rejected"]


def test_edit_runs_the_call_with_other_arguments(store: str, ran: list[str]) -> None:
    build(store, ran)("tidy up")
    answer(build(store, ran), {"type": "edit", "input": {"path": "old.log.1"}}, responder="ann")
    agent = build(store, ran)
    assert ran == ["old.log.1"]
    assert results(agent) == [("success", "deleted old.log.1")]
    assert [e.outcome for e in agent.audit()] == ["edited"]


@pytest.mark.parametrize("wrong", [
    42,
    {"type": "approve", "note": "typo'd field"},
    {"type": "edit", "input": {"file": "old.log"}},
    {"type": "reject", "message": 7},
])
def test_a_wrong_answer_is_refused_and_the_store_is_unchanged(store: str, ran: list[str], wrong: Any) -> None:
    build(store, ran)("tidy up")
    before = stored(store)
    with pytest.raises(ResponseValidationError, match="strands:human-in-the-loop"):
        answer(build(store, ran), wrong)
    assert stored(store) == before
    assert ran == []
    assert answer(build(store, ran), "y").stop_reason == "end_turn"  # and it can be answered right at once
    assert ran == ["old.log"]


def test_an_answer_given_for_another_call_is_refused(store: str, ran: list[str]) -> None:
    build(store, ran)("tidy up")
    before = stored(store)
    with pytest.raises(DigestMismatchError):
        answer(build(store, ran), "y", digest=tool_call_digest("delete_file", {"path": "/"}))
    assert (stored(store), ran) == (before, [])


def test_only_the_named_responders_may_answer_and_refusals_are_audited(store: str, ran: list[str]) -> None:
    asked = build(store, ran, responders=["ann", "group:ops"])("tidy up").interrupts[0]
    assert asked.responders == ["ann", "group:ops"]
    with pytest.raises(ResponderNotAllowedError):
        answer(build(store, ran, responders=["ann", "group:ops"]), "y", responder="bob")
    assert ran == []
    answer(build(store, ran, responders=["ann", "group:ops"]), "y", responder="cat", groups=["ops"])
    assert ran == ["old.log"]
    trail = build(store, ran, responders=["ann", "group:ops"]).audit()
    assert [(e.outcome, e.responder) for e in trail] == [("refused", "bob"), ("applied", "cat")]


def test_an_unanswered_approval_is_rejected_at_its_deadline(store: str, ran: list[str]) -> None:
    asked = build(store, ran, expires_in=3600)("tidy up").interrupts[0]
    assert asked.on_expire == DEADLINE_REJECTION
    assert asked.expires_at is not None
    assert inbox_api.sweep(store, now=asked.expires_at - 1).expired == []
    [expired] = inbox_api.sweep(store, now=asked.expires_at + 1).expired
    assert expired.id == asked.id
    agent = build(store, ran, expires_in=3600)
    agent()
    assert ran == []
    assert results(agent) == [("error", f"CONFIRMATION_FAILED: {PROMPT}\n  Reason: no one answered before the "
                                        "deadline")]
    assert [(e.responder, e.outcome) for e in agent.audit()] == [("expiry", "rejected")]


def test_trust_answered_in_one_process_holds_in_the_next(store: str, ran: list[str]) -> None:
    build(store, ran, enable_trust=True)("tidy up")
    answer(build(store, ran, enable_trust=True), "t")
    agent = build(store, ran, enable_trust=True)
    assert agent.state.get("hitl:trusted_tools") == ["delete_file"]
    agent.model = ScriptedModel([CALL, "done", CALL, "done again"], keyed_by="position")
    assert agent("once more").stop_reason == "end_turn"
    assert ran == ["old.log", "old.log"]


def test_the_classifier_is_not_asked_again_by_the_process_that_takes_the_answer(store: str, ran: list[str]) -> None:
    classified: list[str] = []

    def classify(event: Any) -> ClassifierResult:
        classified.append(event.tool_use["toolUseId"])
        return ClassifierResult(requires_human_in_the_loop=True, reason="deletes data")

    asked = build(store, ran, classifier=classify)("tidy up").interrupts[0]
    assert asked.reason == 'Approve "delete_file" — deletes data?\n  Input: {"path": "old.log"}'
    answer(build(store, ran, classifier=classify), "y")  # a new handler object, as in a new process
    assert (classified, ran) == (["t1"], ["old.log"])


def test_inline_ask_may_answer_with_the_vocabulary(ran: list[str], tmp_path: Path) -> None:
    edited = build(f"file://{tmp_path / 'a'}", ran, ask=lambda prompt: Edit(input={"path": "new.log"}))
    assert edited("tidy up").stop_reason == "end_turn"
    assert ran == ["new.log"]
    refused = build(f"file://{tmp_path / 'b'}", ran, ask=lambda prompt: Reject(message="not today"))
    refused("tidy up")
    assert ran == ["new.log"]
    assert results(refused) == [("error", f"CONFIRMATION_FAILED: {PROMPT}\n  Reason: not today")]


def test_a_confirm_with_its_own_answers_checks_them_at_every_door(store: str, ran: list[str]) -> None:
    class Decision(BaseModel):
        approved: bool

    class Budget(InterventionHandler):
        name = "budget"

        def before_tool_call(self, event: Any) -> Confirm | Proceed:
            return Confirm(prompt="over budget, go on?", evaluate=lambda answer: answer["approved"],
                           response_schema={**Decision.model_json_schema(), "additionalProperties": False})

    build(store, ran, handler=Budget())("tidy up")
    before = stored(store)
    with pytest.raises(ResponseValidationError):
        answer(build(store, ran, handler=Budget()), {"aproved": True})
    assert stored(store) == before
    answer(build(store, ran, handler=Budget()), {"approved": True})
    assert ran == ["old.log"]


def test_mistakes_in_the_handlers_are_refused_when_they_are_built() -> None:
    with pytest.raises(InvalidRespondersError, match="strands:human-in-the-loop"):
        HumanInTheLoop(responders="ann")  # type: ignore[arg-type]
    with pytest.raises(InvalidExpiryError, match="on_expire"):
        HumanInTheLoop(on_expire="n")
    with pytest.raises(InvalidExpiryError, match="not an answer it takes"):
        HumanInTheLoop(expires_in=60, on_expire={"type": "maybe"})
    with pytest.raises(InvalidExpiryError, match="positive"):
        HumanInTheLoop(expires_in=-1)
    assert HumanInTheLoop(expires_in=60, on_expire="n") is not None  # Strands' refusal, as a default
    with pytest.raises(TypeError, match="classifier"):
        HumanInTheLoop(classifier=42)  # type: ignore[arg-type]
    model = ScriptedModel([])
    with pytest.raises(TypeError, match=r"interventions=\[handler\]"):
        Agent(model=model, interventions=HumanInTheLoop())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="InterventionHandler instances"):
        Agent(model=model, interventions=[object()])  # type: ignore[list-item]

    class Nameless(InterventionHandler):
        name = ""

    with pytest.raises(TypeError, match="needs a name"):
        Agent(model=model, interventions=[Nameless()])

    class Careless(InterventionHandler):
        name = "careless"
        on_error = "ignore"  # type: ignore[assignment]

    with pytest.raises(TypeError, match="on_error must be one of"):
        Agent(model=model, interventions=[Careless()])


def test_the_inbox_page_shows_the_question_and_its_answer_reaches_the_agent(store: str, ran: list[str]) -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from statehitl.inbox.web import make_app

    [asked] = build(store, ran)("tidy up").interrupts

    async def check(client: TestClient[Any, Any]) -> None:
        page = await (await client.get("/")).text()
        assert "strands:human-in-the-loop" in page
        assert "Approve &quot;delete_file&quot;?\n  Input: {&quot;path&quot;: &quot;old.log&quot;}" in page  # as text
        csrf = page.split('name="__csrf" value="')[1].split('"')[0]
        wrong = await client.post(f"/answer/{asked.id}", data={"response": "42", "__csrf": csrf})
        assert wrong.status == 400  # refused at the door: nothing stored, still pending
        done = await client.post(f"/answer/{asked.id}", data={
            "response": '{"type": "edit", "input": {"path": "old.log.2"}}', "__responder": "ann", "__csrf": csrf})
        assert done.status == 200, await done.text()

    async def go() -> None:
        async with TestClient(TestServer(make_app(store, build=lambda thread: build(store, ran)))) as client:
            await check(client)

    asyncio.run(go())
    assert ran == ["old.log.2"]
    assert [(e.responder, e.via, e.outcome) for e in build(store, ran).audit()] == [("ann", "page", "edited")]
