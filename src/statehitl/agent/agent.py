"""``Agent``: a model, tools and hooks running the agent-loop machine on the shared runner.

The agent object holds the live conversation (``messages``, ``state``) and, with a session, the
thread it is saved in. Each call checks its input against the thread (a prompt, or answers to the
pending interrupts) before anything is written, then runs the loop machine from START or re-enters
the interrupted step. A new ``Agent`` built on the same session continues where the last one stopped,
in this process or any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast

from statehitl._sync import run_sync
from statehitl.agent.conversation_manager import ConversationManager, NullConversationManager
from statehitl.agent.direct_call import ToolCaller
from statehitl.agent.input import to_messages
from statehitl.agent.loop import AgentLoopState, Invocation, agent_machine, agent_schema, current
from statehitl.agent.result import AgentMetrics, AgentResult
from statehitl.agent.state import AgentState
from statehitl.checkpoint.engine import Checkpointer, Head
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.errors import NotInterruptedError
from statehitl.handlers import PrintingCallbackHandler
from statehitl.hooks.agent_events import AfterInvocationEvent, BeforeInvocationEvent, MessageAddedEvent
from statehitl.hooks.registry import HookEvent, HookProvider, HookRegistry
from statehitl.machine import Machine
from statehitl.models.base import Model
from statehitl.resume import is_response_list, parse_responses
from statehitl.runner import Durability, Position, Runner, resume_position, start_position
from statehitl.session.manager import SessionManager
from statehitl.telemetry import trace_invocation
from statehitl.tools.executors import ConcurrentToolExecutor, ToolExecutor
from statehitl.tools.registry import ToolRegistry
from statehitl.types.content import Message, Messages

__all__ = ["Agent"]

_DEFAULT_HANDLER: Any = object()


class Agent:
    """An agent: call it with a prompt; when it stops on an interrupt, call it with the answers.

    ``model`` is a ``Model`` (or a Bedrock model id string). ``session_manager`` persists the agent
    so a new ``Agent`` with the same session resumes it; without one the conversation lives in this
    object. ``callback_handler`` receives streaming events as keyword arguments (the default prints
    the model's text; pass None for silence). ``tool_executor`` runs a batch of tool calls
    (concurrently by default). ``step_limit`` bounds the loop (two steps per cycle).
    ``conversation_manager`` decides what history stays after each call (default: all of it).
    ``record_direct_tool_call`` adds each ``agent.tool.<name>()`` call to the conversation.
    """

    def __init__(
        self,
        model: Model | str | None = None,
        tools: Sequence[Any] | None = None,
        system_prompt: str | None = None,
        callback_handler: Callable[..., Any] | None = _DEFAULT_HANDLER,
        hooks: Sequence[HookProvider | HookRegistry] | None = None,
        session_manager: SessionManager | None = None,
        state: AgentState | dict[str, Any] | None = None,
        name: str | None = None,
        agent_id: str | None = None,
        description: str | None = None,
        messages: Messages | None = None,
        tool_executor: ToolExecutor | None = None,
        step_limit: int = 500,
        durability: Durability | None = None,
        conversation_manager: ConversationManager | None = None,
        record_direct_tool_call: bool = True,
    ) -> None:
        self.model = _resolve_model(model)
        self.tool_registry = ToolRegistry(tools or ())
        self.system_prompt = system_prompt
        self.callback_handler = PrintingCallbackHandler() if callback_handler is _DEFAULT_HANDLER else callback_handler
        self.hooks = HookRegistry()
        for hook in hooks or ():
            self.hooks.add(hook)
        self.name = name or "agent"
        self.agent_id = agent_id or "default"
        self.description = description
        self.tool_executor = tool_executor or ConcurrentToolExecutor()
        self.conversation_manager = conversation_manager or NullConversationManager()
        self.step_limit = step_limit
        self.record_direct_tool_call = record_direct_tool_call
        self.session_manager = session_manager
        if session_manager is not None:
            self.checkpointer = session_manager.checkpointer
            self.thread_id = session_manager.thread_id(self.agent_id)
        else:
            self.checkpointer = Checkpointer(MemoryStorage())
            self.thread_id = f"agent-{os.urandom(16).hex()}"
        self.durability: Durability = durability or ("step" if session_manager is not None else "exit")
        self._runner = Runner(agent_machine(), agent_schema(), self.hooks, self.checkpointer, source=self,
                              index=session_manager is not None)
        self._running = threading.Lock()
        self._head: Head | None = None
        self._stale = False  # a call failed: reload the session before the next one
        self._loop = AgentLoopState()
        self._messages: list[dict[str, Any]] = self._loop.messages
        self._synced = (self._messages, 0)
        self.state = state if isinstance(state, AgentState) else AgentState(state)
        if messages:
            self.messages = messages
        if session_manager is not None:
            run_sync(self._restore())

    # -- the live conversation ----------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation in Bedrock Converse format (assigning a new list replaces it)."""
        return self._messages

    @messages.setter
    def messages(self, value: Messages | list[dict[str, Any]]) -> None:
        self._messages = [dict(m) for m in value]

    def _adopt_messages(self, messages: list[dict[str, Any]]) -> None:
        """Make ``messages`` the conversation as the loop last saw it (nodes and restores call this)."""
        self._messages = messages
        self._synced = (messages, len(messages))

    @property
    def machine(self) -> Machine:
        """The agent loop's state machine (``agent.machine.draw_mermaid()`` draws it)."""
        return agent_machine()

    @property
    def tool_names(self) -> list[str]:
        return list(self.tool_registry.names)

    @property
    def tool(self) -> ToolCaller:
        """Direct tool calls: ``agent.tool.name(**input)`` returns the tool result (no interrupts)."""
        return ToolCaller(self)

    def add_hook(self, event_type: Any, callback: Callable[[Any], Any] | None = None) -> None:
        """Register a callback: ``add_hook(EventType, fn)``, or Strands' ``add_hook(fn, EventType)``."""
        if isinstance(event_type, type) and issubclass(event_type, HookEvent) and callback is not None:
            self.hooks.add_callback(event_type, callback)
        elif callable(event_type) and isinstance(callback, type):
            self.hooks.add_callback(callback, event_type)
        else:
            raise TypeError(f"add_hook expects (EventType, callback); got ({event_type!r}, {callback!r})")

    async def _restore(self) -> None:
        """Load the session's thread, if it has one, into this agent (what a new server process does)."""
        head = await self.checkpointer.head(self.thread_id)
        self._head, self._stale = head, False
        if head is None:
            return
        record = head.record
        loop = agent_schema().load(record.values)
        self._loop = loop
        self._adopt_messages(loop.messages)
        kept = record.progress.get("tools") if record.status == "interrupted" else None
        if kept and "agent_state" in kept:
            self.state = AgentState(kept["agent_state"])  # the interrupted cycle's changes
        else:
            self.state = AgentState(loop.agent_state, changed=False)

    # -- calling ------------------------------------------------------------------------------------

    def __call__(self, prompt: Any = None, *, invocation_state: dict[str, Any] | None = None,
                 **kwargs: Any) -> AgentResult:
        """Run the agent on ``prompt`` (or answer its interrupts) and return the result."""
        return run_sync(self.invoke_async(prompt, invocation_state=invocation_state, **kwargs))

    async def invoke_async(self, prompt: Any = None, *, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> AgentResult:
        """Async ``agent(prompt)``."""
        return await self._invoke(prompt, invocation_state, kwargs, self._callback())

    async def stream_async(self, prompt: Any = None, *, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Run the agent, yielding its events as they happen; the last one is ``{"result": AgentResult}``."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        handler = self._callback()

        def emit(event: dict[str, Any]) -> None:
            queue.put_nowait(event)
            if handler is not None:
                handler(event)

        async def produce() -> AgentResult:
            try:
                return await self._invoke(prompt, invocation_state, kwargs, emit)
            finally:
                queue.put_nowait(None)

        task = asyncio.ensure_future(produce())
        try:
            while (event := await queue.get()) is not None:
                yield event
            yield {"result": await task}
        finally:
            if not task.done():
                task.cancel()

    def _callback(self) -> Callable[[dict[str, Any]], None] | None:
        handler = self.callback_handler
        if handler is None:
            return None
        return lambda event: handler(**event)

    async def _invoke(self, prompt: Any, given: dict[str, Any] | None, kwargs: dict[str, Any],
                      emit: Callable[[dict[str, Any]], None] | None) -> AgentResult:
        """Run one call; its keyword arguments join ``invocation_state``, so hooks and tools see both alike."""
        invocation_state = {**(given or {}), **kwargs}
        if not self._running.acquire(blocking=False):  # a lock, not a flag: callers may be threads
            raise RuntimeError(
                f"agent {self.name!r} is already running a call; one agent runs one call at a time "
                "(use one Agent per concurrent conversation)"
            )
        try:
            while True:
                result = await self._invoke_once(prompt, invocation_state, emit)
                after = AfterInvocationEvent(self, invocation_state, result)
                if self.hooks.has_callbacks(AfterInvocationEvent):
                    await self.hooks.fire(after)
                if after.resume is None:
                    return result
                prompt = after.resume
        finally:
            self._running.release()

    async def _invoke_once(self, prompt: Any, invocation_state: dict[str, Any],
                           emit: Callable[[dict[str, Any]], None] | None) -> AgentResult:
        if self._stale:
            await self._restore()  # an earlier call failed: start from what the store holds
        trace = trace_invocation(self, self.thread_id)
        run = Invocation(self, invocation_state, AgentMetrics(), emit, trace)
        if emit is not None:
            emit({"init_event_loop": True})
        try:
            result = await self._run(prompt, run)
        except BaseException as exc:
            if trace is not None:
                trace.end("error", run.metrics.accumulated_usage, error=exc)
            raise
        if trace is not None:
            trace.end(result.stop_reason, run.metrics.accumulated_usage, result.interrupts)
        return result

    async def _run(self, prompt: Any, run: Invocation) -> AgentResult:
        at = await self._position(prompt, self._head, run)
        if at is None:  # a BeforeInvocationEvent hook cancelled the call
            return self._result("cancelled", self._loop, run, [])
        token = current.set(run)
        try:
            record, loop = await self._runner.run(at, step_limit=self.step_limit, durability=self.durability,
                                                  invocation_state=run.invocation_state)
        except BaseException as exc:
            if run.emit is not None and isinstance(exc, Exception):
                run.emit({"force_stop": True, "force_stop_reason": str(exc)})
            # The store is the truth after a failed run: what it kept of the run, or else the
            # conversation as it was before this call. A session reloads it on the next call.
            self._adopt_messages(self._loop.messages)
            self._stale = True
            if self.session_manager is None:
                await self._restore()
            raise
        finally:
            current.reset(token)
        self._head = Head(record, at.cursor)
        self._loop = loop
        self._adopt_messages(loop.messages)
        interrupts = [i.to_interrupt() for i in record.interrupts]
        if not interrupts:
            self.conversation_manager.apply_management(self)
        stop_reason = "interrupt" if record.status == "interrupted" else loop.stop_reason
        return self._result(stop_reason, loop, run, interrupts)

    async def _position(self, prompt: Any, head: Head | None, run: Invocation) -> Position | None:
        """Where the loop starts for this input; every check happens before anything is written."""
        label = f"agent {self.name!r} (session thread {self.thread_id!r})"
        rewritten = self._rewritten()
        if head is not None and head.record.status == "interrupted":
            record = head.record
            pending = [i.to_interrupt() for i in record.interrupts]
            answers = parse_responses(prompt, pending, thread=label)
            if self.hooks.has_callbacks(BeforeInvocationEvent):
                await self.hooks.fire(BeforeInvocationEvent(self, run.invocation_state, None))
            return await resume_position(self.checkpointer, head, answers, self._loop_state([]))
        if is_response_list(prompt):
            raise NotInterruptedError(
                f"{label} is not waiting on any interrupt; interrupt responses can only answer an agent whose "
                "last result had stop_reason == 'interrupt'"
            )
        new = to_messages(prompt)
        if head is not None:
            self.checkpointer.ensure_free(head, None)
        if self.hooks.has_callbacks(BeforeInvocationEvent):
            before = BeforeInvocationEvent(self, run.invocation_state, new)
            await self.hooks.fire(before)
            if before.cancel:
                return None
            new = list(before.messages or [])
        loop = self._loop_state(new)
        self._adopt_messages(loop.messages)
        if self.hooks.has_callbacks(MessageAddedEvent):
            for message in new:
                await self.hooks.fire(MessageAddedEvent(self, message))
        at = start_position(head, self.thread_id, loop, ["model"])
        if rewritten:
            at.cursor.migrated = True  # the history was edited, not appended to: store it whole once
        return at

    def _rewritten(self) -> bool:
        """Whether the conversation was edited since the loop last saw it, rather than only appended to."""
        synced, length = self._synced
        return self._messages is not synced or len(self._messages) < length

    def _loop_state(self, new: list[Message]) -> AgentLoopState:
        """The loop state to run from: the live conversation and agent state, plus ``new`` messages."""
        messages: list[dict[str, Any]] = [*self._messages, *new]  # type: ignore[list-item]
        loop = self._loop
        values = self.state.snapshot()
        return loop.model_copy(update={
            "messages": messages,
            "agent_state": values if values is not None else loop.agent_state,
            "turn": None if new else loop.turn,
        })

    # -- direct tool calls (``direct_call``) ------------------------------------------------------------

    @contextlib.contextmanager
    def _recording_call(self) -> Iterator[None]:
        """Hold the agent for a direct call that will be recorded: the messages it adds must not land
        in the middle of a running call, nor after a toolUse that waits on a human."""
        if not self._running.acquire(blocking=False):
            raise RuntimeError(
                f"agent {self.name!r} is running a call, so a direct tool call cannot be recorded in its "
                "conversation now; pass record_direct_tool_call=False to call the tool without recording it"
            )
        try:
            if self._head is not None and self._head.record.status == "interrupted":
                raise RuntimeError(
                    f"agent {self.name!r} is waiting on an interrupt, so a direct tool call cannot be recorded "
                    "in its conversation now; answer the interrupt first, or pass record_direct_tool_call=False"
                )
            yield
        finally:
            self._running.release()

    async def _record_direct_call(self, added: list[Message]) -> None:
        """Append a direct call's messages to the conversation and, with a session, save it at once.

        Saved as an update of the thread (no step runs), so a new Agent on the session sees the call.
        If a ``MessageAddedEvent`` hook or the save fails (another process took the thread), the
        messages are taken back out: the conversation stays what the store holds.
        """
        if self._stale:
            await self._restore()  # an earlier call failed: record the call on what the store holds
        before = len(self._messages)
        rewritten = self._rewritten()
        # In place, as Strands does: a list the caller holds sees them.
        self._messages.extend(cast("list[dict[str, Any]]", added))
        try:
            if self.hooks.has_callbacks(MessageAddedEvent):
                for message in added:
                    await self.hooks.fire(MessageAddedEvent(self, message))
            if self.session_manager is not None:
                await self._save_update({"messages": added}, rewritten)
        except BaseException:
            del self._messages[before:]
            if self.session_manager is not None:
                self._stale = True  # what the store holds now is unknown: reload before the next call
            raise
        self.conversation_manager.apply_management(self)

    async def _save_update(self, update: dict[str, Any], rewritten: bool) -> None:
        """Write the live conversation and state as the thread's next checkpoint, as if ``update`` had
        been a step's (no step runs: the thread stays completed, and its history shows the update)."""
        head = self._head
        if head is not None:
            self.checkpointer.ensure_free(head, None)
        loop = self._loop_state([])
        at = start_position(head, self.thread_id, loop, [])
        if rewritten:
            at.cursor.migrated = True  # an edited history is stored whole once
        record = await self._runner.commit_update(at.cursor, at.step, loop, "direct_tool_call", update,
                                                  status="completed", pending=[])
        self._head = Head(record, at.cursor)
        self._loop = loop
        self._adopt_messages(self._messages)

    def _result(self, stop_reason: str, loop: AgentLoopState, run: Invocation, interrupts: list[Any]) -> AgentResult:
        message: Any = loop.turn
        if message is None:
            message = next((m for m in reversed(loop.messages) if m.get("role") == "assistant"),
                           {"role": "assistant", "content": []})
        return AgentResult(stop_reason, message, run.metrics, run.invocation_state, interrupts)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model!r}, tools={self.tool_names})"


def _resolve_model(model: Model | str | None) -> Model:
    if isinstance(model, str):
        from statehitl.models import BedrockModel

        return BedrockModel(model_id=model)
    if model is None:
        raise TypeError(
            "Agent needs a model: Agent(model=BedrockModel(...)), a Bedrock model id string, OpenAIModel(...) for "
            "a local OpenAI-compatible server, or statehitl.models.ScriptedModel([...]) for tests and demos"
        )
    if not callable(getattr(model, "stream", None)):
        raise TypeError(f"model must implement statehitl.models.Model (a stream() method); got {model!r}")
    return model
