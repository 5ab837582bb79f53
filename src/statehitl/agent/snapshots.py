"""Taking and loading an agent's snapshots (``agent.take_snapshot`` / ``agent.load_snapshot``).

By value, a snapshot holds what Strands' does (``types/_snapshot.py``). What a waiting agent waits on
cannot travel by value here: its tool calls live in a checkpoint of the agent's thread (the turn, the
tools that finished, what each interrupt asked), and an interrupt's id is derived from the thread it
was raised on. So ``interrupt_state`` names that checkpoint in its ``context``, and the ``checkpoint``
field names the one holding everything: loading either takes the agent back to it, on its own thread
(any process's agent on the same session), and is refused on another thread.

Loading checks everything first (the schema, each field's type, the checkpoint it names) and changes
the agent only when all of it can be loaded, so a refused snapshot leaves the agent as it was.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from statehitl.agent.conversation_manager import ConversationManager
from statehitl.agent.state import AgentState
from statehitl.agent.thread import AgentThread
from statehitl.checkpoint.reading import Head
from statehitl.errors import CheckpointNotFoundError, NotJSONError, SnapshotError
from statehitl.types._snapshot import SNAPSHOT_SCHEMA_VERSION, Snapshot, SnapshotField, resolve_snapshot_fields


class CheckpointRef(BaseModel):
    """A checkpoint of an agent's thread, as a snapshot names it. ``created_at`` tells it from a checkpoint
    with the same number in another store."""

    model_config = ConfigDict(extra="forbid", strict=True)

    thread_id: str
    checkpoint_id: str
    created_at: float


class _InterruptState(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    interrupts: dict[str, Any] = {}
    context: dict[str, Any] = {}
    activated: bool = False


class _Data(BaseModel):
    """The fields of ``Snapshot.data`` this statehitl loads, each of the type it must have."""

    model_config = ConfigDict(extra="ignore")

    messages: list[dict[str, Any]] | None = None
    state: dict[str, Any] | None = None
    conversation_manager_state: dict[str, Any] | None = None
    interrupt_state: _InterruptState | None = None
    system_prompt: str | list[dict[str, Any]] | None = None
    model_state: dict[str, Any] | None = None
    checkpoint: CheckpointRef | None = None


async def capture(thread: AgentThread, conversation_manager: ConversationManager, *, fields: set[SnapshotField],
                  system_prompt: str | None, model_state: dict[str, Any],
                  app_data: dict[str, Any] | None) -> Snapshot:
    """A snapshot of the agent ``thread`` belongs to, with ``fields``. For ``checkpoint``, the live
    conversation and state are first written as the thread's next checkpoint if they differ from its
    head (unless it waits mid-run, when the head is what goes on)."""
    data: dict[str, Any] = {}
    if "messages" in fields:
        data["messages"] = copy.deepcopy(thread.messages)
    if "state" in fields:
        data["state"] = thread.runtime.state.get()
    if "conversation_manager_state" in fields:
        data["conversation_manager_state"] = conversation_manager.get_state()
    if "interrupt_state" in fields:
        data["interrupt_state"] = _interrupt_state(thread)
    if "system_prompt" in fields:
        data["system_prompt"] = None if system_prompt is None else [{"text": system_prompt}]
    if "model_state" in fields:
        data["model_state"] = copy.deepcopy(model_state)
    if "checkpoint" in fields:
        if not thread.stopped() and thread.dirty():
            await thread.save_live({}, thread.rewritten(), writer="snapshot")
        data["checkpoint"] = _ref(thread)
    return Snapshot(scope="agent", schema_version=SNAPSHOT_SCHEMA_VERSION, data=data,
                    app_data=copy.deepcopy(app_data) if app_data else {})


def _ref(thread: AgentThread) -> dict[str, Any] | None:
    head = thread.head
    if head is None:
        return None
    record = head.record
    return {"thread_id": thread.thread_id, "checkpoint_id": record.checkpoint_id, "created_at": record.created_at}


def _interrupt_state(thread: AgentThread) -> dict[str, Any]:
    """Strands' shape: the pending interrupts by id, whether the agent waits on them, and in ``context`` the
    checkpoint that holds their tool calls (also set at a checkpointing pause, which has none)."""
    interrupts = {i.id: {"id": i.id, "name": i.name, "reason": i.reason, "response": i.response}
                  for i in thread.pending_interrupts()}
    context = {"checkpoint": _ref(thread)} if thread.stopped() else {}
    return {"interrupts": interrupts, "context": context, "activated": bool(interrupts)}


def fields_of(preset: Any, include: Any, exclude: Any) -> set[SnapshotField]:
    """``resolve_snapshot_fields`` for the arguments of ``take_snapshot``."""
    return resolve_snapshot_fields(preset=preset, include=include, exclude=exclude)


@dataclass
class LoadPlan:
    """A snapshot checked and ready to load: nothing of the agent has changed yet."""

    data: _Data
    head: Head | None
    """The checkpoint to take the thread back to (read, not written), or None."""
    detach: bool
    """The snapshot has an interrupt state naming no checkpoint: the agent is to wait on nothing."""
    state: AgentState | None
    system_prompt: str | None
    sets_prompt: bool


async def plan_load(thread: AgentThread, conversation_manager: ConversationManager, snapshot: Snapshot) -> LoadPlan:
    """Check ``snapshot`` against the agent of ``thread`` and read the checkpoint it names; ``SnapshotError``
    for anything it cannot load, before anything changes."""
    if not isinstance(snapshot, Snapshot):
        raise SnapshotError(f"load_snapshot takes a Snapshot (Snapshot.from_dict(data) builds one), got {snapshot!r}")
    snapshot.validate()
    if snapshot.scope != "agent":
        raise SnapshotError(f"Expected snapshot scope 'agent', got {snapshot.scope!r}")
    try:
        data = _Data.model_validate(snapshot.data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise SnapshotError(f"the snapshot's data cannot be loaded: {problems}") from None
    if data.conversation_manager_state is not None:
        try:
            conversation_manager.check_state(data.conversation_manager_state)
        except ValueError as error:
            raise SnapshotError(str(error)) from None  # Strands' words: "Invalid conversation manager state."
    try:
        state = None if data.state is None else AgentState(data.state)
    except NotJSONError as error:
        raise SnapshotError(f"the snapshot's state: {error}") from None
    ref = _target(data)
    head = None if ref is None else await _read(thread, ref)
    detach = ref is None and data.interrupt_state is not None
    return LoadPlan(data, head, detach, state, _prompt_text(data.system_prompt),
                    "system_prompt" in data.model_fields_set)


async def apply_load(plan: LoadPlan, thread: AgentThread, conversation_manager: ConversationManager) -> None:
    """Load a checked snapshot into the agent of ``thread``: its checkpoint first (the conversation, state and
    waiting interrupts it holds), then each field the snapshot has, over it."""
    data = plan.data
    if plan.head is not None:
        await thread.adopt_head(plan.head)
    elif plan.detach:
        thread.detach()
    if data.messages is not None and data.messages != thread.messages:
        thread.messages = copy.deepcopy(data.messages)
    if plan.state is not None:
        thread.runtime.state = plan.state
    if data.conversation_manager_state is not None:
        conversation_manager.restore_from_session(data.conversation_manager_state)
    if plan.sets_prompt:
        thread.runtime.system_prompt = plan.system_prompt


def _target(data: _Data) -> CheckpointRef | None:
    """The checkpoint the snapshot takes the thread back to: its ``checkpoint``, or its interrupt state's."""
    named = None
    if data.interrupt_state is not None and data.interrupt_state.context.get("checkpoint") is not None:
        try:
            named = CheckpointRef.model_validate(data.interrupt_state.context["checkpoint"])
        except ValidationError:
            raise SnapshotError("the snapshot's interrupt_state names its checkpoint in a shape this statehitl "
                                "did not write") from None
    if data.checkpoint is not None and named is not None and named != data.checkpoint:
        raise SnapshotError("the snapshot's checkpoint and its interrupt_state name two different checkpoints")
    return data.checkpoint or named


async def _read(thread: AgentThread, ref: CheckpointRef) -> Head:
    where = f"checkpoint {ref.checkpoint_id} of thread {ref.thread_id!r}"
    if ref.thread_id != thread.thread_id:
        raise SnapshotError(
            f"the snapshot names {where}, which holds what it waited on or its whole conversation; it can be loaded "
            f"only by an agent on that thread, not this one ({thread.thread_id!r}). Take it without "
            "'interrupt_state' and 'checkpoint' to carry the conversation and state to another agent"
        )
    try:
        head = await thread.checkpointer.head(thread.thread_id, ref.checkpoint_id)
    except CheckpointNotFoundError:
        head = None
    if head is None or abs(head.record.created_at - ref.created_at) > 0.001:
        raise SnapshotError(f"the snapshot names {where}, which this agent's store does not hold (deleted, pruned, "
                            "or another store's)")
    return head


def _prompt_text(prompt: str | list[dict[str, Any]] | None) -> str | None:
    """The system prompt to set: a string as it is, Strands' content blocks as their text joined."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    if not all(isinstance(block.get("text"), str) for block in prompt if "cachePoint" not in block):
        raise SnapshotError(f"the snapshot's system_prompt has blocks that are not text: {prompt!r}")
    return "".join(block["text"] for block in prompt if "text" in block)
