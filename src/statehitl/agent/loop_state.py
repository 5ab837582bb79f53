"""What an agent's checkpoint holds, and how it is stored.

``messages`` is an append-only channel (the engine stores each step's new messages, not the history);
``turn`` holds the assistant message whose tool calls are running, so it joins ``messages`` only
together with its results and no toolUse block ever dangles there.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from statehitl.agent.binary import from_json_safe, to_json_safe
from statehitl.agent.state import AgentState
from statehitl.channels import StateSchema, append


class AgentLoopState(BaseModel):
    """What an agent's checkpoint holds."""

    model_config = ConfigDict(defer_build=True)  # built on the first call, not at import

    # Factories, not ``[]``/``{}``: pydantic deep-copies a mutable default for every instance, and each
    # agent (each one a Graph or Swarm built per request holds) starts from one.
    messages: Annotated[list[dict[str, Any]], append] = Field(default_factory=list)
    agent_state: dict[str, Any] = Field(default_factory=dict)
    turn: dict[str, Any] | None = None
    stop_reason: str = "end_turn"


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
    """The schema every agent's loop state is reduced and stored with (built once per process)."""
    return AgentSchema(AgentLoopState)


def state_update(agent_state: AgentState) -> dict[str, Any]:
    """The agent state as a step's update, if hooks or tools changed it since it was last saved."""
    values = agent_state.snapshot()
    return {} if values is None else {"agent_state": values}


def resumed_state(loop: AgentLoopState, progress: dict[str, Any]) -> AgentState:
    """The agent state to go on with: what an interrupted tool batch kept of its changes (``progress``
    of the stopped step: the ``tools`` node's ``ToolBatch``), else the stored one, unchanged since it was saved."""
    kept = progress.get("tools")
    if kept:
        from statehitl.progress import ToolBatch  # only a resume of a stopped batch reads one

        batch = ToolBatch.load(kept, "what the agent's tool batch kept")
        if batch.agent_state is not None:
            return AgentState(batch.agent_state)
    return AgentState(loop.agent_state, changed=False)
