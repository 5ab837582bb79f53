"""A model that replays scripted replies: deterministic agents for tests, examples and benchmarks.

Every reply is turned into its stream events once, when the model is built, so a call costs no more
than yielding a short list; the agent runs the same assembly code it runs for a real provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from statehitl.models.base import Model
from statehitl.models.errors import ModelError
from statehitl.models.streaming import block_events
from statehitl.types.content import Message, Messages
from statehitl.types.streaming import StreamEvent
from statehitl.types.tools import ToolSpec

__all__ = ["ScriptedModel"]

_CHARS_PER_TOKEN = 4


class ScriptedModel(Model):
    """Replies with ``responses`` in order, one per call.

    Each response is an assistant ``Message``, a ``str`` (one text block), or an exception instance,
    which that call raises instead (to test model failures). A toolUse block without a ``toolUseId``
    gets ``tooluse_<response>_<block>``, so ids stay stable across runs. Usage is reported as one
    output token per four characters of reply (text and tool input JSON) and no input tokens.

    ``calls`` counts calls, including failed ones; ``requests`` holds what each call was given, as
    ``{"messages": [...], "tool_specs": ..., "system_prompt": ...}`` (the list is a shallow copy).
    """

    def __init__(self, responses: Sequence[Message | str | BaseException]) -> None:
        self._script = [_script_entry(response, index) for index, response in enumerate(responses)]
        self.calls = 0
        self.requests: list[dict[str, Any]] = []
        self.config: dict[str, Any] = {}

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Yield the next scripted reply's events (or raise its exception)."""
        index = self.calls
        self.calls += 1
        self.requests.append({"messages": list(messages), "tool_specs": tool_specs, "system_prompt": system_prompt})
        if index >= len(self._script):
            raise ModelError(
                f"ScriptedModel was scripted with {len(self._script)} response(s) and the agent asked for one "
                f"more (call {index + 1}); add a response for this turn (its request is in .requests[-1])"
            )
        entry = self._script[index]
        if isinstance(entry, BaseException):
            raise entry
        for event in entry:
            yield event

    def update_config(self, **model_config: Any) -> None:
        """Accept any option, so code that configures a real model runs unchanged against this one."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config


def _script_entry(response: Message | str | BaseException, index: int) -> list[StreamEvent] | BaseException:
    if isinstance(response, BaseException):
        return response
    if isinstance(response, str):
        return _events_for({"role": "assistant", "content": [{"text": response}]}, index)
    if response.get("role") != "assistant":
        raise ValueError(f"ScriptedModel response {index} has role {response.get('role')!r}; replies are 'assistant'")
    return _events_for(response, index)


def _events_for(message: Message, index: int) -> list[StreamEvent]:
    """The stream a Converse model would send for ``message``: deltas per block, stop reason, usage."""
    events: list[StreamEvent] = [{"messageStart": {"role": "assistant"}}]
    chars = 0
    has_tool = False
    for position, block in enumerate(message["content"]):
        try:
            streamed = block_events(block, tool_use_id=f"tooluse_{index}_{position}", empty_reasoning=True)
        except TypeError as error:
            raise ValueError(f"ScriptedModel response {index}, block {position}: tool input: {error}") from None
        if streamed is None:
            raise ValueError(
                f"ScriptedModel response {index}, block {position}: only text, toolUse and reasoningContent blocks "
                f"can be replayed, not {sorted(block)}"
            )
        for event in streamed:
            has_tool = has_tool or "contentBlockStart" in event
            delta = event.get("contentBlockDelta", {}).get("delta", {})
            chars += len(delta.get("text", "")) + len(delta.get("toolUse", {}).get("input", ""))
        events += streamed
    output_tokens = -(-chars // _CHARS_PER_TOKEN)
    events.append({"messageStop": {"stopReason": "tool_use" if has_tool else "end_turn"}})
    events.append({"metadata": {
        "usage": {"inputTokens": 0, "outputTokens": output_tokens, "totalTokens": output_tokens},
        "metrics": {"latencyMs": 0},
    }})
    return events
