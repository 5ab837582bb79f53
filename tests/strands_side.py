"""Running one program on Strands 1.62 and on statehitl, to compare what each does.

A program gets a ``Side``: the framework's ``Agent``, ``tool`` and hook events, and ``model(script)``,
a scripted model. Strands ships none, so its model replays the script through statehitl's
``ScriptedModel``: both frameworks parse the very same Converse stream events. Strands is a test
dependency (the ``strands`` group); importing this module without it fails, so a missing Strands
fails the side-by-side tests instead of skipping them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import strands
import strands.hooks as strands_hooks
from strands.models import Model as StrandsModel

import statehitl
import statehitl.hooks as statehitl_hooks
from statehitl.models import ScriptedModel

__all__ = ["SIDES", "Side", "StrandsScripted", "conversation", "side", "uses"]


class StrandsScripted(StrandsModel):
    """A Strands model that streams exactly what statehitl's ``ScriptedModel`` streams for the same script."""

    def __init__(self, script: list[Any]) -> None:
        self.inner = ScriptedModel(script)
        self.config: dict[str, Any] = {}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model answers in text and tool calls only")

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncIterator[Any]:
        async for event in self.inner.stream(messages, tool_specs, system_prompt):
            yield event


@dataclass(frozen=True)
class Side:
    """One framework, as a program sees it."""

    name: str
    Agent: Any
    tool: Any
    hooks: Any
    """The module with the hook events (``BeforeToolCallEvent``...)."""

    def model(self, script: list[Any]) -> Any:
        return ScriptedModel(script) if self.name == "statehitl" else StrandsScripted(script)


SIDES = {
    "strands": Side("strands", strands.Agent, strands.tool, strands_hooks),
    "statehitl": Side("statehitl", statehitl.Agent, statehitl.tool, statehitl_hooks),
}


def side(name: str) -> Side:
    return SIDES[name]


def uses(tool_use_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An assistant message asking for one tool call."""
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": tool_use_id, "name": name,
                                                           "input": arguments}}]}


def conversation(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """A conversation as both frameworks can be compared on it: roles and content blocks, without the
    bookkeeping Strands adds to messages (``metadata``, ``tracking_id``)."""
    return [(message["role"], message["content"]) for message in messages]
