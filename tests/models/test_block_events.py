"""block_events, collect_turn's inverse: what ScriptedModel and Bedrock's non-streaming path replay."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from statehitl.models import collect_turn
from statehitl.models.streaming import block_events


async def _replay(events: list[Any]) -> AsyncIterator[Any]:
    for event in events:
        yield event


def round_trip(blocks: list[dict[str, Any]]) -> list[Any]:
    events: list[Any] = []
    for block in blocks:
        streamed = block_events(block)
        assert streamed is not None
        events += streamed
    return list(asyncio.run(collect_turn(_replay(events))).message["content"])


def started_id(block: dict[str, Any]) -> Any:
    streamed = block_events(block, tool_use_id="fallback")
    assert streamed is not None
    return streamed[0]["contentBlockStart"]["start"]["toolUse"]["toolUseId"]


def test_collect_turn_reassembles_the_blocks_it_was_given() -> None:
    blocks: list[dict[str, Any]] = [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}},
        {"text": "hello"},
        {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": [2, 3]}}},
    ]
    assert round_trip(blocks) == blocks


def test_tool_use_id_fills_in_only_a_missing_id() -> None:
    assert started_id({"toolUse": {"name": "add", "input": {}}}) == "fallback"
    assert started_id({"toolUse": {"toolUseId": "own", "name": "add", "input": {}}}) == "own"


def test_reasoning_without_text_is_empty_text_or_unstreamable() -> None:
    redacted = {"reasoningContent": {"redactedContent": b"x"}}
    assert block_events(redacted, empty_reasoning=True) == [
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": ""}}}},
        {"contentBlockStop": {}},
    ]
    assert block_events(redacted) is None


def test_blocks_a_stream_cannot_carry_are_none() -> None:
    assert block_events({"image": {"format": "png"}}) is None
