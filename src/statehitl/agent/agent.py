"""``Agent``: a model, tools and hooks running the agent-loop machine on the shared runner.

The agent object holds the live conversation (``messages``, ``state``) and, with a session, the
thread it is saved in. Each call checks its input against the thread (a prompt, or answers to the
pending interrupts) before anything is written, then runs the loop machine from START or re-enters
the interrupted step. A new ``Agent`` built on the same session continues where the last one stopped,
in this process or any other.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from statehitl._sync import run_sync
from statehitl.agent.conversation_manager import ConversationManager, NullConversationManager
from statehitl.agent.direct_call import ToolCaller
from statehitl.agent.loop import agent_machine, loop_result
from statehitl.agent.node import AgentNode
from statehitl.agent.result import AgentMetrics, AgentResult
from statehitl.agent.runtime import AgentRuntime, EmitEvent, LoopRun
from statehitl.agent.state import AgentState
from statehitl.agent.thread import AgentThread
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.checkpoint.records import AuditEntry
from statehitl.event_stream import stream_run, with_model_text
from statehitl.handlers import PrintingCallbackHandler
from statehitl.hooks.agent_events import AfterInvocationEvent
from statehitl.hooks.registry import HookEvent, HookOrder, HookProvider, HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine
from statehitl.models.base import Model
from statehitl.resumable import ResumableApp, Resumed
from statehitl.session.manager import SessionManager
from statehitl.telemetry import trace_invocation
from statehitl.thread_run import Durability
from statehitl.tools.executors import ConcurrentToolExecutor, ToolExecutor
from statehitl.tools.registry import ToolRegistry
from statehitl.types.content import Messages

if TYPE_CHECKING:
    from statehitl.interventions import InterventionHandler
    from statehitl.storage.storage import Storage
    from statehitl.types._snapshot import Snapshot, SnapshotField, SnapshotPreset

__all__ = ["Agent"]

_DEFAULT_HANDLER: Any = object()


class Agent(ResumableApp):
    """An agent: call it with a prompt; when it stops on an interrupt, call it with the answers.

    ``model`` is a ``Model`` (or a Bedrock model id string). ``session_manager`` persists the agent
    so a new ``Agent`` with the same session resumes it; without one the conversation lives in this
    object. ``callback_handler`` receives streaming events as keyword arguments (the default prints
    the model's text; pass None for silence). ``tool_executor`` runs a batch of tool calls
    (concurrently by default). ``step_limit`` bounds the loop (two steps per cycle).
    ``conversation_manager`` decides what history stays after each call (default: all of it).
    ``record_direct_tool_call`` adds each ``agent.tool.<name>()`` call to the conversation.
    ``interventions`` are control layers (``statehitl.interventions``) that decide, in order, on each
    lifecycle event: after the hooks on Before* events, before them on After* events.
    ``checkpointing=True`` pauses at both boundaries of every tool cycle (``stop_reason ==
    "checkpoint"``; see ``statehitl.experimental.checkpoint``). ``storage`` (a ``statehitl.storage``
    store) is where the subsystems that take a store keep theirs when not given one: a
    ``SnapshotSessionManager`` without ``storage=`` uses it.
    """

    def __init__(  # noqa: PLR0917 - Strands' Agent(model, tools, system_prompt, ...) is called positionally
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
        interventions: Sequence[InterventionHandler] | None = None,
        checkpointing: bool = False,
        storage: Storage | None = None,
    ) -> None:
        registry = HookRegistry()
        for hook in hooks or ():
            registry.add(hook)
        if interventions:  # imported only by agents that have some: nothing is paid for the layer otherwise
            from statehitl.interventions.registry import InterventionRegistry

            InterventionRegistry(interventions, registry)
        self.runtime = AgentRuntime(
            model=_resolve_model(model),
            tools=ToolRegistry(tools or ()),
            hooks=registry,
            tool_executor=tool_executor or ConcurrentToolExecutor(),
            state=state if isinstance(state, AgentState) else AgentState(state),
            system_prompt=system_prompt,
            name=name or "agent",
            owner=self,
        )
        """What the agent loop uses of this agent; also how an orchestrator runs it as one of its nodes."""
        self.callback_handler = PrintingCallbackHandler() if callback_handler is _DEFAULT_HANDLER else callback_handler
        self.agent_id = agent_id or "default"
        self.description = description
        self.step_limit = step_limit
        self.record_direct_tool_call = record_direct_tool_call
        self.checkpointing = checkpointing
        """Whether calls pause at every tool cycle's boundaries (``Agent(checkpointing=True)``)."""
        self.storage = storage
        """The default store of the subsystems that take one (``Agent(storage=...)``), or None."""
        self._model_state: dict[str, Any] = {}  # a snapshot's model_state, kept to be taken again
        self.session_manager = session_manager
        if session_manager is not None:
            session_manager.attach_storage(storage)
            checkpointer = session_manager.checkpointer
            thread_id = session_manager.thread_id(self.agent_id)
        else:
            checkpointer = Checkpointer(MemoryStorage())
            thread_id = f"agent-{os.urandom(16).hex()}"
        self.durability: Durability = durability or ("step" if session_manager is not None else "exit")
        self._thread = AgentThread(self.runtime, checkpointer, thread_id, session=session_manager is not None,
                                   conversation_manager=conversation_manager or NullConversationManager())
        if messages:
            self.messages = messages
        if session_manager is not None:
            run_sync(self._thread.restore())
            session_manager.initialize(self)

    # -- what the agent is made of (the runtime's, read and set here as Strands users do) ----------------

    @property
    def model(self) -> Model:
        return self.runtime.model

    @model.setter
    def model(self, value: Model) -> None:
        self.runtime.model = value

    @property
    def system_prompt(self) -> str | None:
        return self.runtime.system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        self.runtime.system_prompt = value

    @property
    def state(self) -> AgentState:
        """The agent's key-value store, saved with the session."""
        return self.runtime.state

    @state.setter
    def state(self, value: AgentState | dict[str, Any]) -> None:
        self.runtime.state = value if isinstance(value, AgentState) else AgentState(value)

    @property
    def name(self) -> str:
        return self.runtime.name

    @name.setter
    def name(self, value: str) -> None:
        self.runtime.name = value

    @property
    def hooks(self) -> HookRegistry:
        return self.runtime.hooks

    @property
    def tool_registry(self) -> ToolRegistry:
        return self.runtime.tools

    @property
    def tool_executor(self) -> ToolExecutor:
        return self.runtime.tool_executor

    @tool_executor.setter
    def tool_executor(self, value: ToolExecutor) -> None:
        self.runtime.tool_executor = value

    @property
    def conversation_manager(self) -> ConversationManager:
        return self._thread.conversation_manager

    @conversation_manager.setter
    def conversation_manager(self, value: ConversationManager) -> None:
        self._thread.conversation_manager = value

    @property
    def checkpointer(self) -> Checkpointer:
        """Where the agent's thread lives: its session's store, or a private one in memory."""
        return self._thread.checkpointer

    @property
    def thread_id(self) -> str:
        """The agent's thread in ``checkpointer`` (its session's thread for ``agent_id``)."""
        return self._thread.thread_id

    # -- the live conversation ----------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation in Bedrock Converse format (assigning a new list replaces it)."""
        return self._thread.messages

    @messages.setter
    def messages(self, value: Messages | list[dict[str, Any]]) -> None:
        self._thread.messages = value  # type: ignore[assignment]

    @property
    def interrupts(self) -> list[Interrupt]:
        """The interrupts the agent waits on: answer them with ``agent([{"interruptResponse": ...}])``.

        Read from its session when the agent was built, so an Agent rebuilt in a new process lists
        what the last one left waiting.
        """
        return self._thread.pending_interrupts()

    def audit(self) -> list[AuditEntry]:
        """Every answer given to this agent's interrupts, oldest first: who, what, when, with what outcome."""
        return run_sync(self.aaudit())

    async def aaudit(self) -> list[AuditEntry]:
        """Async ``audit``."""
        return await self._thread.checkpointer.audit(self._thread.thread_id)

    # -- snapshots ----------------------------------------------------------------------------------

    def take_snapshot(self, *, preset: SnapshotPreset | None = None, include: list[SnapshotField] | None = None,
                      exclude: list[SnapshotField] | None = None, app_data: dict[str, Any] | None = None) -> Snapshot:
        """Capture the agent: the ``preset``'s fields (``"session"``), plus ``include``, less ``exclude``;
        ``app_data`` is stored as given. See ``statehitl.types._snapshot`` for the fields."""
        return run_sync(self.atake_snapshot(preset=preset, include=include, exclude=exclude, app_data=app_data))

    async def atake_snapshot(self, *, preset: SnapshotPreset | None = None, include: list[SnapshotField] | None = None,
                             exclude: list[SnapshotField] | None = None,
                             app_data: dict[str, Any] | None = None) -> Snapshot:
        """Async ``take_snapshot``."""
        from statehitl.agent.snapshots import capture, fields_of

        return await capture(self._thread, self.conversation_manager, fields=fields_of(preset, include, exclude),
                             system_prompt=self.system_prompt, model_state=self._model_state, app_data=app_data)

    def load_snapshot(self, snapshot: Snapshot) -> None:
        """Restore the fields ``snapshot`` holds (the others stay as they are). ``SnapshotError``, with the
        agent unchanged, for one it cannot load; ``AgentBusyError`` while the agent runs a call."""
        run_sync(self.aload_snapshot(snapshot))

    async def aload_snapshot(self, snapshot: Snapshot) -> None:
        """Async ``load_snapshot``."""
        from statehitl.agent.snapshots import apply_load, plan_load

        self._thread.acquire(f"agent {self.name!r} is running a call; load a snapshot between calls")
        try:
            plan = await plan_load(self._thread, self.conversation_manager, snapshot)
            await apply_load(plan, self._thread, self.conversation_manager)
            if plan.data.model_state is not None:
                self._model_state = dict(plan.data.model_state)
        finally:
            self._thread.release()

    @property
    def machine(self) -> Machine:
        """The agent loop's state machine (``agent.machine.draw_mermaid()`` draws it)."""
        return agent_machine()

    @property
    def tool_names(self) -> list[str]:
        return list(self.runtime.tools.names)

    @property
    def tool(self) -> ToolCaller:
        """Direct tool calls: ``agent.tool.name(**input)`` returns the tool result (no interrupts)."""
        return ToolCaller(self.runtime, self._thread, self.record_direct_tool_call)

    def as_node(self) -> AgentNode:
        """This agent as a node of another machine (``statehitl.nesting``): a Graph or Swarm node, or
        hosted by a StateGraph node with ``call_machine_node``.

        The node starts from the agent's messages and state as they are now; its conversation then
        lives in the enclosing thread, and each step shows in ``agent.messages``. Its events go to the
        agent's ``callback_handler`` too, as when it is called on its own.
        """
        return AgentNode(self.runtime, messages=self.messages, state=self.state.get(), step_limit=self.step_limit,
                         mirror=self._thread.adopt, handler=self._callback)

    def add_hook(self, event_type: Any, callback: Callable[[Any], Any] | None = None, *,
                 order: float = HookOrder.DEFAULT) -> None:
        """Register a callback: ``add_hook(EventType, fn)``, or Strands' ``add_hook(fn, EventType)`` and
        ``add_hook(fn)`` (the type from ``fn``'s annotation). ``order``: lower runs first (``HookOrder``)."""
        if isinstance(event_type, type) and issubclass(event_type, HookEvent) and callback is not None:
            self.hooks.add_callback(event_type, callback, order=order)
        elif callable(event_type) and isinstance(callback, type):
            self.hooks.add_callback(callback, event_type, order=order)
        elif callable(event_type) and callback is None:
            self.hooks.add_callback(None, event_type, order=order)
        else:
            raise TypeError(f"add_hook expects (EventType, callback); got ({event_type!r}, {callback!r})")

    # -- calling ------------------------------------------------------------------------------------

    @property
    def thread_store(self) -> Checkpointer:
        """Where its threads live (``ResumableApp``)."""
        return self._thread.checkpointer

    @property
    def machine_name(self) -> str:
        """The machine it runs (``ResumableApp``)."""
        return self.machine.name

    @property
    def own_thread(self) -> str | None:
        """Its session thread (``ResumableApp``)."""
        return self.thread_id

    async def aresume_stored(self, thread_id: str) -> Resumed:
        """A bare ``agent()`` on its thread: apply the stored answers, or continue (``ResumableApp``)."""
        self.check_thread(thread_id)
        result = await self.invoke_async(None)
        status = "interrupted" if result.stop_reason == "interrupt" else "completed"
        return Resumed(status, tuple(result.interrupts), result)

    def __call__(self, prompt: Any = None, *, invocation_state: dict[str, Any] | None = None,
                 cancel_signal: threading.Event | None = None, **kwargs: Any) -> AgentResult:
        """Run the agent on ``prompt`` (or answer its interrupts) and return the result.

        ``cancel_signal``: the caller's event that cancels this call once set (a client that went away, a
        deadline), as ``cancel()`` does; it is read, never set or cleared, so clear it before reusing it.
        """
        return run_sync(self.invoke_async(prompt, invocation_state=invocation_state, cancel_signal=cancel_signal,
                                          **kwargs))

    async def invoke_async(self, prompt: Any = None, *, invocation_state: dict[str, Any] | None = None,
                           cancel_signal: threading.Event | None = None, **kwargs: Any) -> AgentResult:
        """Async ``agent(prompt)``."""
        return await self._invoke(prompt, invocation_state, kwargs, self._callback(), cancel_signal)

    async def stream_async(self, prompt: Any = None, *, invocation_state: dict[str, Any] | None = None,
                           cancel_signal: threading.Event | None = None,
                           **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Run the agent, yielding its events as they happen; the last one is ``{"result": AgentResult}``."""
        async for event in stream_run(
                lambda emit: self._invoke(prompt, invocation_state, kwargs, emit, cancel_signal),
                lambda result: {"result": result}, self._callback()):
            yield event

    def cancel(self, *, message: str | None = None, after_current_tools: bool = False) -> None:
        """Cancel the running call (or, between calls, the next one), from any thread: Strands' ``cancel``.

        The call stops at its next cancellation-safe point (in the model's stream, before a tool batch,
        between the tools of a sequential one, after a batch) and returns ``stop_reason == "cancelled"``;
        what it did so far is in the conversation and the thread, which goes on with the next prompt.
        ``after_current_tools=True`` lets the tools already asked for run and stops before the model is
        called again (a tool that ends the loop); a call that asks for no more tools then ends as it would.
        ``message`` is the text of the assistant message the cancelled call ends with. An interrupt takes
        precedence: a call whose tools wait on a human stops on its interrupt.
        """
        self.runtime.cancellation.request(message=message, after_current_tools=after_current_tools)

    @property
    def cancel_signal(self) -> threading.Event:
        """The agent's cancellation signal: set by ``cancel()`` or the running call's ``cancel_signal``, cleared
        when a call ends. Tools get it as ``tool_context.cancel_signal``; read it only."""
        return self.runtime.cancellation.signal

    def _callback(self) -> EmitEvent | None:
        handler = self.callback_handler
        if handler is None:
            return None
        return lambda event: handler(**event)

    async def _invoke(self, prompt: Any, given: dict[str, Any] | None, kwargs: dict[str, Any],
                      emit: EmitEvent | None, cancel_signal: threading.Event | None) -> AgentResult:
        """Run one call; its keyword arguments join ``invocation_state``, so hooks and tools see both alike."""
        invocation_state = {**(given or {}), **kwargs}
        emit = with_model_text(emit)
        self._thread.acquire()
        cancellation = self.runtime.cancellation
        cancellation.begin(cancel_signal)
        try:
            while True:
                result, denied = await self._invoke_once(prompt, invocation_state, emit)
                # A call its BeforeInvocationEvent cancelled has no result to show or go on from (Strands)
                after = AfterInvocationEvent(self, invocation_state, None if denied else result)
                if self.hooks.has_callbacks(AfterInvocationEvent):
                    await self.hooks.fire(after)
                if after.resume is None or denied:
                    return result
                prompt = after.resume
        finally:
            cancellation.end()
            self._thread.release()

    async def _invoke_once(self, prompt: Any, invocation_state: dict[str, Any],
                           emit: EmitEvent | None) -> tuple[AgentResult, bool]:
        trace = trace_invocation(self, self.thread_id)
        run = LoopRun(self.runtime, invocation_state, AgentMetrics(), emit, trace)
        try:
            with contextlib.nullcontext() if trace is None else trace.current():
                end = await self._thread.run(prompt, run, step_limit=self.step_limit, durability=self.durability,
                                             checkpointing=self.checkpointing)
        except BaseException as exc:
            if trace is not None:
                trace.end("error", run.metrics.accumulated_usage, error=exc)
            raise
        if trace is not None:
            trace.end(end.stop_reason, run.metrics.accumulated_usage, end.interrupts)
        result = loop_result(end.stop_reason, end.loop, run, end.interrupts)
        result.checkpoint = end.checkpoint
        return result, end.denied

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
