"""Assembling a model turn from Converse stream events: the one place providers' output becomes a message.

Its inverse, ``block_events``, lives here too, so providers holding a finished message (a script, a
non-streaming reply) emit exactly the event shapes ``collect_turn`` reads.

This runs on every model turn, so it is written as one flat loop over the events with a few local
variables, and builds the streaming-UI callback dicts only when there is a callback to receive them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from statehitl.models.errors import ModelError
from statehitl.types.content import ContentBlock, Message, Role
from statehitl.types.streaming import StreamEvent, Usage

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ModelTurn:
    """One model reply, assembled: the message the agent appends, and why and at what cost it ended."""

    message: Message
    """The assistant message: text, toolUse (input parsed from JSON) and reasoningContent blocks, in order."""
    stop_reason: str
    """From ``messageStop``, except that ``end_turn`` beside a tool use becomes ``tool_use``."""
    usage: Usage
    """``inputTokens``, ``outputTokens``, ``totalTokens`` from ``metadata``; 0 where the model sent none."""
    metrics: dict[str, Any]
    """``metadata.metrics`` (``latencyMs`` at least, 0 if absent)."""


async def collect_turn(
    events: AsyncIterable[StreamEvent], on_event: Callable[[dict[str, Any]], None] | None = None, *,
    stop: Callable[[StreamEvent], bool] | None = None,
) -> ModelTurn:
    """Consume a model's stream and return the assembled turn.

    ``stop(event)``, asked before each event is taken in: True ends the stream there (it is closed) and the
    turn is what came before (how a cancelled call stops reading its model).

    ``on_event`` gets Strands-style callback kwargs as the stream goes: ``{"event": raw}`` for every
    event, then ``{"data": text, "delta": delta}`` for text, ``{"current_tool_use": {...}, "delta":
    delta}`` for tool input so far, ``{"reasoningText": text, "delta": delta, "reasoning": True}`` for
    reasoning. A block ends at ``contentBlockStop`` (or the next ``contentBlockStart``, or the end of
    the stream). Tool input that is not valid JSON becomes ``{}``, as in Strands, so the tool reports
    the missing arguments to the model instead of the turn failing.
    """
    content: list[ContentBlock] = []
    role: Role = "assistant"
    stop_reason = "end_turn"
    usage: Any = None
    metrics: Any = None
    block = _OpenBlock()

    async for event in events:
        if stop is not None and stop(event):
            await _close(events)
            break
        if on_event is not None:
            on_event({"event": event})
        if "contentBlockDelta" in event:
            block.add(event, on_event)
        elif "contentBlockStop" in event or "contentBlockStart" in event:
            block.close(content, event.get("contentBlockStart"))
        elif "messageStop" in event:
            stop_reason = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"].get("usage")
            metrics = event["metadata"].get("metrics")
        elif "messageStart" in event:
            role = event["messageStart"].get("role", "assistant")

    block.close(content, None)
    if stop_reason == "end_turn" and any("toolUse" in block for block in content):
        stop_reason = "tool_use"  # some models say end_turn beside tool calls; the tools must still run
    turn_usage: Usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    if usage:
        turn_usage.update(usage)
    return ModelTurn(
        message={"role": role, "content": content},
        stop_reason=stop_reason,
        usage=turn_usage,
        metrics={"latencyMs": 0, **metrics} if metrics else {"latencyMs": 0},
    )


class _OpenBlock:
    """The content block the stream is filling (one at most in a well-formed stream): its text, tool input or
    reasoning so far."""

    __slots__ = ("reasoning", "text", "tool")

    def __init__(self) -> None:
        self.text: str | None = None
        self.tool: dict[str, Any] | None = None
        self.reasoning: dict[str, Any] | None = None

    def add(self, event: StreamEvent, on_event: Callable[[dict[str, Any]], None] | None) -> None:
        """Take in a ``contentBlockDelta`` event, telling ``on_event`` what it added."""
        delta = event["contentBlockDelta"]["delta"]
        if "text" in delta:
            piece = delta["text"]
            self.text = piece if self.text is None else self.text + piece
            if on_event is not None:
                on_event({"data": piece, "delta": delta})
        elif "toolUse" in delta:
            if self.tool is None:
                raise ModelError(f"the model sent tool input with no toolUse block open: {event!r}")
            self.tool["input"] += delta["toolUse"]["input"]
            if on_event is not None:
                on_event({"delta": delta, "current_tool_use": self.tool})
        elif "reasoningContent" in delta:
            if self.reasoning is None:
                self.reasoning = {}
            _add_reasoning(self.reasoning, delta, on_event)

    def close(self, content: list[ContentBlock], start: Any) -> None:
        """Append the open block to ``content`` at a block boundary; a ``contentBlockStart`` (``start``) of a
        tool call opens the next one."""
        _close_blocks(content, self.text, self.tool, self.reasoning)
        self.text = self.tool = self.reasoning = None
        if start is not None and "toolUse" in start.get("start", ()):
            started = start["start"]["toolUse"]
            self.tool = {"toolUseId": started["toolUseId"], "name": started["name"], "input": ""}


async def _close(events: AsyncIterable[StreamEvent]) -> None:
    """Close a stream left before its end (an async generator's ``finally`` runs now, not at collection)."""
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


def _add_reasoning(
    reasoning: dict[str, Any], delta: dict[str, Any], on_event: Callable[[dict[str, Any]], None] | None
) -> None:
    """Accumulate a reasoningContent delta: text and signature concatenate, redacted bytes too."""
    part = delta["reasoningContent"]
    if "text" in part:
        reasoning["text"] = reasoning.get("text", "") + part["text"]
        if on_event is not None:
            on_event({"reasoningText": part["text"], "delta": delta, "reasoning": True})
    if "signature" in part:
        reasoning["signature"] = reasoning.get("signature", "") + part["signature"]
        if on_event is not None:
            on_event({"reasoning_signature": part["signature"], "delta": delta, "reasoning": True})
    if "redactedContent" in part:
        reasoning["redactedContent"] = reasoning.get("redactedContent", b"") + part["redactedContent"]


def _close_blocks(
    content: list[ContentBlock], text: str | None, tool: dict[str, Any] | None, reasoning: dict[str, Any] | None
) -> None:
    """Append the open block, if any (one at most in a well-formed stream), to ``content``; empty text is
    dropped. With nothing open it does nothing, so the caller closes at every block boundary unchecked."""
    if reasoning is not None:
        if "redactedContent" in reasoning:
            content.append({"reasoningContent": {"redactedContent": reasoning["redactedContent"]}})
        else:
            reasoning.setdefault("text", "")
            content.append({"reasoningContent": {"reasoningText": reasoning}})
    if text:
        content.append({"text": text})
    if tool is not None:
        raw = tool["input"]
        try:
            tool_input = json.loads(raw) if raw else {}
        except ValueError:
            logger.warning("tool %r: input is not valid JSON, using {}: %.200s", tool["name"], raw)
            tool_input = {}
        content.append({"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"], "input": tool_input}})


def block_events(
    block: Mapping[str, Any], *, tool_use_id: str | None = None, empty_reasoning: bool = False
) -> list[StreamEvent] | None:
    """The events that stream ``block`` whole, ending with ``contentBlockStop``: ``collect_turn``'s inverse,
    so a finished message (a script, a non-streaming reply) reaches the agent as if it had been streamed.

    Tool input goes as one ``json.dumps`` delta (its ``TypeError`` for unserialisable input propagates),
    under the block's own ``toolUseId`` or else ``tool_use_id``. A reasoningContent block without
    ``reasoningText`` (redacted reasoning) is replayed as empty reasoning text when ``empty_reasoning``,
    and is otherwise unstreamable. ``None`` for an unstreamable block, which callers skip or reject.
    """
    events: list[StreamEvent]
    if "text" in block:
        events = [delta_event({"text": block["text"]})]
    elif "toolUse" in block:
        use = block["toolUse"]
        raw = json.dumps(use.get("input", {}))
        start = {"toolUse": {"toolUseId": use.get("toolUseId") or tool_use_id, "name": use["name"]}}
        events = [{"contentBlockStart": {"start": start}}, delta_event({"toolUse": {"input": raw}})]
    elif "reasoningContent" in block and (empty_reasoning or "reasoningText" in block["reasoningContent"]):
        reasoning = block["reasoningContent"].get("reasoningText", {})
        events = [delta_event({"reasoningContent": {"text": reasoning.get("text", "")}})]
        if "signature" in reasoning:
            events.append(delta_event({"reasoningContent": {"signature": reasoning["signature"]}}))
    else:
        return None
    events.append({"contentBlockStop": {}})
    return events


def delta_event(delta: dict[str, Any]) -> StreamEvent:
    """Wrap ``delta`` in its event, so the providers that build events spell the nesting in one place."""
    return {"contentBlockDelta": {"delta": delta}}
