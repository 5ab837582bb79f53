"""An agent's conversation as its thread holds it: the live messages, restoring, running, recording.

``Agent`` is the user's object; this is the part of it that knows the agent is a thread of a
checkpointer (its session's, or a private in-memory one). It turns each call's input into a position
for the runner (checked before anything is written), mirrors what each step applied into the live
``messages`` after the step, reloads the thread after a failed call, and records direct tool calls.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from statehitl.agent.cancellation import DENIED_INVOCATION
from statehitl.agent.checkpointing import (
    checkpoint_pauses,
    checkpoint_resume,
    first_cycle,
    paused_at,
    unanswered_results,
)
from statehitl.agent.conversation_manager import ConversationManager
from statehitl.agent.input import to_messages
from statehitl.agent.loop import agent_machine, announce_messages
from statehitl.agent.loop_state import AgentLoopState, agent_schema, resumed_state
from statehitl.agent.runtime import AgentRuntime, LoopRun
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.records import StoredCheckpoint
from statehitl.errors import AgentBusyError, AgentCheckpointError, NotInterruptedError
from statehitl.hooks.agent_events import BeforeInvocationEvent, MessageAddedEvent
from statehitl.hooks.registry import cancel_text
from statehitl.interrupt import Interrupt
from statehitl.position import Position
from statehitl.resume import ResumeRun, is_response_list, plan_run
from statehitl.run_start import resume_position, start_position
from statehitl.runner import Runner
from statehitl.thread_run import Durability
from statehitl.types.content import Message

if TYPE_CHECKING:
    from statehitl.experimental.checkpoint import Checkpoint, CheckpointPosition


class CallEnd(NamedTuple):
    """How a call of the loop ended: why, the loop state it stopped in, what it waits on, and (paused by
    checkpointing) where it paused."""

    stop_reason: str
    loop: AgentLoopState
    interrupts: list[Interrupt]
    checkpoint: Checkpoint | None = None
    denied: bool = False
    """A ``BeforeInvocationEvent`` hook cancelled the call: the loop never ran."""


class Denied(NamedTuple):
    """A call a ``BeforeInvocationEvent`` hook cancelled: the loop state its result is read from (the
    conversation ending with the hook's reply)."""

    loop: AgentLoopState


class AgentThread:
    """The thread behind one agent. ``runtime.agent`` is the ``Agent`` hooks and tools see."""

    def __init__(self, runtime: AgentRuntime, checkpointer: Checkpointer, thread_id: str, *, session: bool,
                 conversation_manager: ConversationManager) -> None:
        self.runtime = runtime
        self.checkpointer = checkpointer
        self.thread_id = thread_id
        self.session = session
        """Whether the thread is a session's (listed in its store's index) or the agent's private memory."""
        self.conversation_manager = conversation_manager
        self.runner = Runner(agent_machine(), agent_schema(), runtime.hooks, checkpointer, source=runtime.agent,
                             index=session)
        self.busy = threading.Lock()  # a lock, not a flag: callers may be threads
        self.head: Head | None = None
        self.stale = False  # a call failed: reload the thread before the next one
        self.loop = AgentLoopState()
        self._messages: list[dict[str, Any]] = self.loop.messages
        self._synced = (self._messages, 0)
        self._whole = False  # after a failed call: the store holds another conversation than the loop's
        self.detached = False
        """A snapshot was loaded without the interrupts (or pause) the head stopped on: the next call starts anew
        after the head instead of answering or resuming it (``detach``)."""

    # -- the live conversation ----------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self._messages

    @messages.setter
    def messages(self, value: list[dict[str, Any]]) -> None:
        self._messages = [dict(m) for m in value]

    def adopt(self, messages: list[dict[str, Any]]) -> None:
        """Make ``messages`` the conversation as the loop last saw it."""
        self._messages = messages
        self._synced = (messages, len(messages))

    def rewritten(self) -> bool:
        """Whether the conversation was edited since the loop last saw it (or the store holds another one,
        after a failed call), rather than only appended to."""
        synced, length = self._synced
        return self._whole or self._messages is not synced or len(self._messages) < length

    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts the thread waits on (as this agent last read or left it)."""
        if self.head is None or self.head.record.status != "interrupted" or self.detached:
            return []
        return [i.to_interrupt() for i in self.head.record.interrupts]

    def stopped(self) -> bool:
        """Whether the thread stopped mid-run, waiting on interrupts or paused, and goes on from there."""
        return self.head is not None and self.head.record.status == "interrupted" and not self.detached

    def detach(self) -> None:
        """Stop waiting on the head's interrupts or pause: the next call starts a new run after the head (a
        loaded snapshot that had none). Nothing is written until that call."""
        self.detached = self.stopped()
        if self.detached:
            self._whole = True  # the turn the head kept pending is dropped: store the conversation whole

    def dirty(self) -> bool:
        """Whether the live conversation or agent state differ from what the thread's head holds."""
        synced, length = self._synced
        return (self.head is None or self._whole or self._messages is not synced or len(self._messages) != length
                or self.runtime.state.changed)

    async def restore(self, checkpoint_id: str | int | None = None) -> None:
        """Load the thread, if it has one, into this agent (what a new server process does); with
        ``checkpoint_id``, the thread as it was at that checkpoint, to go on from there (the next checkpoint
        is written after the head, its parent that one: time travel).

        A call that failed (the model or a hook raised) is recorded as failed, holding the state its
        failing step started from; the conversation goes on from the checkpoint before it instead
        (the steps of the failed call that were checkpointed, or the conversation before the call),
        so a prompt the model never answered is not left in the history. The next checkpoint stores
        that conversation whole, since the failed one holds more.
        """
        await self.adopt_head(await self.checkpointer.head(self.thread_id, checkpoint_id))

    async def adopt_head(self, head: Head | None) -> None:
        """Make ``head`` (read from this agent's thread) the one this agent goes on from (``restore``)."""
        self.head, self.stale, self.detached = head, False, False
        if head is None:
            return
        record = head.record
        values = record.values
        if record.status == "failed" and record.error is not None:
            before = None if record.parent_seq is None else \
                await self.checkpointer.checkpoint_record(self.thread_id, record.parent_seq)
            values = {} if before is None else before.values
            self._whole = True
        loop = agent_schema().load(values)
        self.loop = loop
        self.adopt(loop.messages)
        self.runtime.state = resumed_state(loop, record.progress if record.status == "interrupted" else {})

    def acquire(self, refusal: str | None = None) -> None:
        """Hold the agent for one call (``release`` ends it); ``AgentBusyError`` (``refusal``, or a
        default) if it runs another."""
        if not self.busy.acquire(blocking=False):
            raise AgentBusyError(refusal or (
                f"agent {self.runtime.name!r} is already running a call; one agent runs one call at a time "
                "(use one Agent per concurrent conversation)"
            ))

    def release(self) -> None:
        self.busy.release()

    # -- a call -------------------------------------------------------------------------------------

    async def run(self, prompt: Any, run: LoopRun, *, step_limit: int, durability: Durability,
                  checkpointing: bool = False) -> CallEnd:
        """Run one call of the loop on ``prompt`` (or answer the pending interrupts, or go on from a pause).

        ``checkpointing``: pause at the boundaries of every tool cycle (``agent.checkpointing``).
        """
        if self.stale:
            await self.restore()  # an earlier call failed: start from what the store holds
        at, cycle = await self._position(prompt, run, checkpointing)
        if isinstance(at, Denied):  # a BeforeInvocationEvent hook cancelled the call: its text is the reply
            return CallEnd("end_turn", at.loop, [], denied=True)
        if run.emit is not None:
            run.emit({"init_event_loop": True})  # once the call is let through, as Strands announces it

        announce = run.emit is not None or self.runtime.hooks.has_callbacks(MessageAddedEvent)

        async def after_step(loop: AgentLoopState, writes: list[tuple[str, dict[str, Any]]], _next: list[str]) -> None:
            self.adopt(loop.messages)
            if announce:
                await announce_messages(run, writes)

        try:
            record, loop = await self.runner.run(at, step_limit=step_limit, durability=durability,
                                                 invocation_state=run.invocation_state, runtime=run,
                                                 after_step=after_step,
                                                 pauses=checkpoint_pauses(self.runtime.cancellation.observed)
                                                 if checkpointing else None)
        except BaseException as exc:
            if run.emit is not None and isinstance(exc, Exception):
                run.emit({"force_stop": True, "force_stop_reason": str(exc)})
            # The store is the truth after a failed run: what it kept of the run, or else the
            # conversation as it was before this call. A session reloads it on the next call.
            self.adopt(self.loop.messages)
            self.stale = True
            if not self.session:  # a private memory store: reload it at once, nothing else writes it
                await self.restore()
            raise
        assert at.cursor is not None
        self.head, self._whole, self.detached = Head(record, at.cursor), False, False
        self.loop = loop
        self.adopt(loop.messages)
        if record.status != "interrupted":  # neither waiting on a human nor paused
            self.conversation_manager.apply_management(self.runtime.agent)
            return CallEnd(loop.stop_reason, loop, [])
        paused = self.paused()
        if paused is not None:
            from statehitl.experimental.checkpoint import Checkpoint  # only agents that checkpoint get here

            return CallEnd("checkpoint", loop, [], Checkpoint(paused, cycle))
        return CallEnd("interrupt", loop, [i.to_interrupt() for i in record.interrupts])

    def paused(self) -> CheckpointPosition | None:
        """The boundary the thread is paused at by checkpointing (as this agent last read or left it)."""
        head = self.head
        if head is None or self.detached:
            return None
        return paused_at(head.record.status, head.record.pending, bool(head.record.interrupts))

    def _label(self) -> str:
        return f"agent {self.runtime.name!r} (session thread {self.thread_id!r})"

    async def _position(self, prompt: Any, run: LoopRun, checkpointing: bool) -> tuple[Position | Denied, int]:
        """Where the loop starts for this input, and the tool cycle it starts in; every check happens
        before anything is written."""
        head = self.head
        if (isinstance(prompt, dict) and "checkpointResume" in prompt) or (
                head is not None and head.record.status == "interrupted" and not head.record.interrupts
                and not self.detached):
            return await self._from_pause(prompt, run, checkpointing)
        plan = plan_run(prompt, None if head is None or self.detached else head.record, label=self._label(),
                        none_continues=False, lists_are_input=True)
        if isinstance(plan, ResumeRun):
            assert head is not None
            denied = await self._denied_resume(run)
            if denied is not None:
                return denied, 0
            return await resume_position(self.checkpointer, head, plan.answers, self._loop_state([]),
                                         meta=plan.meta), 0
        return await self._start(prompt, run, False), 0

    async def _denied_resume(self, run: LoopRun) -> Denied | None:
        """Fire ``BeforeInvocationEvent`` for a call that goes on from where the thread stopped; if a hook
        cancels it, the reply it ends with. Nothing is written then: the answers given are not stored, and
        the thread still waits (or stays paused) where it stopped, mid-turn, where no message can join the
        conversation without leaving a tool call unanswered in it."""
        hooks = self.runtime.hooks
        if not hooks.has_callbacks(BeforeInvocationEvent):
            return None
        before = BeforeInvocationEvent(self.runtime.agent, run.invocation_state, None)
        await hooks.fire(before)
        text = cancel_text(before.cancel, DENIED_INVOCATION)
        if text is None:
            return None
        reply: Message = {"role": "assistant", "content": [{"text": text}]}
        return Denied(self.loop.model_copy(update={"messages": [*self._messages, reply], "turn": None}))

    async def _from_pause(self, prompt: Any, run: LoopRun, checkpointing: bool) -> tuple[Position | Denied, int]:
        """``_position`` for a ``checkpointResume``, or for any input to a thread paused by checkpointing."""
        resumed = checkpoint_resume(prompt, enabled=checkpointing)
        paused = self.paused()
        if resumed is not None or (paused is not None and prompt is None):
            return await self._unpause(paused, resumed, run), first_cycle(resumed)
        if is_response_list(prompt):
            raise NotInterruptedError(
                f"{self._label()} is paused at a checkpoint ({paused}), not waiting on an interrupt; go on with "
                "{'checkpointResume': {'checkpoint': result.checkpoint.to_dict()}}, or give it a new prompt"
            )
        return await self._start(prompt, run, True), 0

    async def _unpause(self, paused: CheckpointPosition | None, resumed: Checkpoint | None,
                       run: LoopRun) -> Position | Denied:
        """Go on from the pause the thread is at; refused (before anything is written) if it is not paused
        where ``resumed`` says."""
        head = self.head
        if head is None or paused is None:
            why = "it has never run" if head is None else (
                "it waits on an interrupt" if head.record.interrupts else f"its last call ended ({head.record.status})")
            raise AgentCheckpointError(
                f"{self._label()} is not paused at a checkpoint ({why}), so the checkpoint given has nothing to "
                "resume; give it a prompt instead"
            )
        if resumed is not None and resumed.position != paused:
            raise AgentCheckpointError(
                f"{self._label()} is paused {paused}, but the checkpoint given was taken {resumed.position} (an "
                "earlier pause, already resumed): resume with the checkpoint of its last result"
            )
        denied = await self._denied_resume(run)
        if denied is not None:
            return denied
        return await resume_position(self.checkpointer, head, {}, self._loop_state([]))

    async def _start(self, prompt: Any, run: LoopRun, abandon: bool) -> Position | Denied:
        """A new run from the conversation and ``prompt``. ``abandon``: the thread was paused; the run does
        not go on from there, and a turn whose tools never ran joins the conversation with error results."""
        head, hooks = self.head, self.runtime.hooks
        rewritten = self.rewritten()
        new = to_messages(prompt)
        if head is not None:
            self.checkpointer.ensure_free(head, None)
        turn = self.loop.turn if abandon else None
        closing = [] if turn is None else [cast("Message", turn), unanswered_results(turn)]
        if hooks.has_callbacks(BeforeInvocationEvent):
            before = BeforeInvocationEvent(self.runtime.agent, run.invocation_state, new)
            await hooks.fire(before)
            text = cancel_text(before.cancel, DENIED_INVOCATION)
            if text is not None:
                return await self._deny(closing, text)
            new = list(before.messages or [])
        new = [*closing, *new]
        loop = self._loop_state(new)
        if abandon:
            loop = loop.model_copy(update={"turn": None})
        self.adopt(loop.messages)
        if hooks.has_callbacks(MessageAddedEvent):
            for message in new:
                await hooks.fire(MessageAddedEvent(self.runtime.agent, message))
        return start_position(head, self.thread_id, loop, ["model"], rewritten=rewritten)

    async def _deny(self, closing: list[Message], text: str) -> Denied:
        """A new call a ``BeforeInvocationEvent`` hook cancelled: as in Strands, its prompt is dropped and the
        hook's ``text`` is the reply, recorded in the conversation (after ``closing``, the results of a paused
        turn's tool calls that never ran) and, with a session, saved as the thread's next checkpoint."""
        reply: Message = {"role": "assistant", "content": [{"text": text}]}
        if closing:  # the paused turn is closed, not resumed: the thread is no longer paused
            self.loop = self.loop.model_copy(update={"turn": None})
            self.detach()
        await self.record([*closing, reply], saved=self.session)
        return Denied(self.loop.model_copy(update={"messages": self._messages, "turn": None}))

    def _loop_state(self, new: list[Message]) -> AgentLoopState:
        """The loop state to run from: the live conversation and agent state, plus ``new`` messages."""
        messages: list[dict[str, Any]] = [*self._messages, *new]  # type: ignore[list-item]
        loop = self.loop
        values = self.runtime.state.snapshot()
        return loop.model_copy(update={
            "messages": messages,
            "agent_state": values if values is not None else loop.agent_state,
            "turn": None if new else loop.turn,
        })

    # -- direct tool calls --------------------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Hold the agent for a direct call that will be recorded: the messages it adds must not land
        in the middle of a running call, nor after a toolUse that waits on a human."""
        self.acquire(f"agent {self.runtime.name!r} is running a call, so a direct tool call cannot be recorded "
                     "in its conversation now; pass record_direct_tool_call=False to call the tool without "
                     "recording it")
        try:
            if self.stopped():
                raise AgentBusyError(
                    f"agent {self.runtime.name!r} is waiting on an interrupt, so a direct tool call cannot be "
                    "recorded in its conversation now; answer the interrupt first, or pass "
                    "record_direct_tool_call=False"
                )
            yield
        finally:
            self.release()

    async def record(self, added: list[Message], *, saved: bool) -> None:
        """Append a direct call's messages to the conversation and, if ``saved``, store it at once.

        Saved as an update of the thread (no step runs), so a new Agent on the session sees the call.
        If a ``MessageAddedEvent`` hook or the save fails (another process took the thread), the
        messages are taken back out: the conversation stays what the store holds.
        """
        if self.stale:
            await self.restore()  # an earlier call failed: record the call on what the store holds
        before = len(self._messages)
        rewritten = self.rewritten()
        # In place, as Strands does: a list the caller holds sees them.
        self._messages.extend(cast("list[dict[str, Any]]", added))
        hooks = self.runtime.hooks
        try:
            if hooks.has_callbacks(MessageAddedEvent):
                for message in added:
                    await hooks.fire(MessageAddedEvent(self.runtime.agent, message))
            if saved:
                await self.save_live({"messages": added}, rewritten, writer="direct_tool_call")
        except BaseException:
            del self._messages[before:]
            if saved:
                self.stale = True  # what the store holds now is unknown: reload before the next call
            raise
        self.conversation_manager.apply_management(self.runtime.agent)

    async def save_live(self, update: dict[str, Any], rewritten: bool, *, writer: str) -> None:
        """Write the live conversation and state as the thread's next checkpoint, as if ``update`` had been
        ``writer``'s step (no step runs: the thread is completed, and its history shows the update)."""
        head = self.head
        if head is not None:
            self.checkpointer.ensure_free(head, None)
        loop = self._loop_state([])
        at = start_position(head, self.thread_id, loop, [], rewritten=rewritten)
        assert at.cursor is not None
        record: StoredCheckpoint = await self.runner.commit_update(at.cursor, at.step, loop, writer, update,
                                                                   status="completed", pending=[])
        self.head, self._whole, self.detached = Head(record, at.cursor), False, False
        self.loop = loop
        self.adopt(self._messages)
