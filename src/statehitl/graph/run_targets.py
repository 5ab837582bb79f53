"""What a call of a compiled graph names: its thread, checkpoint and step limit (from LangGraph's config or
statehitl's keywords), and a ``Command`` as input in the terms ``resume.plan_run`` takes."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.commands import Command, goto_targets
from statehitl.errors import AmbiguousResumeError, InvalidThreadIdError, ResumeInputError
from statehitl.machine import Machine
from statehitl.position import Position
from statehitl.supersteps import with_goto


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
    max_concurrency: int | None = None
    """LangGraph's ``config["max_concurrency"]``: at most this many of a step's tasks run at once."""
    control: Any = None
    """The run's drain switch (``invoke(..., control=RunControl())``)."""


def names_thread(config: Any, thread_id: Any) -> bool:
    """Whether a call names its thread: ``thread_id=``, a thread id as the config, or the config's
    ``configurable["thread_id"]``."""
    if thread_id is not None or isinstance(config, str):
        return True
    return isinstance(config, dict) and (config.get("configurable") or {}).get("thread_id") is not None


def run_target(config: dict[str, Any] | str | None, thread_id: Any, checkpoint_id: str | None,
               step_limit: int | None, default_limit: int, *, durability: Any = None,
               invocation_state: dict[str, Any] | None = None, interrupt_before: Sequence[str] | None = None,
               interrupt_after: Sequence[str] | None = None, context: Any = None,
               require_thread: bool = False, control: Any = None) -> RunTarget:
    """The target of a call given ``config`` (a LangGraph config or a thread id) and statehitl's keywords,
    which win. A thread id of any type is ``str()``-ed (``uuid4()``, ``42``), as LangGraph's (its ``metadata``
    repeats the run's ids the caller's ``configurable`` holds, as given). Without a thread:
    ``require_thread`` (a graph compiled with a checkpointer) is LangGraph's error, else (nothing is kept)
    a new thread with a random id."""
    if isinstance(config, str):
        config, thread_id = None, thread_id or config
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"config must be a dict like {{'configurable': {{'thread_id': ...}}}} or a thread id, "
                        f"got {config!r}")
    given = dict(config or {})
    configurable = dict(given.get("configurable") or {})
    named = "thread_id" in configurable
    thread = thread_id if thread_id is not None else configurable.get("thread_id")
    if thread is None and require_thread:
        raise InvalidThreadIdError(
            "Checkpointer requires one or more of the following 'configurable' keys: thread_id, checkpoint_ns, "
            "checkpoint_id; name the thread with config={'configurable': {'thread_id': ...}}"
        )
    thread = validate_thread_id(thread if isinstance(thread, str) else str(thread)) if thread is not None \
        else os.urandom(16).hex()
    metadata = {**{k: configurable[k] for k in _TO_METADATA if configurable.get(k)}, **(given.get("metadata") or {})}
    if metadata:
        given["metadata"] = metadata
    checkpoint = checkpoint_id or configurable.get("checkpoint_id")
    limit = step_limit if step_limit is not None else given.get("recursion_limit")
    limit = default_limit if limit is None else check_step_limit(limit)
    configurable.update(thread_id=thread, checkpoint_ns=configurable.get("checkpoint_ns", ""))
    return RunTarget(thread, checkpoint, limit, {**given, "configurable": configurable, "recursion_limit": limit},
                     named, check_durability(durability), invocation_state if invocation_state is not None else {},
                     frozenset(interrupt_before or ()), frozenset(interrupt_after or ()), context,
                     _max_concurrency(given.get("max_concurrency")), control)


_NOT_METADATA = frozenset({"thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
                           "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns"})
"""The keys LangGraph leaves out of a checkpoint's metadata (they say where the checkpoint is, not the run)."""


def checkpoint_metadata(config: dict[str, Any]) -> dict[str, str | int | float | bool]:
    """What a run's checkpoints carry of its config, as LangGraph's metadata does: the plain values (text,
    numbers, booleans) of ``config["metadata"]`` and ``config["configurable"]``, less the keys that place a
    checkpoint and those starting with ``__``; the first one named wins."""
    kept: dict[str, str | int | float | bool] = {}
    for given in (config.get("metadata"), config.get("configurable")):
        for key, value in (given or {}).items():
            if key in kept or key in _NOT_METADATA or key.startswith("__"):
                continue
            if isinstance(value, str | int | float | bool):
                kept[key] = value
    return kept


_DURABILITY = {"sync": "sync", "async": "step", "step": "step", "exit": "exit"}
_TO_METADATA = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id", "graph_id")
"""The ``configurable`` keys a call's ``metadata`` repeats, as LangGraph's does (so a node's ``config["metadata"]``
and a ``"messages"`` chunk's metadata show them); a thread statehitl names for a call that named none is not."""


def check_durability(durability: Any) -> Any:
    """statehitl's durability for one of LangGraph's (``"async"`` is statehitl's ``"step"``), None for none given;
    a value neither has is refused."""
    if durability is None:
        return None
    if durability not in _DURABILITY:
        raise ValueError(f"durability must be 'sync', 'async' (statehitl's 'step') or 'exit', got {durability!r}")
    return _DURABILITY[durability]


def _max_concurrency(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"config['max_concurrency'] must be a positive int, got {value!r}")
    return value


def check_step_limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"step_limit must be a positive int, got {limit!r}")
    return limit


class CommandInput:
    """What a caller's ``Command`` does besides answering: ``update`` (channel writes, applied before the run's
    step, as LangGraph applies a Command's writes) and ``goto`` (nodes, or Sends, run in that step too). A plain
    class: a dataclass costs more to build at import than a run spends on it."""

    __slots__ = ("goto", "update")

    def __init__(self, update: dict[str, Any], goto: list[Any]) -> None:
        self.update = update
        self.goto = goto


def command_input(input: Any, normalize: Any) -> CommandInput | None:
    """The update and goto of a caller's ``Command`` (None: no Command, or one with neither); ``normalize`` turns
    its update into channel writes, as a node's ``Command(update=...)`` is read."""
    if not isinstance(input, Command):
        return None
    if input.graph is not None:
        raise ResumeInputError("invoke(Command(graph=...)) is not supported: Command.PARENT is for a subgraph's "
                               "node to route its parent graph")
    if input.update is None and not input.goto:
        return None
    update = {} if input.update is None else normalize(Command(update=input.update))
    return CommandInput(update, goto_targets(input.goto, "the input"))


def stopped(head: Head) -> bool:
    """Whether the thread stopped mid-run (on interrupts, a breakpoint, a failure, a crash): a run goes on."""
    return bool(head.record.pending) or head.record.status == "interrupted"


def commanded(machine: Machine, at: Position, command: CommandInput | None) -> Position:
    """``at`` with a caller's ``Command``'s goto added to the tasks its step runs (its update is in the state)."""
    if command is not None and command.goto:
        at.pending, at.schedule = with_goto(machine, at.pending, at.schedule, command.goto)
    return at


def resume_input(input: Any, head: Head | None) -> Any:
    """A ``Command`` as the caller's input, in the terms ``plan_run`` takes: its ``resume`` as interruptResponse
    blocks (one answer for the one interrupt waiting, or ``{interrupt_id: answer}``); without one, None (its
    update and goto, ``command_input``, go with the run that goes on)."""
    if not isinstance(input, Command):
        return input
    if input.resume is None:
        return None
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
        raise AmbiguousResumeError(
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


def namespace_of(config: dict[str, Any] | str | None) -> str:
    """The ``checkpoint_ns`` a config names ("" for the graph's own checkpoints; a subgraph's otherwise,
    which ``graph.subgraph_travel`` addresses)."""
    if not isinstance(config, dict):
        return ""
    return str((config.get("configurable") or {}).get("checkpoint_ns") or "")
