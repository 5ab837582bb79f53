"""What a caller's input means for a thread, decided before anything is loaded or written.

Pure functions: given the input and the thread's last checkpoint, ``plan_run`` says whether the call
starts a run, resumes an interrupted one with answers, or continues one that stopped mid-way (a crash,
the step limit), or raises an error that names what was wrong. Because this runs before the runner
loads or writes anything, a rejected call leaves the stored checkpoint as it was. Every shape (agent,
StateGraph, Graph, Swarm) asks the same function, so they accept and refuse the same inputs with the
same messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statehitl._json import require_json
from statehitl.checkpoint.records import CheckpointRecord, Via
from statehitl.errors import (
    DigestMismatchError,
    EmptyInputError,
    InterruptResponseError,
    InvalidResponseError,
    NotInterruptedError,
    ResponseValidationError,
    ResumeInputError,
    UnknownInterruptError,
)
from statehitl.interrupt import Interrupt
from statehitl.responders import may_answer
from statehitl.values import as_json, encode_value

__all__ = [
    "AnswerMeta",
    "ContinueRun",
    "ResumeRun",
    "RunPlan",
    "StartRun",
    "check_response",
    "is_response_list",
    "parse_answers",
    "parse_responses",
    "plan_run",
]


@dataclass(frozen=True, slots=True)
class StartRun:
    """A new run from the input (on the thread's current state, if it has one)."""

    input: Any


@dataclass(frozen=True, slots=True)
class AnswerMeta:
    """Who gave an answer and what they said about it, for the audit trail (both optional), and the door
    it came through (``via``: None, the caller's own). An expiry sweep answers as ``responder="expiry"``.
    ``groups``: the groups the caller says the responder belongs to, for an interrupt that lets groups
    answer (``responders=["group:finance"]``); checked when the answer is stored, not kept with it."""

    responder: str | None = None
    comment: str | None = None
    via: Via | None = None
    groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResumeRun:
    """The interrupted run goes on with these answers, ``{interrupt_id: response}``, and with those other
    doors stored for its other interrupts (none given: only those); ``meta`` says who gave each (by
    interrupt id, for the answers whose block named a responder or a comment)."""

    answers: dict[str, Any]
    meta: dict[str, AnswerMeta] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ContinueRun:
    """A run that stopped mid-way without an interrupt (its process died, the step limit) goes on, or a
    run that failed retries the step that failed."""


RunPlan = StartRun | ResumeRun | ContinueRun


def plan_run(input: Any, record: CheckpointRecord | None, *, label: str, none_continues: bool,
             lists_are_input: bool, answer_form: str | None = None, tagged_answers: bool = False,
             input_leaves_breakpoint: bool = False) -> RunPlan:
    """What ``input`` means for the thread whose last checkpoint is ``record`` (None: never run).

    ``label`` names the thread in messages. ``none_continues``: ``None`` continues a stopped run
    (graphs) rather than starting one with no new input (agents, where ``agent()`` calls the model
    again). ``lists_are_input``: a list that is not interrupt responses is input (an agent's content
    blocks or messages) rather than a mistake (a StateGraph takes a dict). ``answer_form``: how the
    caller's own code answers, for the message refusing new input on a waiting thread (a LangGraph
    program's ``Command(resume=...)``); by default the interruptResponse list every shape takes.
    ``tagged_answers``: answers may be any value ``statehitl.values`` stores (a StateGraph's, as LangGraph's
    ``Command(resume=)`` takes a datetime); else they must be JSON (Strands' rule for agents and orchestrators).
    ``input_leaves_breakpoint``: new input on a thread stopped at a breakpoint starts a new run from its state,
    leaving the step it stopped before (LangGraph's way; nothing was asked there, so no answer is lost).
    """
    status = None if record is None else record.status
    if status == "interrupted" or (status == "failed" and record is not None and record.interrupts
                                   and is_response_list(input)):  # a resumed step failed: answer it again
        assert record is not None
        if input is None and status == "interrupted":
            return ResumeRun({})  # what the answers stored by any door (the inbox, an expiry) say
        if not record.interrupts:  # stopped at a StateGraph's breakpoint (interrupt_before/interrupt_after)
            if input_leaves_breakpoint and not is_response_list(input):
                return StartRun(input)
            raise ResumeInputError(
                f"{label} stopped at a breakpoint before {record.pending}, with nothing to answer; continue it "
                "with None as the input (invoke(None, config)) before giving it new input"
            )
        answers, meta = parse_answers(input, [i.to_interrupt() for i in record.interrupts], thread=label,
                                      answer_form=answer_form, tagged=tagged_answers)
        return ResumeRun(answers, meta)
    if is_response_list(input):
        why = "it has no checkpoint" if record is None else f"its status is {status}"
        if status == "executing" and record is not None and record.owner is not None:
            why = ("another resume took its interrupts and is acting on them now (status executing); the first "
                   "answer wins")
        raise NotInterruptedError(
            f"{label} is not waiting on any interrupt ({why}); interrupt responses can only answer a thread "
            "whose last result was an interrupt"
        )
    if input is None and none_continues:
        if record is not None and record.pending and status in ("executing", "failed"):
            return ContinueRun()  # stopped mid-way (a crash, the step limit) or failed: go on, or retry the step
        why = "has no checkpoint" if record is None else f"is {status} with nothing pending"
        raise EmptyInputError(f"{label} {why}; there is no stopped run to continue, pass input")
    if isinstance(input, list) and not lists_are_input:
        raise ResumeInputError(
            f"{label}: input is a list but not of interruptResponse blocks; pass the input to start a run "
            "(a dict or the state model)"
        )
    return StartRun(input)

_EXAMPLE = "[{'interruptResponse': {'interruptId': interrupt.id, 'response': ...}}]"


def is_response_list(payload: Any) -> bool:
    """Whether ``payload`` looks like an attempt to answer interrupts (a list of interruptResponse)."""
    return isinstance(payload, list) and any(
        isinstance(item, dict) and "interruptResponse" in item for item in payload
    )


def parse_responses(payload: Any, pending: Sequence[Interrupt], *, thread: str) -> dict[str, Any]:
    """Validate ``payload`` against the ``pending`` interrupts of ``thread``; return id -> response."""
    return parse_answers(payload, pending, thread=thread)[0]


def parse_answers(payload: Any, pending: Sequence[Interrupt], *, thread: str, answer_form: str | None = None,
                  tagged: bool = False) -> tuple[dict[str, Any], dict[str, AnswerMeta]]:
    """Validate ``payload`` against the ``pending`` interrupts of ``thread``: id -> response, and id ->
    who answered (for the blocks that say). ``answer_form``: what the refusal of a payload that is not a
    list tells the caller to answer with (default: a list like ``_EXAMPLE``). ``tagged``: a response may be
    any value ``statehitl.values`` stores, and is returned as stored (tagged JSON); else it must be JSON.

    Besides the shape, each response is checked against its interrupt's ``response_schema`` and a
    block's ``digest`` against its interrupt's, so a wrong answer is refused here, before the thread
    is claimed or anything runs (``ResponseValidationError``, ``DigestMismatchError``).
    """
    by_id = {i.id: i for i in pending}
    names = {i.id: i.name for i in pending}
    waiting = ", ".join(f"{i.name!r} (id {i.id})" for i in pending)
    if not isinstance(payload, list):
        raise ResumeInputError(
            f"{thread} is waiting on interrupts {waiting}; resume it with {answer_form or 'a list like ' + _EXAMPLE}, "
            f"not a {type(payload).__name__}"
        )
    if not payload:
        raise InvalidResponseError(f"{thread}: the list of interrupt responses is empty; expected {_EXAMPLE}")
    answers: dict[str, Any] = {}
    meta: dict[str, AnswerMeta] = {}
    for index, item in enumerate(payload):
        if not isinstance(item, dict) or set(item) != {"interruptResponse"}:
            raise ResumeInputError(
                f"{thread}: item {index} of the resume list is {item!r}; while interrupted every item "
                f"must be {{'interruptResponse': {{...}}}} and nothing else"
            )
        block = item["interruptResponse"]
        if not isinstance(block, dict):
            raise ResumeInputError(f"{thread}: item {index}'s interruptResponse must be a dict, got {block!r}")
        if "interruptId" not in block:
            raise InvalidResponseError(f"{thread}: item {index}'s interruptResponse has no 'interruptId'")
        iid = block["interruptId"]
        if iid not in names:
            raise UnknownInterruptError(
                f"{thread}: interrupt id {iid!r} (item {index}) is not pending; pending: {waiting or 'none'}"
            )
        if "response" not in block:
            raise InvalidResponseError(
                f"{thread}: the response to interrupt {names[iid]!r} (id {iid}) is missing its 'response'"
            )
        if iid in answers:
            raise InvalidResponseError(f"{thread}: interrupt {names[iid]!r} (id {iid}) is answered twice")
        response = _stored_response(block["response"], f"{thread}: the response to interrupt {names[iid]!r}", tagged)
        _check_answer(block, by_id[iid], thread)
        answers[iid] = response
        responder, comment, groups = block.get("responder"), block.get("comment"), block.get("groups")
        if responder is not None or comment is not None or groups:
            meta[iid] = AnswerMeta(responder, comment, groups=tuple(groups or ()))
    return answers, meta


def _stored_response(response: Any, what: str, tagged: bool) -> Any:
    """A response as stored: tagged JSON when ``tagged`` (a datetime, a set, bytes come back as they were:
    ``statehitl.values``), else checked to be JSON as it is."""
    if tagged:
        return encode_value(response, what, error=InterruptResponseError)
    require_json(response, what, InterruptResponseError)
    return response


def _check_answer(block: dict[str, Any], interrupt: Interrupt, thread: str) -> None:
    """Refuse a block whose extras are not strings, whose digest is not its interrupt's, or whose response
    does not fit the interrupt's response schema."""
    where = f"{thread}: the answer to interrupt {interrupt.name!r} (id {interrupt.id})"
    for key in ("responder", "comment", "digest"):
        if block.get(key) is not None and not isinstance(block[key], str):
            raise InvalidResponseError(f"{where} has a {key!r} of {block[key]!r}; it must be a str")
    groups = block.get("groups")
    if groups is not None and (not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups)):
        raise InvalidResponseError(f"{where} has 'groups' of {groups!r}; it must be a list of group names "
                                   "(the responder's groups, e.g. ['finance'])")
    digest = block.get("digest")
    if digest is not None and digest != interrupt.digest:
        if interrupt.digest is None:
            raise DigestMismatchError(f"{where} carries digest {digest!r}, but the interrupt is about no tool call")
        raise DigestMismatchError(
            f"{where} was given for tool call {digest}, but the call waiting is {interrupt.digest} (other "
            "arguments than the ones shown); nothing was applied: answer the call as it is now"
        )
    if may_answer(interrupt.responders, block.get("responder"), groups or ()):
        # A responder who may not answer is refused where the answer is written, before its type is looked at:
        # every door checks who answers first.
        check_response(block["response"], interrupt.response_schema, where)


def check_response(response: Any, schema: dict[str, Any] | None, where: str) -> None:
    """Refuse a response that does not fit its interrupt's response schema (None: any JSON fits), before
    anything is stored or run: here at resume, and in the inbox before an answer is recorded. A value
    JSON cannot hold (a datetime) is checked as its JSON form (an ISO string), as pydantic takes it."""
    if schema is None:
        return
    from statehitl.json_schema_check import schema_errors  # only typed interrupts need the checker

    problems = schema_errors(as_json(response), schema)
    if problems:
        raise ResponseValidationError(f"{where} is not a valid response: {'; '.join(problems)}; "
                                      "nothing was applied, the thread still waits on it")

