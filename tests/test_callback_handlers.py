"""Strands' callback handlers on a real agent: the printing default, several at once, none at all."""

from __future__ import annotations

from typing import Any

import pytest

from statehitl import Agent, tool
from statehitl.handlers.callback_handler import (
    CompositeCallbackHandler,
    PrintingCallbackHandler,
    null_callback_handler,
)
from statehitl.models import ScriptedModel

LOOKUP = {"role": "assistant", "content": [{"text": "Looking."},
                                           {"toolUse": {"name": "lookup", "input": {"order_id": "A-1"}}}]}


@tool
def lookup(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: the order
    """
    return "refunded"


def make_agent(handler: Any) -> Agent:
    return Agent(model=ScriptedModel([LOOKUP, "It was refunded."]), tools=[lookup], callback_handler=handler)


def test_the_default_prints_text_and_each_tool_call(capsys: pytest.CaptureFixture[str]) -> None:
    make_agent(PrintingCallbackHandler())("What about A-1?")
    assert capsys.readouterr().out == "Looking.\nTool #1: lookup\n\nIt was refunded.\n"


def test_composite_feeds_every_handler_and_a_quiet_printer_only_counts_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    quiet = PrintingCallbackHandler(verbose_tool_use=False)
    seen: list[dict[str, Any]] = []
    make_agent(CompositeCallbackHandler(quiet, lambda **event: seen.append(event)))("What about A-1?")
    assert capsys.readouterr().out == "Looking.\nIt was refunded.\n"
    assert quiet.tool_count == 1
    assert [event["data"] for event in seen if "data" in event] == ["Looking.", "It was refunded."]
    assert any("tool_result" in event for event in seen)


def test_the_null_handler_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    result = make_agent(null_callback_handler)("What about A-1?")
    assert str(result) == "It was refunded."
    assert capsys.readouterr().out == ""
