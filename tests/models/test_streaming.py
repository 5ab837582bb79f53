"""collect_turn: assembling a message, stop reason and usage from hand-written event sequences."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from statehitl.models import ModelError, ModelTurn, collect_turn


async def _replay(events: list[dict[str, Any]]) -> AsyncIterator[Any]:
    for event in events:
        yield event


def collect(events: list[dict[str, Any]], on_event: Any = None) -> ModelTurn:
    return asyncio.run(collect_turn(_replay(events), on_event))


def text(piece: str) -> dict[str, Any]:
    return {"contentBlockDelta": {"delta": {"text": piece}}}


def tool_start(tool_use_id: str, name: str) -> dict[str, Any]:
    return {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}}}


def tool_input(fragment: str) -> dict[str, Any]:
    return {"contentBlockDelta": {"delta": {"toolUse": {"input": fragment}}}}


STOP = {"contentBlockStop": {}}


def test_text_deltas_concatenate_per_block() -> None:
    turn = collect([
        {"messageStart": {"role": "assistant"}},
        text("Hel"), text("lo"), STOP,
        text("Second"), text(" block"), STOP,
        {"messageStop": {"stopReason": "end_turn"}},
    ])
    assert turn.message == {"role": "assistant", "content": [{"text": "Hello"}, {"text": "Second block"}]}
    assert turn.stop_reason == "end_turn"


def test_tool_uses_with_fragmented_json_are_parsed() -> None:
    turn = collect([
        {"messageStart": {"role": "assistant"}},
        text("Checking."), STOP,
        tool_start("t1", "lookup"), tool_input('{"order'), tool_input('_id": "A-'), tool_input('1"}'), STOP,
        tool_start("t2", "refund"), tool_input('{"amount": 2'), tool_input("0, \"items\": [1, 2]}"), STOP,
        {"messageStop": {"stopReason": "tool_use"}},
    ])
    assert turn.message["content"] == [
        {"text": "Checking."},
        {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"order_id": "A-1"}}},
        {"toolUse": {"toolUseId": "t2", "name": "refund", "input": {"amount": 20, "items": [1, 2]}}},
    ]
    assert turn.stop_reason == "tool_use"


def test_tool_input_that_is_not_json_becomes_an_empty_dict(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="statehitl.models.streaming"):
        turn = collect([tool_start("t1", "lookup"), tool_input('{"order_id": "A-'), STOP,
                        tool_start("t2", "ping"), STOP])
    assert [block["toolUse"]["input"] for block in turn.message["content"]] == [{}, {}]
    assert "'lookup'" in caplog.text
    assert "'ping'" not in caplog.text  # no input at all is an empty input, not an error


def test_usage_and_metrics_come_from_metadata() -> None:
    turn = collect([
        text("hi"), STOP, {"messageStop": {"stopReason": "max_tokens"}},
        {"metadata": {"usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
                      "metrics": {"latencyMs": 250, "timeToFirstByteMs": 90}}},
    ])
    assert turn.stop_reason == "max_tokens"
    assert turn.usage == {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15}
    assert turn.metrics == {"latencyMs": 250, "timeToFirstByteMs": 90}


def test_missing_metadata_and_stop_default_to_zero_and_end_turn() -> None:
    turn = collect([text("hi")])  # no contentBlockStop either: the open block still counts
    assert turn.message == {"role": "assistant", "content": [{"text": "hi"}]}
    assert turn.stop_reason == "end_turn"
    assert turn.usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    assert turn.metrics == {"latencyMs": 0}


def test_end_turn_beside_a_tool_use_is_reported_as_tool_use() -> None:
    turn = collect([tool_start("t1", "lookup"), tool_input("{}"), STOP, {"messageStop": {"stopReason": "end_turn"}}])
    assert turn.stop_reason == "tool_use"


def test_a_content_block_start_closes_the_open_block() -> None:
    turn = collect([text("before"), tool_start("t1", "lookup"), tool_input("{}"), STOP])
    assert turn.message["content"] == [
        {"text": "before"}, {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {}}},
    ]


def test_empty_text_blocks_are_dropped() -> None:
    assert collect([text(""), STOP]).message["content"] == []


def test_reasoning_deltas_become_a_reasoning_block() -> None:
    reasoning = {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "The user wants "}}}}
    more = {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "a refund."}}}}
    signature = {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "sig=="}}}}
    turn = collect([reasoning, more, signature, STOP, text("Sure."), STOP])
    assert turn.message["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "The user wants a refund.", "signature": "sig=="}}},
        {"text": "Sure."},
    ]


def test_tool_input_without_a_tool_block_is_an_error() -> None:
    with pytest.raises(ModelError, match="no toolUse block open"):
        collect([tool_input("{}")])


def test_on_event_gets_strands_style_callback_kwargs() -> None:
    events = [
        {"messageStart": {"role": "assistant"}},
        text("Hi"), STOP,
        tool_start("t1", "lookup"), tool_input('{"a"'), tool_input(": 1}"), STOP,
        {"messageStop": {"stopReason": "tool_use"}},
    ]
    seen: list[dict[str, Any]] = []
    collect(events, lambda kwargs: seen.append(
        {**kwargs, "current_tool_use": dict(kwargs["current_tool_use"])} if "current_tool_use" in kwargs else kwargs
    ))
    assert [item["event"] for item in seen if "event" in item] == events
    assert [item for item in seen if "event" not in item] == [
        {"data": "Hi", "delta": {"text": "Hi"}},
        {"delta": {"toolUse": {"input": '{"a"'}},
         "current_tool_use": {"toolUseId": "t1", "name": "lookup", "input": '{"a"'}},
        {"delta": {"toolUse": {"input": ": 1}"}},
         "current_tool_use": {"toolUseId": "t1", "name": "lookup", "input": '{"a": 1}'}},
    ]
    # the raw event is announced before what it means
    assert seen.index({"data": "Hi", "delta": {"text": "Hi"}}) == seen.index({"event": text("Hi")}) + 1


def test_reasoning_callbacks_are_marked() -> None:
    seen: list[dict[str, Any]] = []
    delta = {"reasoningContent": {"text": "hmm"}}
    collect([{"contentBlockDelta": {"delta": delta}}, STOP], seen.append)
    assert {"reasoningText": "hmm", "delta": delta, "reasoning": True} in seen
