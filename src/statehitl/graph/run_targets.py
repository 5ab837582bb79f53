"""What a call of a compiled graph names: its thread, checkpoint and step limit (from LangGraph's config or
statehitl's keywords), and a ``Command`` as input in the terms ``resume.plan_run`` takes."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statehitl.checkpoint.engine import Head
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.commands import Command
from statehitl.errors import ResumeInputError

__all__ = ["RunTarget", "answer_form", "check_step_limit", "resume_input", "run_target"]


@dataclass(frozen=True)
class RunTarget:
    """Where a call runs and how: the thread, the checkpoint to run from, its step limit and the nodes'
    config, and what else the call asked (durability, breakpoints, LangGraph's ``context``)."""

    thread: str
    checkpoint_id: str | None
    limit: int
    config: dict[str, Any]
    named: bool
    """The caller named the thread in a config (LangGraph's style): ``update_state`` then answers a config."""
    durability: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    context: Any = None


def run_target(config: dict[str, Any] | str | None, thread_id: str | None, checkpoint_id: str | None,
               step_limit: int | None, default_limit: int, *, durability: Any = None,
               invocation_state: dict[str, Any] | None = None, interrupt_before: Sequence[str] | None = None,
               interrupt_after: Sequence[str] | None = None, context: Any = None) -> RunTarget:
    """The target of a call given ``config`` (a LangGraph config or a thread id) and statehitl's keywords,
    which win; without a thread, a new one with a random id."""
    if isinstance(config, str):
        config, thread_id = None, thread_id or config
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"config must be a dict like {{'configurable': {{'thread_id': ...}}}} or a thread id, "
                        f"got {config!r}")
    given = dict(config or {})
    configurable = dict(given.get("configurable") or {})
    named = "thread_id" in configurable
    thread = thread_id if thread_id is not None else configurable.get("thread_id")
    thread = validate_thread_id(thread) if thread is not None else os.urandom(16).hex()
    checkpoint = checkpoint_id or configurable.get("checkpoint_id")
    limit = step_limit if step_limit is not None else given.get("recursion_limit")
    limit = default_limit if limit is None else check_step_limit(limit)
    configurable.update(thread_id=thread, checkpoint_ns=configurable.get("checkpoint_ns", ""))
    return RunTarget(thread, checkpoint, limit, {**given, "configurable": configurable, "recursion_limit": limit},
                     named, durability, invocation_state if invocation_state is not None else {},
                     frozenset(interrupt_before or ()), frozenset(interrupt_after or ()), context)


def check_step_limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"step_limit must be a positive int, got {limit!r}")
    return limit


def resume_input(input: Any, head: Head | None) -> Any:
    """A ``Command`` as the caller's input, in the terms ``plan_run`` takes: its ``resume`` as interruptResponse
    blocks (one answer for the one interrupt waiting, or ``{interrupt_id: answer}``), its ``update`` as input."""
    if not isinstance(input, Command):
        return input
    if input.goto or input.graph is not None:
        raise ResumeInputError("invoke(Command(goto=... / graph=...)) is not supported: pass Command(resume=...) "
                               "to answer interrupts, or the update as a dict to start a run")
    if input.resume is None:
        return input.update
    waiting = [] if head is None else head.record.interrupts
    if head is not None and not waiting and head.record.status == "interrupted":
        return None  # stopped by interrupt_before/after: the resume goes on
    ids = {i.id for i in waiting}
    if isinstance(input.resume, dict) and input.resume and set(input.resume) <= ids:
        answers = input.resume
    elif len(waiting) == 1:
        answers = {waiting[0].id: input.resume}
    elif waiting:
        listed = ", ".join(f"{i.id} ({i.reason!r})" for i in waiting)
        raise ResumeInputError(
            "When there are multiple pending interrupts, you must specify the interrupt id when resuming: "
            f"Command(resume={{interrupt_id: answer, ...}}); waiting: {listed}"
        )
    else:
        answers = {"": input.resume}  # nothing waits: plan_run says why
    return [{"interruptResponse": {"interruptId": iid, "response": answer}} for iid, answer in answers.items()]




_ASKED_BY_INTERRUPT = re.compile(r"interrupt(-[0-9]+)?")
"""The names LangGraph's free ``interrupt()`` gives what it asks (``interrupt``, ``interrupt-2``, ...)."""


def answer_form(head: Head | None, target: RunTarget) -> str | None:
    """How a caller refused for new input on a waiting thread is told to answer: LangGraph's
    ``Command(resume=...)`` when the thread is LangGraph's (the caller named it in a config, or it waits on
    ``interrupt()``); None for the interruptResponse list, the native style's."""
    waiting = [] if head is None else head.record.interrupts
    if not waiting or not (target.named or all(_ASKED_BY_INTERRUPT.fullmatch(i.name) for i in waiting)):
        return None
    if len(waiting) == 1:
        return "graph.invoke(Command(resume=answer), config)"
    return "graph.invoke(Command(resume={interrupt_id: answer, ...}), config), one answer per interrupt id"
