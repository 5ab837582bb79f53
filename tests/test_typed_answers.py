"""Typed answers: ``interrupt(..., response_type=T)`` carries T's JSON schema, refuses a wrong answer at
resume with the store untouched (early, from the stored schema; or on re-run, from T itself, with the
checkpoint as it was and the thread answerable at once), and hands the handler the validated value."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import AfterValidator, BaseModel, Field

from replies import reply
from statehitl import inbox, response_types
from statehitl.answers import Answer, Approve, Edit, Reject, Respond, outcome_of
from statehitl.checkpoint import FileCheckpointer, MemoryCheckpointer
from statehitl.errors import InvalidResponseError, ResponseValidationError
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.hooks import BeforeNodeCallEvent, HookRegistry
from statehitl.json_schema_check import schema_errors


class Refund(BaseModel):
    amount: float = Field(gt=0)
    note: str = ""


class State(BaseModel):
    decision: Any = None
    log: list[str] = []


def store_bytes(directory: Path) -> dict[str, bytes]:
    """Every file of a file store, by path: what "unchanged byte for byte" compares."""
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = f.read()
    return found


def one_node(handler: Any, checkpointer: Any, hooks: HookRegistry | None = None) -> Any:
    g = StateGraph(State)
    g.add_node("ask", handler)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=checkpointer, hooks=[hooks] if hooks is not None else ())



def test_literal_answer_schema_rejection_leaves_store_byte_for_byte_and_corrected_answer_applies(tmp_path):
    ran: list[Any] = []

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        decision = ctx.interrupt("approve", reason="refund $120?", response_type=Literal["yes", "no"])
        ran.append(decision)
        return {"decision": decision}

    app = one_node(ask, FileCheckpointer(tmp_path))
    first = app.invoke({}, thread_id="t")
    waiting = first.interrupts[0]
    assert waiting.response_schema == {"enum": ["yes", "no"], "type": "string"}
    assert app.get_state("t").interrupts[0].response_schema == waiting.response_schema  # stored with it
    before = store_bytes(tmp_path)

    with pytest.raises(ResponseValidationError, match=r"interrupt 'approve' .* expected one of 'yes', 'no', "
                                                      r"got 'maybe'") as refused:
        app.invoke(reply(waiting.id, "maybe"), thread_id="t")
    assert isinstance(refused.value, InvalidResponseError)
    assert isinstance(refused.value, ValueError)
    assert store_bytes(tmp_path) == before  # no claim, no checkpoint, no audit entry
    assert ran == []

    done = app.invoke(reply(waiting.id, "no"), thread_id="t")
    assert done.status == "completed"
    assert done.state.decision == "no"
    assert ran == ["no"]


def test_model_answer_is_returned_as_the_model_and_its_constraints_are_checked_before_the_claim(tmp_path):
    got: list[Any] = []

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        refund = ctx.interrupt("refund", reason="how much?", response_type=Refund)
        got.append(refund)
        return {"decision": refund.model_dump()}

    app = one_node(ask, FileCheckpointer(tmp_path))
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    schema = waiting.response_schema
    assert schema is not None
    assert schema["required"] == ["amount"]
    assert schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert schema["additionalProperties"] is False
    before = store_bytes(tmp_path)
    for bad, why in [({"note": "x"}, "missing required field 'amount'"), ({"amount": -3}, "expected a number > 0"),
                     ("fifty", "expected object"),
                     ({"amount": 50, "notes": "typo"}, "notes")]:  # a field the model does not have: closed
        with pytest.raises(ResponseValidationError, match=why):
            app.invoke(reply(waiting.id, bad), thread_id="t")
        assert store_bytes(tmp_path) == before
    app.invoke(reply(waiting.id, {"amount": 50, "note": "goodwill"}), thread_id="t")
    assert got == [Refund(amount=50, note="goodwill")]
    assert isinstance(got[0], Refund)


def _upper(text: str) -> str:
    if text != text.upper():
        raise ValueError("must be upper case")
    return text


def test_in_the_process_that_asked_the_type_itself_refuses_an_answer_before_it_is_stored(tmp_path):
    """The process that raised a typed interrupt knows its type: a validator no JSON schema states refuses the
    answer at the door, before anything is stored or claimed, whatever door the answer comes through."""

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        return {"decision": ctx.interrupt("code", response_type=Annotated[str, AfterValidator(_upper)])}

    checkpointer = FileCheckpointer(tmp_path)
    app = one_node(ask, checkpointer)
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    before = asyncio.run(checkpointer.storage.list("threads/t/"))
    with pytest.raises(ResponseValidationError, match=r"answer to interrupt 'code' .* must be upper case; nothing"):
        app.invoke(reply(waiting.id, "abc", responder="bob"), thread_id="t")
    with pytest.raises(ResponseValidationError, match="must be upper case"):
        inbox.answer(checkpointer, waiting.id, "abc", responder="bob")
    assert asyncio.run(checkpointer.storage.list("threads/t/")) == before  # no answer, no claim
    assert [p.id for p in inbox.pending(checkpointer)] == [waiting.id]
    assert app.invoke(reply(waiting.id, "ABC", responder="ada"), thread_id="t").state.decision == "ABC"


def test_answer_refused_on_rerun_writes_no_checkpoint_releases_the_claim_and_can_be_corrected(tmp_path, monkeypatch):
    """A process that does not know the type (another one than asked) checks only the schema, which a
    validator no JSON schema states passes; the handler's own type refuses it on re-run: the run stops
    before any checkpoint, the answer is withdrawn and kept in the audit trail as refused, and a corrected
    answer goes through at once (the claim was released, not left to run out its lease)."""
    runs: list[str] = []

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        code = ctx.interrupt("code", response_type=Annotated[str, AfterValidator(_upper)])
        runs.append(code)
        return {"decision": code}

    checkpointer = FileCheckpointer(tmp_path, lease_seconds=3600)  # a stuck claim would block for an hour
    app = one_node(ask, checkpointer)
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    head = app.get_state("t")
    stored = asyncio.run(checkpointer.storage.read(checkpointer._key("t", 0)))
    monkeypatch.setattr(response_types, "known_type", lambda interrupt_id: None)  # as in another process

    with pytest.raises(ResponseValidationError, match=r"response to interrupt 'code' .* must be upper case.* "
                                                      r"withdrawn") as refused:
        app.invoke(reply(waiting.id, "abc", responder="bob"), thread_id="t")
    assert refused.value.refused_answer
    assert refused.value.interrupt_id == waiting.id
    assert asyncio.run(checkpointer.storage.read(checkpointer._key("t", 0))) == stored  # the checkpoint, byte for byte
    after = app.get_state("t")
    assert (after.checkpoint_id, after.status, after.interrupts) == (head.checkpoint_id, "interrupted", head.interrupts)
    assert [(e.outcome, e.response, e.responder, e.via) for e in app.audit("t")] == [("refused", "abc", "bob", "app")]
    assert "must be upper case" in (app.audit("t")[0].why or "")
    assert runs == []

    done = app.invoke(reply(waiting.id, "ABC", responder="ada"), thread_id="t")
    assert done.state.decision == "ABC"
    assert [(e.outcome, e.response, e.responder) for e in app.audit("t")] == [("refused", "abc", "bob"),
                                                                             ("applied", "ABC", "ada")]


def test_a_node_that_raises_the_error_type_itself_fails_its_step(tmp_path):
    """Only an answer refused on re-run leaves the thread waiting with nothing written: the same error type
    raised by the node's own code, after the answer was accepted, fails the step like any error."""

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        code = ctx.interrupt("code", response_type=str)
        raise InvalidResponseError(f"the node's own check refused {code!r}")

    app = one_node(ask, FileCheckpointer(tmp_path))
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    with pytest.raises(InvalidResponseError, match="the node's own check refused 'abc'") as raised:
        app.invoke(reply(waiting.id, "abc"), thread_id="t")
    assert not raised.value.refused_answer
    after = app.get_state("t")
    assert after.status == "failed"
    assert after.error is not None
    assert after.error.type == "InvalidResponseError"
    assert [e.response for e in app.audit("t")] == ["abc"]  # the answer was applied before the node failed


def test_vocabulary_is_json_tagged_and_usable_as_a_response_type():
    assert Approve().model_dump() == {"type": "approve"}
    assert Reject(message="too much").model_dump() == {"type": "reject", "message": "too much"}
    assert Edit(input={"a": 1}).model_dump() == {"type": "edit", "input": {"a": 1}}
    assert Respond(text="hi").model_dump() == {"type": "respond", "text": "hi"}
    assert [outcome_of(a) for a in (Approve(), Reject(), Edit(input=1), Respond(text="x"), "yes",
                                    {"type": "reject"})] == ["applied", "rejected", "edited", "applied", "applied",
                                                             "rejected"]
    seen: list[Any] = []

    def ask(state: State, ctx: NodeContext) -> dict[str, Any]:
        seen.append(ctx.interrupt("say", response_type=Answer))
        return {}

    app = one_node(ask, MemoryCheckpointer())
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    with pytest.raises(ResponseValidationError, match="missing required field 'type'"):
        app.invoke(reply(waiting.id, {"text": "no tag"}), thread_id="t")
    with pytest.raises(ResponseValidationError, match="missing required field 'text'"):
        app.invoke(reply(waiting.id, {"type": "respond"}), thread_id="t")
    app.invoke(reply(waiting.id, {"type": "respond", "text": "ship it"}), thread_id="t")
    assert seen == [Respond(text="ship it")]
    assert app.audit("t")[0].outcome == "applied"


def test_hook_interrupt_is_typed_and_a_preset_response_is_validated_too():
    hooks = HookRegistry()
    asked: list[Any] = []

    def gate(event: BeforeNodeCallEvent) -> None:
        asked.append(event.interrupt("gate", reason=event.node_id, response_type=Literal[1, 2, 3]))

    hooks.add_callback(BeforeNodeCallEvent, gate)
    app = one_node(lambda state: {"log": ["ran"]}, MemoryCheckpointer(), hooks)
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    assert waiting.source == "hook"
    assert waiting.response_schema == {"enum": [1, 2, 3], "type": "integer"}
    with pytest.raises(ResponseValidationError, match="expected integer, got True"):
        app.invoke(reply(waiting.id, True), thread_id="t")  # JSON's true is not 1
    assert app.invoke(reply(waiting.id, 2), thread_id="t").state.log == ["ran"]
    assert asked == [2]

    def preset(state: State, ctx: NodeContext) -> dict[str, Any]:
        return {"decision": ctx.interrupt("p", response={"amount": 0}, response_type=Refund)}

    with pytest.raises(ResponseValidationError, match=r"preset response of interrupt 'p' .* greater than 0"):
        one_node(preset, MemoryCheckpointer()).invoke({}, thread_id="p")


def test_responder_and_comment_must_be_strings_and_are_checked_before_anything():
    app = one_node(lambda state, ctx: {"decision": ctx.interrupt("q")}, MemoryCheckpointer())
    waiting = app.invoke({}, thread_id="t").interrupts[0]
    for key in ("responder", "comment", "digest"):
        with pytest.raises(InvalidResponseError, match=rf"has a '{key}' of 7; it must be a str"):
            app.invoke(reply(waiting.id, "ok", **{key: 7}), thread_id="t")
    assert app.get_state("t").status == "interrupted"
    assert app.audit("t") == []


@pytest.mark.parametrize(("schema", "value", "problems"), [
    ({"type": "integer"}, 3.0, []),
    ({"type": "integer"}, True, ["at $: expected integer, got True"]),
    ({"type": ["string", "null"]}, None, []),
    ({"type": "array", "items": {"type": "string"}, "maxItems": 2}, ["a", 1, "c"],
     ["at $[1]: expected string, got 1", "at $: expected at most 2 items, got 3"]),
    ({"type": "string", "pattern": "^[a-z]+$", "minLength": 2}, "A",
     ["at $: expected at least 2 characters, got 1", "at $: 'A' does not match the pattern '^[a-z]+$'"]),
    ({"$defs": {"P": {"type": "object", "properties": {"x": {"type": "number", "maximum": 1}}}},
      "type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "additionalProperties": False},
     {"p": {"x": 2}, "q": 1}, ["at $.p.x: expected a number <= 1, got 2", "at $: unexpected field 'q' (allowed: p)"]),
    ({"anyOf": [{"type": "string"}, {"type": "object", "required": ["k"]}]}, {"j": 1},
     ["at $: missing required field 'k'"]),
    ({"const": "x", "x-unknown-keyword": 1}, "x", []),
    # reference cycles end (and leave the answer to the re-run check) instead of hanging the resume
    ({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}, 1, []),
    ({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/A"}]}}, "$ref": "#/$defs/A"}, 1, []),
])
def test_schema_check_covers_what_pydantic_writes(schema, value, problems):
    assert schema_errors(value, schema) == problems


def test_a_model_that_allows_extra_fields_keeps_them_allowed() -> None:
    from pydantic import ConfigDict

    from statehitl.response_types import response_schema

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        amount: int

    class Closed(BaseModel):
        amount: int

    assert response_schema(Open).get("additionalProperties") is True
    assert response_schema(Closed)["additionalProperties"] is False
    assert schema_errors({"amount": 1, "extra": 2}, response_schema(Closed))
    assert not schema_errors({"amount": 1, "extra": 2}, response_schema(Open))
