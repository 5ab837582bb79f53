"""One program, two frameworks: what the interventions parity tests run on Strands 1.62 and on statehitl.

A test writes its program once against a ``Side`` (the framework's Agent, tool decorator, intervention
classes and hook events, and a scripted model), runs it on ``STRANDS`` and on ``STATEHITL``, and compares
what each observed. Strands ships no scripted model, so its side replays the same Converse stream events
statehitl's ``ScriptedModel`` streams. Strands is imported at the top: without it these tests fail
(``uv sync --group strands``), they never skip.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import strands
import strands.hooks
import strands.interventions
import strands.vended_interventions.hitl
import strands.vended_interventions.hitl.classifier
from strands.models import Model as StrandsModel

import statehitl
import statehitl.hooks
import statehitl.interventions
import statehitl.vended_interventions.hitl
import statehitl.vended_interventions.hitl.classifier
from statehitl.models import ScriptedModel


def stream_events(response: dict[str, Any] | str) -> list[dict[str, Any]]:
    """The Converse stream of one scripted reply, as ``ScriptedModel`` streams it."""
    message = {"role": "assistant", "content": [{"text": response}]} if isinstance(response, str) else response
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    tool = False
    for block in message["content"]:
        if "text" in block:
            events.append({"contentBlockDelta": {"delta": {"text": block["text"]}}})
        else:
            use = block["toolUse"]
            events.append({"contentBlockStart": {"start": {"toolUse": {"toolUseId": use["toolUseId"],
                                                                          "name": use["name"]}}}})
            events.append({"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}})
            tool = True
        events.append({"contentBlockStop": {}})
    events.append({"messageStop": {"stopReason": "tool_use" if tool else "end_turn"}})
    events.append({"metadata": {"usage": {"inputTokens": 0, "outputTokens": 1, "totalTokens": 1},
                                "metrics": {"latencyMs": 0}}})
    return events


class StrandsReplay(StrandsModel):
    """Strands' side of ``ScriptedModel``: replies in call order, recording what each call was given."""

    def __init__(self, responses: list[Any]) -> None:
        self.responses = list(responses)
        self.calls = 0
        self.requests: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> dict[str, Any]:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the parity programs never ask for Strands' native structured output")

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncIterator[Any]:
        index = self.calls
        self.calls += 1
        self.requests.append({"messages": list(messages), "tool_specs": tool_specs, "system_prompt": system_prompt})
        if index >= len(self.responses):
            raise AssertionError(f"the replay was scripted with {len(self.responses)} replies; call {index + 1}")
        for event in stream_events(self.responses[index]):
            yield event


@dataclass(frozen=True)
class Side:
    """A framework's names, as a program uses them."""

    name: str
    Agent: Any
    tool: Any
    interventions: Any
    InterventionHandler: Any
    hooks: Any
    hitl: Any
    ClassifierResult: Any
    model: Callable[[list[Any]], Any]

    def agent(self, responses: list[Any], **kwargs: Any) -> tuple[Any, Any]:
        """An agent on a scripted model replying ``responses``, and that model."""
        model = self.model(responses)
        return self.Agent(model=model, callback_handler=None, **kwargs), model


STRANDS = Side("strands", strands.Agent, strands.tool, strands.interventions, strands.InterventionHandler,
               strands.hooks, strands.vended_interventions.hitl,
               strands.vended_interventions.hitl.classifier.ClassifierResult, StrandsReplay)
STATEHITL = Side("statehitl", statehitl.Agent, statehitl.tool, statehitl.interventions,
                 statehitl.InterventionHandler, statehitl.hooks, statehitl.vended_interventions.hitl,
                 statehitl.vended_interventions.hitl.classifier.ClassifierResult, ScriptedModel)
SIDES = (STRANDS, STATEHITL)


def both(program: Callable[[Side], Any]) -> Any:
    """Run ``program`` on each side; assert both observed the same, and return it."""
    on_strands, on_statehitl = program(STRANDS), program(STATEHITL)
    assert on_statehitl == on_strands, f"statehitl observed\n{on_statehitl}\nStrands observed\n{on_strands}"
    return on_statehitl


def conversation(messages: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    """A conversation as both frameworks show it: role and content (Strands adds ids and metadata)."""
    return [(m["role"], m["content"]) for m in messages]


def use(tool_use_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """An assistant reply asking for one tool call."""
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": tool_use_id, "name": name,
                                                          "input": tool_input}}]}


def answers(result: Any, response: Any) -> list[dict[str, Any]]:
    """The resume input answering every interrupt of ``result`` with ``response``."""
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in result.interrupts]


def tool_results(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Every tool result of a conversation: its status and text."""
    return [(block["toolResult"]["status"], block["toolResult"]["content"][0]["text"])
            for m in messages for block in m["content"] if "toolResult" in block]
