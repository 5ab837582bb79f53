"""Converse-style stream events: what a ``Model.stream`` yields, one dict with one key each.

The order a model produces them in::

    {"messageStart": {"role": "assistant"}}
    {"contentBlockStart": {"start": {"toolUse": {"toolUseId": ..., "name": ...}}}}   # tool blocks only
    {"contentBlockDelta": {"delta": {"text": "..."}}}          # or {"toolUse": {"input": "<json part>"}}
    {"contentBlockStop": {}}
    {"messageStop": {"stopReason": "end_turn" | "tool_use" | "max_tokens" | ...}}
    {"metadata": {"usage": {"inputTokens": .., "outputTokens": .., "totalTokens": ..},
                  "metrics": {"latencyMs": ..}}}
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = ["Metrics", "StopReason", "StreamEvent", "Usage"]

StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filtered", "guardrail_intervened",
    "interrupt", "cancelled", "checkpoint",
]


class Usage(TypedDict, total=False):
    """Tokens a model turn (or a call, summed) used; the cache counts only from providers that cache prompts."""

    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: int
    cacheWriteInputTokens: int


class Metrics(TypedDict, total=False):
    """How a model turn went: ``latencyMs`` from request to last event."""

    latencyMs: int
    timeToFirstByteMs: int


class StreamEvent(TypedDict, total=False):
    messageStart: dict[str, Any]
    contentBlockStart: dict[str, Any]
    contentBlockDelta: dict[str, Any]
    contentBlockStop: dict[str, Any]
    messageStop: dict[str, Any]
    metadata: dict[str, Any]
