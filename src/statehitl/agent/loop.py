"""The agent loop as a machine: ``model`` → ``tools`` → ``model`` … → END.

One machine serves every agent: its nodes find the agent they work for in the current
``Invocation`` (a context variable the agent sets for the length of a call), so constructing an
agent — which the seed's server pattern does on every request — builds no graph.

State, as checkpointed: ``messages`` is an append-only channel (the engine stores each step's new
messages, not the history); ``turn`` holds the assistant message whose tool calls are running, so it
joins ``messages`` only together with its results and no toolUse block ever dangles there.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import BaseModel, ConfigDict

from statehitl.agent.binary import from_json_safe, to_json_safe
from statehitl.agent.result import AgentMetrics
from statehitl.channels import StateSchema, append
from statehitl.hooks.agent_events import (
    AfterModelCallEvent,
    BeforeModelCallEvent,
    MessageAddedEvent,
    ModelStopResponse,
)
from statehitl.hooks.registry import cancel_text
from statehitl.machine import END, START, Edge, Machine, NodeSpec, Router
from statehitl.models.streaming import ModelTurn, collect_turn
from statehitl.runner import NodeContext
from statehitl.types.content import Message

if TYPE_CHECKING:
    from collections.abc import Callable

    from statehitl.agent.agent import Agent
    from statehitl.telemetry import InvocationTrace

__all__ = ["AgentLoopState", "Invocation", "add_messages", "agent_machine", "agent_schema", "current", "state_update"]


class AgentLoopState(BaseModel):
    """What an agent's checkpoint holds."""

    model_config = ConfigDict(defer_build=True)  # built on the first call, not at import

    messages: Annotated[list[dict[str, Any]], append] = []
    agent_state: dict[str, Any] = {}
    turn: dict[str, Any] | None = None
    stop_reason: str = "end_turn"


@dataclass
class Invocation:
    """One call of one agent: who runs, the caller's invocation state, metrics, where events go."""

    agent: Agent
    invocation_state: dict[str, Any]
    metrics: AgentMetrics
    emit: Callable[[dict[str, Any]], None] | None
    trace: InvocationTrace | None


current: ContextVar[Invocation] = ContextVar("statehitl_agent_invocation")


class AgentSchema(StateSchema[AgentLoopState]):
    """The loop state's channels, stored so that bytes in messages (images, documents) survive JSON."""

    def dump_values(self, state: AgentLoopState) -> dict[str, Any]:
        return {name: to_json_safe(getattr(state, name)) for name in self._ordinary}

    def dump_items(self, state: AgentLoopState, channel: str, start: int) -> list[Any]:
        items: list[Any] = to_json_safe(getattr(state, channel)[start:])
        return items

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        dumped: dict[str, Any] = to_json_safe(update)
        return dumped

    def load(self, values: dict[str, Any]) -> AgentLoopState:
        return super().load(from_json_safe(values))


@cache
def agent_schema() -> AgentSchema:
    return AgentSchema(AgentLoopState)


@cache
def agent_machine() -> Machine:
    """The loop's machine (built once per process)."""
    from statehitl.agent.tool_batch import run_tools

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
    """One model turn. Tool calls go to ``turn`` for the tools node; a final answer joins ``messages``."""
    run = current.get()
    agent = run.agent
    hooks = agent.hooks
    if run.emit is not None:
        run.emit({"start": True})  # Strands' events for a new cycle: the old name, then the new one
        run.emit({"start_event_loop": True})
    while True:
        if hooks.has_callbacks(BeforeModelCallEvent):
            before = BeforeModelCallEvent(agent, run.invocation_state)
            await hooks.fire(before)
            text = cancel_text(before.cancel, "model call cancelled")
            if text is not None:
                message: Message = {"role": "assistant", "content": [{"text": text}]}
                await add_messages(run, state, message)
                return {"messages": [message], "turn": None, "stop_reason": "cancelled", **state_update(agent)}
        run.metrics.cycle_count += 1
        span = run.trace.model_call() if run.trace is not None else None
        try:
            turn = await collect_turn(
                agent.model.stream(cast("list[Message]", state.messages), agent.tool_registry.specs() or None,
                                   agent.system_prompt),
                run.emit,
            )
        except Exception as exc:
            if span is not None:
                span.fail(exc)
            after = AfterModelCallEvent(agent, run.invocation_state, exception=exc)
            if hooks.has_callbacks(AfterModelCallEvent):
                await hooks.fire(after)
            if after.retry:
                continue
            raise
        if span is not None:
            span.done(turn)
        if hooks.has_callbacks(AfterModelCallEvent):
            after = AfterModelCallEvent(agent, run.invocation_state,
                                        stop_response=ModelStopResponse(turn.message, turn.stop_reason))
            await hooks.fire(after)
            if after.retry:
                continue
        break
    run.metrics.add_usage(dict(turn.usage), turn.metrics)
    return await _settle(run, state, turn)


async def _settle(run: Invocation, state: AgentLoopState, turn: ModelTurn) -> dict[str, Any]:
    message = turn.message
    if turn.stop_reason == "tool_use" and any("toolUse" in block for block in message["content"]):
        return {"turn": message, "stop_reason": "tool_use", **state_update(run.agent)}
    await add_messages(run, state, message)
    return {"messages": [message], "turn": None, "stop_reason": turn.stop_reason, **state_update(run.agent)}


async def add_messages(run: Invocation, state: AgentLoopState, *messages: Message) -> None:
    """Make ``messages`` part of the conversation now: visible in ``agent.messages``, announced to hooks."""
    agent = run.agent
    agent._adopt_messages([*state.messages, *cast("tuple[dict[str, Any], ...]", messages)])
    announce = agent.hooks.has_callbacks(MessageAddedEvent)
    for message in messages:
        if announce:
            await agent.hooks.fire(MessageAddedEvent(agent, message))
        if run.emit is not None:
            run.emit({"message": message})


def state_update(agent: Agent) -> dict[str, Any]:
    values = agent.state.snapshot()
    return {} if values is None else {"agent_state": values}


