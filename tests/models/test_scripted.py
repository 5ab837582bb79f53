"""ScriptedModel: replays scripted replies as real stream events, records requests, fails clearly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from statehitl.models import ModelError, ModelTurn, ScriptedModel, collect_turn
from statehitl.types.content import Message

TOOL_REPLY: Message = {"role": "assistant", "content": [
    {"text": "Refunding."},
    {"toolUse": {"toolUseId": "t1", "name": "refund", "input": {"order_id": "A-1", "amount": 20}}},
]}
SPEC = {"name": "refund", "description": "Refund an order.", "inputSchema": {"json": {"type": "object"}}}


def call(model: ScriptedModel, messages: list[Any], **kwargs: Any) -> ModelTurn:
    return asyncio.run(collect_turn(model.stream(messages, **kwargs)))


def events(model: ScriptedModel, messages: list[Any]) -> list[dict[str, Any]]:
    async def gather() -> list[dict[str, Any]]:
        return [dict(event) async for event in model.stream(messages)]

    return asyncio.run(gather())


def test_replies_in_order_and_round_trip_through_collect_turn() -> None:
    model = ScriptedModel([TOOL_REPLY, "All done."])
    first = call(model, [{"role": "user", "content": [{"text": "refund A-1"}]}])
    second = call(model, [])
    assert first.message == TOOL_REPLY
    assert first.stop_reason == "tool_use"
    assert second.message == {"role": "assistant", "content": [{"text": "All done."}]}
    assert second.stop_reason == "end_turn"


def test_events_look_like_a_converse_stream() -> None:
    assert events(ScriptedModel([TOOL_REPLY]), []) == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "Refunding."}}},
        {"contentBlockStop": {}},
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "refund"}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"order_id": "A-1", "amount": 20}'}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 0, "outputTokens": 11, "totalTokens": 11},
                      "metrics": {"latencyMs": 0}}},
    ]


def test_usage_is_deterministic() -> None:
    turns = [call(ScriptedModel(["abcde"]), []) for _ in range(2)]
    assert turns[0].usage == turns[1].usage == {"inputTokens": 0, "outputTokens": 2, "totalTokens": 2}


def test_calls_and_requests_record_what_the_model_was_given() -> None:
    model = ScriptedModel(["one", "two"])
    history: list[Any] = [{"role": "user", "content": [{"text": "hi"}]}]
    call(model, history, tool_specs=[SPEC], system_prompt="Be brief.")
    history.append({"role": "assistant", "content": [{"text": "one"}]})
    call(model, history)
    assert model.calls == 2
    assert model.requests[0] == {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}], "tool_specs": [SPEC], "system_prompt": "Be brief.",
    }
    assert len(model.requests[1]["messages"]) == 2
    assert model.requests[0]["messages"] is not history  # a copy of the list, taken at call time
    assert model.requests[1]["messages"][0] is history[0]  # shallow: the messages themselves are shared


def test_running_out_of_responses_says_how_many_were_scripted() -> None:
    model = ScriptedModel(["only one"])
    call(model, [])
    with pytest.raises(ModelError, match=r"scripted with 1 response\(s\) and the agent asked for one more \(call 2\)"):
        call(model, [])
    assert model.calls == 2


def test_an_exception_entry_is_raised_at_its_call() -> None:
    failure = ModelError("provider down")
    model = ScriptedModel(["first", failure, "third"])
    call(model, [])
    with pytest.raises(ModelError) as raised:
        call(model, [])
    assert raised.value is failure
    assert call(model, []).message["content"] == [{"text": "third"}]
    assert model.calls == 3


def test_missing_tool_use_ids_are_filled_deterministically() -> None:
    reply: Any = {"role": "assistant", "content": [{"text": "x"}, {"toolUse": {"name": "ping", "input": {}}}]}
    model = ScriptedModel(["hi", reply])
    call(model, [])
    turn = call(model, [])
    assert turn.message["content"][1]["toolUse"]["toolUseId"] == "tooluse_1_1"


def test_reasoning_blocks_replay() -> None:
    reply: Message = {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "s"}}}, {"text": "answer"},
    ]}
    assert call(ScriptedModel([reply]), []).message == reply


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"role": "user", "content": [{"text": "x"}]}, "role 'user'"),
        ({"role": "assistant", "content": [{"image": {"format": "png"}}]}, r"block 0: only text, toolUse"),
        ({"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {1j}}}]},
         "block 0: tool input"),
    ],
)
def test_replies_that_cannot_be_replayed_fail_when_scripted(response: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScriptedModel(["fine", response])


def test_config_is_accepted_and_kept() -> None:
    model = ScriptedModel([])
    model.update_config(temperature=0.2)
    assert model.get_config() == {"temperature": 0.2}


def conversation(*replies: str) -> list[Any]:
    """A conversation whose model already gave ``replies``: a prompt and an answer for each."""
    messages: list[Any] = []
    for reply in replies:
        messages += [{"role": "user", "content": [{"text": "go on"}]},
                     {"role": "assistant", "content": [{"text": reply}]}]
    return [*messages, {"role": "user", "content": [{"text": "and now?"}]}]


def test_by_position_the_conversation_picks_the_reply_whichever_call_it_is() -> None:
    script = ["zero", "one", "two"]
    fresh = ScriptedModel(script, keyed_by="position")  # a new process that joins the conversation late
    assert call(fresh, conversation("zero", "one")).message["content"] == [{"text": "two"}]
    assert call(fresh, conversation()).message["content"] == [{"text": "zero"}]
    assert call(fresh, conversation("zero", "one")).message["content"] == [{"text": "two"}]  # a retry: the same
    assert fresh.calls == 3
    assert fresh.keyed_by == "position"
    assert ScriptedModel(script).keyed_by == "call"  # the default: replies in call order


def test_by_position_a_conversation_past_the_script_says_which_position_it_asked_for() -> None:
    model = ScriptedModel(["zero"], keyed_by="position")
    with pytest.raises(ModelError, match=r"positions 0 to 0, and the conversation it was given holds 2 assistant "
                                         r"message\(s\), so it asks for response 2"):
        call(model, conversation("zero", "one"))


def test_keyed_by_is_checked() -> None:
    with pytest.raises(ValueError, match="'call' or 'position'"):
        ScriptedModel([], keyed_by="turn")  # type: ignore[arg-type]
