"""The risk classifier of ``HumanInTheLoop``: which tool calls a human must see.

A classifier is any callable (sync or async) taking the ``BeforeToolCallEvent`` and returning a
``ClassifierResult``. The built-in one asks a model, by default the agent's own, through statehitl's
``Model`` interface, so it runs on every provider and on a ``ScriptedModel`` in tests. Its answer is
structured as Strands structures it: the model is offered one tool, ``_RiskDecision``, whose input is
the decision (``requires_approval``, ``reason``); a model that answers in text instead is asked once
more, pointed at that tool, and a JSON object in its text is accepted too.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, ValidationError

from statehitl.hooks.agent_events import BeforeToolCallEvent
from statehitl.models.base import Model
from statehitl.models.streaming import collect_turn
from statehitl.types.content import Message
from statehitl.types.tools import ToolSpec

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "RISK_DECISION_TOOL",
    "ClassifierResult",
    "HumanInTheLoopClassifier",
    "LLMClassifierConfig",
    "create_llm_risk_classifier",
]


@dataclass
class ClassifierResult:
    """A classifier's decision: whether the call needs a human, and a short reason the prompt shows."""

    requires_human_in_the_loop: bool
    reason: str | None = field(default=None)


@runtime_checkable
class HumanInTheLoopClassifier(Protocol):
    """Decides whether a tool call needs a human (a plain or an ``async`` callable)."""

    def __call__(self, event: BeforeToolCallEvent, **kwargs: Any) -> ClassifierResult | Awaitable[ClassifierResult]:
        """The decision for the call ``event`` is about."""
        ...


@dataclass
class LLMClassifierConfig:
    """The built-in LLM classifier's settings: ``system_prompt`` (the risk criteria; default
    ``DEFAULT_SYSTEM_PROMPT``) and ``model`` (default: the agent's own model)."""

    system_prompt: str | None = field(default=None)
    model: Model | None = field(default=None)


DEFAULT_SYSTEM_PROMPT = """You review the tool calls an AI agent is about to make and decide, for each one, \
whether a person must approve it before it runs.

Ask for approval when the call:
- destroys or irreversibly changes something (deletes data, drops tables, revokes access);
- changes important state in production or in something other people share;
- reads or sends sensitive data (credentials, secrets, personal or financial records);
- reaches outside the system (sends email or messages, posts, pays);
- touches many records, users or systems at once.

No approval is needed when the call:
- only reads, and reads nothing sensitive (listing ordinary files, public data, searches);
- works on local or temporary things;
- is easy to undo;
- concerns one resource that matters little.

Reading credentials, secrets, personal or financial data still needs approval, though it changes nothing.

Judge the tool by its name and by these exact arguments: what is the worst this call could do? When in \
doubt, ask for approval. Give a reason of at most ten words: a person reads it in a one-line prompt."""
"""The risk criteria the built-in classifier applies unless ``LLMClassifierConfig.system_prompt`` says otherwise."""

_FORMAT_REQUEST = "You must format the previous response as structured output."


class _RiskDecision(BaseModel):
    """A tool call's risk decision, as the classifying model reports it."""

    requires_approval: bool = Field(description="Whether a person must approve this tool call before it runs")
    reason: str = Field(description="Why, in ten words or fewer")


RISK_DECISION_TOOL: ToolSpec = {
    "name": "_RiskDecision",
    "description": "Report the decision about the tool call. Call it once, as the last thing you do.",
    "inputSchema": {"json": _RiskDecision.model_json_schema()},
}
"""The one tool the classifying model is offered; its input is the decision."""


def create_llm_risk_classifier(config: LLMClassifierConfig | None = None) -> HumanInTheLoopClassifier:
    """The built-in classifier with ``config``'s criteria and model (``classifier=True`` is this with none).

    It raises ``ValueError`` when there is no model to ask or the model gives no decision;
    ``HumanInTheLoop`` then asks the human (a classifier that fails never lets a call through).
    """
    system_prompt = (config.system_prompt if config else None) or DEFAULT_SYSTEM_PROMPT
    configured = config.model if config else None

    async def classify(event: BeforeToolCallEvent, **kwargs: Any) -> ClassifierResult:
        model = configured or getattr(event.agent, "model", None)
        if model is None:
            raise ValueError("the LLM risk classifier has no model: pass LLMClassifierConfig(model=...), or run it "
                             "on an agent with a model")
        use = event.tool_use
        question = (f"Does this tool call need a person's approval before it runs?\n\nTool: {use['name']}\n"
                    f"Input: {json.dumps(use.get('input'), indent=2, default=repr)}")
        decision = await _ask(model, system_prompt, question)
        return ClassifierResult(requires_human_in_the_loop=decision.requires_approval, reason=decision.reason)

    return classify


async def _ask(model: Model, system_prompt: str, question: str) -> _RiskDecision:
    """The model's decision: from its ``_RiskDecision`` call, asked for once more if it answered in text."""
    messages: list[Message] = [{"role": "user", "content": [{"text": question}]}]
    turn = await collect_turn(model.stream(messages, [RISK_DECISION_TOOL], system_prompt))
    decision = _decision_in(turn.message, text_too=False)
    if decision is not None:
        return decision
    messages += [turn.message, {"role": "user", "content": [{"text": _FORMAT_REQUEST}]}]
    retried = await collect_turn(model.stream(messages, [RISK_DECISION_TOOL], system_prompt,
                                              tool_choice={"tool": {"name": RISK_DECISION_TOOL["name"]}}))
    decision = _decision_in(retried.message, text_too=True)
    if decision is None:
        raise ValueError("the LLM risk classifier got no decision from the model "
                         f"(stop_reason={retried.stop_reason!r})")
    return decision


def _decision_in(message: Message, *, text_too: bool) -> _RiskDecision | None:
    """The decision a reply holds: its ``_RiskDecision`` call's input, or (``text_too``) a JSON object that
    is its whole text. ``ValueError`` for a decision that does not fit the schema."""
    found: Any = None
    for block in message["content"]:
        if "toolUse" in block and block["toolUse"]["name"] == RISK_DECISION_TOOL["name"]:
            found = block["toolUse"].get("input")
            break
    else:
        text = "".join(block["text"] for block in message["content"] if "text" in block).strip()
        if text_too and text.startswith("{"):
            try:
                found = json.loads(text)
            except json.JSONDecodeError:
                found = None
    if found is None:
        return None
    try:
        return _RiskDecision.model_validate(found)
    except ValidationError as error:
        raise ValueError(f"the LLM risk classifier's decision does not fit its schema: {error}") from None
