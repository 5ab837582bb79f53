"""An agent as a node of another machine (``agent.as_node()``): the loop on the shared runner, nested.

The agent's conversation and state live in the enclosing thread's checkpoint as its sub-state
(``messages``, stored as deltas, and ``agent_state``), not in a session of its own. A call adds the
task as a user message and runs the same loop machine an agent called on its own runs, with the same
hooks (``BeforeInvocationEvent`` ... ``AfterInvocationEvent``), tools and interrupts; it uses only
the agent's public ``AgentRuntime``. When the loop stops on an interrupt, what it did so far in this
call (messages added, the pending turn, the runner's position) is kept by the enclosing node and
handed back on resume, so nothing already done runs again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from statehitl.agent.binary import to_json_safe
from statehitl.agent.cancellation import DENIED_INVOCATION
from statehitl.agent.input import to_messages
from statehitl.agent.loop import agent_machine, announce_messages, loop_result
from statehitl.agent.loop_state import AgentLoopState, agent_schema, resumed_state
from statehitl.agent.result import AgentMetrics, AgentResult
from statehitl.agent.runtime import AgentRuntime, EmitEvent, LoopRun
from statehitl.agent.state import AgentState
from statehitl.hooks.agent_events import AfterInvocationEvent, BeforeInvocationEvent, MessageAddedEvent
from statehitl.hooks.registry import cancel_text
from statehitl.nesting import NodeCall, NodeDone, NodeStopped, kept_run, resumed_run, started_run
from statehitl.position import Position, RunEnd
from statehitl.runner import Runner
from statehitl.telemetry import trace_invocation
from statehitl.types.content import Message

Mirror = Callable[[list[dict[str, Any]]], None]


class AgentNode:
    """``MachineNode`` for an agent: built by ``Agent.as_node()``, usable by any enclosing machine.

    ``messages`` and ``state`` are the sub-state of a thread that never ran it (the agent's own when
    it was added); ``mirror`` shows each step's conversation in the live agent object.
    """

    append_channels = frozenset({"messages"})

    def __init__(self, runtime: AgentRuntime, *, messages: list[dict[str, Any]], state: dict[str, Any],
                 step_limit: int, mirror: Mirror | None = None,
                 handler: Callable[[], EmitEvent | None] | None = None) -> None:
        self.runtime = runtime
        self.step_limit = step_limit
        self._handler = handler
        """The agent's callback handler as it is at each call: it sees the node's events as it would the
        agent's own (Strands' default prints a Graph node's text as it streams)."""
        self._initial = {"messages": to_json_safe(messages), "agent_state": state}
        self._mirror = mirror
        self._runner = Runner(agent_machine(), agent_schema(), runtime.hooks, None, source=runtime.agent)
        self._last: tuple[list[Any], AgentLoopState] | None = None
        """The conversation this node last handed back (as stored) and its loop state: the next call,
        given that conversation again, starts from the loop state instead of reading it all again."""

    def node_state(self) -> dict[str, Any]:
        return {"messages": list(self._initial["messages"]), "agent_state": dict(self._initial["agent_state"])}

    def adopt_node_state(self, state: dict[str, Any]) -> None:
        loop = at_start(state)
        self.runtime.state = AgentState(loop.agent_state, changed=False)
        if self._mirror is not None:
            self._mirror(loop.messages)

    async def run_node(self, call: NodeCall) -> NodeDone | NodeStopped:
        """One call of the agent as a node; ``agent.cancel()`` cancels it as it cancels a call of its own."""
        cancellation = self.runtime.cancellation
        cancellation.begin(None)
        try:
            return await self._calls(call)
        finally:
            cancellation.end()

    async def _calls(self, call: NodeCall) -> NodeDone | NodeStopped:
        runtime, task, sub_state = self.runtime, call.task, call.state
        emit = _both(call.emit, None if self._handler is None else self._handler())
        while True:
            run = LoopRun(runtime, call.invocation_state, AgentMetrics(), emit,
                          trace_invocation(runtime.agent, call.thread_id))
            at = await self._position(task, sub_state, call, run)
            if isinstance(at, AgentLoopState):  # a BeforeInvocationEvent hook cancelled the call
                return await self._denied(at, sub_state, run, call)
            if emit is not None:
                emit({"init_event_loop": True})
            end = await self._run(at, run, call)
            stop_reason = "interrupt" if end.status == "interrupted" else end.state.stop_reason
            result = loop_result(stop_reason, end.state, run, end.interrupts)
            if run.trace is not None:
                run.trace.end(stop_reason, run.metrics.accumulated_usage, end.interrupts)
            if end.status == "interrupted":
                _announce(call, result)
                return NodeStopped(end.interrupts, kept_run(end, agent_schema(), sub_state), result)
            sub_state = self._ended(sub_state, end.state)
            after = await self._after(run, result)
            if after is None:
                _announce(call, result)
                # As a Strands Graph judges its agent: cancelled at once, it failed; stopped after its tools, done
                aborted = stop_reason == "cancelled" and runtime.cancellation.observed()
                return NodeDone(sub_state, result, run.metrics.accumulated_usage,
                                status="failed" if aborted else "completed")
            task, call.kept = after, None

    def _ended(self, sub_state: dict[str, Any], loop: AgentLoopState) -> dict[str, Any]:
        """The sub-state a call that ended in ``loop`` leaves (the loop only appends: only what it added is
        dumped), remembered for the next call."""
        stored = sub_state.get("messages", [])
        messages = [*stored, *agent_schema().dump_items(loop, "messages", len(stored))]
        self._last = (messages, loop)
        return {"messages": messages, "agent_state": loop.agent_state}

    async def _denied(self, loop: AgentLoopState, sub_state: dict[str, Any], run: LoopRun,
                      call: NodeCall) -> NodeDone:
        """A call its ``BeforeInvocationEvent`` cancelled, as in Strands: the hook's text is the agent's reply,
        kept in its conversation, and the call is done (``end_turn``); ``AfterInvocationEvent`` gets no result."""
        result = loop_result("end_turn", loop, run, [])
        hooks = self.runtime.hooks
        if hooks.has_callbacks(AfterInvocationEvent):
            await hooks.fire(AfterInvocationEvent(self.runtime.agent, run.invocation_state, None))
        _announce(call, result)
        return NodeDone(self._ended(sub_state, loop), result, run.metrics.accumulated_usage)

    async def _position(self, task: Any, sub_state: dict[str, Any], call: NodeCall,
                        run: LoopRun) -> Position | AgentLoopState:
        """Where the loop starts: after the task as a new user message, or where the call last stopped; or, if
        a ``BeforeInvocationEvent`` hook cancels the new call, the conversation it ends in instead."""
        runtime, hooks = self.runtime, self.runtime.hooks
        if call.kept is not None:
            at = resumed_run(call.kept, agent_schema(), sub_state, call)
            runtime.state = resumed_state(at.state, at.progress)
            if hooks.has_callbacks(BeforeInvocationEvent):
                await hooks.fire(BeforeInvocationEvent(runtime.agent, run.invocation_state, None))
            return at
        loop = self._start(sub_state)  # only a new call starts from the stored conversation
        runtime.state = AgentState(loop.agent_state, changed=False)
        new = to_messages(task)
        if hooks.has_callbacks(BeforeInvocationEvent):
            before = BeforeInvocationEvent(runtime.agent, run.invocation_state, new)
            await hooks.fire(before)
            text = cancel_text(before.cancel, DENIED_INVOCATION)
            if text is not None:
                return await self._reply_instead(loop, text)
            new = list(before.messages or [])
        loop = loop.model_copy(update={"messages": [*loop.messages, *new]})
        if self._mirror is not None:
            self._mirror(loop.messages)
        if hooks.has_callbacks(MessageAddedEvent):
            for message in new:
                await hooks.fire(MessageAddedEvent(runtime.agent, message))
        return started_run(call, loop, ["model"])

    async def _reply_instead(self, loop: AgentLoopState, text: str) -> AgentLoopState:
        """``loop`` with the reply ``text`` in place of the task, announced as every new message is."""
        reply: Message = {"role": "assistant", "content": [{"text": text}]}
        loop = loop.model_copy(update={"messages": [*loop.messages, reply]})
        if self._mirror is not None:
            self._mirror(loop.messages)
        if self.runtime.hooks.has_callbacks(MessageAddedEvent):
            await self.runtime.hooks.fire(MessageAddedEvent(self.runtime.agent, reply))
        return loop

    def _start(self, sub_state: dict[str, Any]) -> AgentLoopState:
        """The loop state of ``sub_state``: the one this node ended its last call with, when that call's
        conversation is what it is given (the same stored messages), else read from it."""
        messages = sub_state.get("messages", [])
        if self._last is not None:
            stored, loop = self._last
            same = len(messages) == len(stored) and (not messages or messages[-1] is stored[-1])
            if same and loop.agent_state == sub_state.get("agent_state", {}):
                return loop
        return at_start(sub_state)

    async def _run(self, at: Position, run: LoopRun, call: NodeCall) -> RunEnd:
        async def after_step(loop: AgentLoopState, writes: list[tuple[str, dict[str, Any]]], _next: list[str]) -> None:
            if self._mirror is not None:
                self._mirror(loop.messages)
            await announce_messages(run, writes)

        try:
            with contextlib.nullcontext() if run.trace is None else run.trace.current():
                return await self._runner.run_nested(at, step_limit=self.step_limit,
                                                     invocation_state=call.invocation_state,
                                                     prefix=call.interrupts.prefix, thread_id=call.thread_id,
                                                     runtime=run, after_step=after_step)
        except BaseException as exc:
            if run.trace is not None:
                run.trace.end("error", run.metrics.accumulated_usage, error=exc)
            raise

    async def _after(self, run: LoopRun, result: AgentResult) -> Any:
        """Fire ``AfterInvocationEvent``; the input it asks to run next (``resume``), if any."""
        hooks = self.runtime.hooks
        if not hooks.has_callbacks(AfterInvocationEvent):
            return None
        after = AfterInvocationEvent(self.runtime.agent, run.invocation_state, result)
        await hooks.fire(after)
        return after.resume


def _both(stream: EmitEvent | None, handler: EmitEvent | None) -> EmitEvent | None:
    """One emitter for the enclosing run's stream and the agent's callback handler (either may be None)."""
    if stream is None or handler is None:
        return stream or handler

    def emit(event: dict[str, Any]) -> None:
        stream(event)
        handler(event)

    return emit


def _announce(call: NodeCall, result: AgentResult) -> None:
    """End the node's events with its result, as an agent's own stream ends (Strands forwards it too)."""
    if call.emit is not None:
        call.emit({"result": result})


def at_start(sub_state: dict[str, Any]) -> AgentLoopState:
    """The loop state a node call starts from: its stored conversation and agent state.

    A node that has not run yet in its thread (every node of a new graph, the common case) starts from
    nothing: the defaults need no reading, which would cost about as much as the rest of its set-up."""
    messages, agent_state = sub_state.get("messages", []), sub_state.get("agent_state", {})
    if not messages and not agent_state:
        return AgentLoopState()
    return agent_schema().load({"messages": messages, "agent_state": agent_state})
