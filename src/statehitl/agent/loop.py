"""The agent loop as a machine: ``model`` → ``tools`` → ``model`` … → END.

One machine serves every agent: its nodes find what they need in ``ctx.runtime``, the ``LoopRun`` of
the call (the agent's ``AgentRuntime`` and this call's invocation state, metrics and stream), so
constructing an agent — which the seed's server pattern does on every request — builds no graph.

Nodes only compute: each returns its update (new messages, the pending ``turn``, the agent state),
and the runner applies it. Whoever runs the loop makes the applied messages part of the live
conversation after each step (``announce_messages``), as StateGraph apps read their state after the
run: the loop never touches an agent's ``messages`` itself.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from statehitl.agent.cancellation import CANCELLED_BY_USER, StreamWatch
from statehitl.agent.loop_state import AgentLoopState, agent_schema, state_update
from statehitl.agent.result import AgentResult
from statehitl.agent.runtime import LoopRun
from statehitl.agent.state import AgentState
from statehitl.agent.tool_batch import run_tools
from statehitl.hooks.agent_events import (
    AfterModelCallEvent,
    BeforeModelCallEvent,
    MessageAddedEvent,
    ModelStopResponse,
)
from statehitl.hooks.registry import cancel_text
from statehitl.interrupt import Interrupt
from statehitl.machine import END, START, Edge, Machine, NodeSpec
from statehitl.models.streaming import ModelTurn, collect_turn
from statehitl.position import NodeContext
from statehitl.routers import Router
from statehitl.types.content import Message


@cache
def agent_machine() -> Machine:
    """The loop's machine (built once per process)."""
    return Machine(
        [NodeSpec.from_callable("model", call_model), NodeSpec.from_callable("tools", run_tools)],
        [Edge(START, "model")],
        [
            Router("model", _after_model, targets=("tools", END)),
            Router("tools", _after_tools, targets=("model", END)),
        ],
        name="agent",
        schema=agent_schema().describe(),
    )


def _after_model(state: AgentLoopState) -> str:
    return "tools" if state.turn is not None else END


def _after_tools(state: AgentLoopState) -> str:
    return "model" if state.stop_reason == "tool_use" else END


async def call_model(state: AgentLoopState, ctx: NodeContext) -> dict[str, Any]:
    """One model turn. Tool calls go to ``turn`` for the tools node; a final answer joins ``messages``.

    A ``BeforeModelCallEvent`` cancel answers in the model's place (its text, ``end_turn``), and a cancel of
    the call cuts the stream (``"Cancelled by user"``, or ``agent.cancel(message=)``'s text, ``cancelled``):
    either reply goes through ``AfterModelCallEvent`` like the model's own, as in Strands.
    """
    run: LoopRun = ctx.runtime
    runtime = run.runtime
    hooks = runtime.hooks
    if run.emit is not None:
        run.emit({"start": True})  # Strands' events for a new cycle: the old name, then the new one
        run.emit({"start_event_loop": True})
    added: list[Message] = []  # what hooks added to the conversation this turn (an intervention's guidance)
    messages = cast("list[Message]", state.messages)
    while True:
        denied: str | None = None
        if hooks.has_callbacks(BeforeModelCallEvent):
            before = BeforeModelCallEvent(runtime.agent, run.invocation_state)
            await hooks.fire(before)
            added += before.new_messages
            denied = cancel_text(before.cancel, "model call denied by hook")
        run.metrics.cycle_count += 1
        if denied is not None:
            turn = _stand_in(denied, "end_turn")
        else:
            try:
                turn = await _stream_turn(run, [*messages, *added] if added else messages)
            except Exception as exc:
                after = AfterModelCallEvent(runtime.agent, run.invocation_state, exception=exc)
                if hooks.has_callbacks(AfterModelCallEvent):
                    await hooks.fire(after)
                    added += after.new_messages
                if after.retry:
                    continue
                raise
        retry = await _after_model_call(run, turn, added)
        if turn.stop_reason == "cancelled" and runtime.cancellation.message is not None:
            turn = _stand_in(runtime.cancellation.message, "cancelled", turn)  # after the hooks saw the real one
        if not retry:
            break
    run.metrics.add_usage(dict(turn.usage), turn.metrics)
    return _settle(runtime.state, turn, added)


async def _after_model_call(run: LoopRun, turn: ModelTurn, added: list[Message]) -> bool:
    """Fire ``AfterModelCallEvent`` for a reply; whether a hook asked for the model again. What hooks add
    joins ``added``."""
    hooks = run.runtime.hooks
    if not hooks.has_callbacks(AfterModelCallEvent):
        return False
    after = AfterModelCallEvent(run.runtime.agent, run.invocation_state,
                                stop_response=ModelStopResponse(turn.message, turn.stop_reason))
    await hooks.fire(after)
    added += after.new_messages
    return after.retry


async def _stream_turn(run: LoopRun, messages: list[Message]) -> ModelTurn:
    """The model's reply to ``messages``, read until its end or until the call is cancelled."""
    runtime = run.runtime
    cancellation = runtime.cancellation
    span = run.trace.model_call() if run.trace is not None else None
    watch = StreamWatch(cancellation)
    try:
        turn = await collect_turn(runtime.model.stream(messages, runtime.tools.specs() or None,
                                                       runtime.system_prompt), run.emit, stop=watch)
    except Exception as exc:
        if span is not None:
            span.fail(exc)
        raise
    if watch.cancelled():  # the partial reply is dropped, never joins the conversation
        turn = _stand_in(CANCELLED_BY_USER, "cancelled", turn)
    if span is not None:
        span.done(turn)
    return turn


def _stand_in(text: str, stop_reason: str, instead_of: ModelTurn | None = None) -> ModelTurn:
    """A reply of ``text`` in the model's place (keeping what the replaced one cost)."""
    message: Message = {"role": "assistant", "content": [{"text": text}]}
    if instead_of is None:
        return ModelTurn(message, stop_reason, {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                         {"latencyMs": 0})
    return ModelTurn(message, stop_reason, instead_of.usage, instead_of.metrics)


def _settle(agent_state: AgentState, turn: ModelTurn, added: list[Message]) -> dict[str, Any]:
    """The model node's update; ``added`` (messages hooks added) joins the conversation ahead of the reply."""
    message = turn.message
    if turn.stop_reason == "tool_use" and any("toolUse" in block for block in message["content"]):
        update = {"turn": message, "stop_reason": "tool_use", **state_update(agent_state)}
        return {**update, "messages": added} if added else update
    return {"messages": [*added, message], "turn": None, "stop_reason": turn.stop_reason,
            **state_update(agent_state)}


async def announce_messages(run: LoopRun, writes: list[tuple[str, dict[str, Any]]]) -> None:
    """Tell hooks and the stream about the messages a step added (once they are the conversation)."""
    runtime = run.runtime
    announce = runtime.hooks.has_callbacks(MessageAddedEvent)
    for _, update in writes:
        for message in update.get("messages", ()):
            if announce:
                await runtime.hooks.fire(MessageAddedEvent(runtime.agent, message))
            if run.emit is not None:
                run.emit({"message": message})


def loop_result(stop_reason: str, loop: AgentLoopState, run: LoopRun, interrupts: list[Interrupt]) -> AgentResult:
    """What a call of the loop returns: on an interrupt, the assistant message whose tools wait."""
    message: Any = loop.turn
    if message is None:
        message = next((m for m in reversed(loop.messages) if m.get("role") == "assistant"),
                       {"role": "assistant", "content": []})
    return AgentResult(stop_reason, message, run.metrics, run.invocation_state, interrupts)
