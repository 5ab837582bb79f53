"""A model that replays scripted replies: deterministic agents for tests, examples and benchmarks.

Every reply is turned into its stream events once, when the model is built, so a call costs no more
than yielding a short list; the agent runs the same assembly code it runs for a real provider.

A script is read in one of two orders. By call (the default): the n-th call gets the n-th reply, so a
model object follows one process's calls. By position (``keyed_by="position"``): the reply is chosen by
how many assistant messages the conversation the model is given already holds, so the script is the
whole conversation's, and the same model works in every process that resumes it: a process that
picks a session up after an interrupt asks for the reply at its position in the conversation, not
for "the first one", and needs no list of only the replies still to come.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from statehitl.models.base import Model
from statehitl.models.errors import ModelError
from statehitl.models.streaming import block_events
from statehitl.types.content import Message, Messages
from statehitl.types.streaming import StreamEvent
from statehitl.types.tools import ToolSpec

_CHARS_PER_TOKEN = 4


class ScriptedModel(Model):
    """Replies with ``responses``: one per call in call order, or with ``keyed_by="position"`` the one at
    the conversation's position (the number of assistant messages in what the model is given).

    Each response is an assistant ``Message``, a ``str`` (one text block), or an exception instance,
    which that call raises instead (to test model failures). A toolUse block without a ``toolUseId``
    gets ``tooluse_<response>_<block>``, so ids stay stable across runs and processes. Usage is
    reported as one output token per four characters of reply (text and tool input JSON) and no input
    tokens.

    By position, response n answers the conversation's n-th model turn however many processes it
    took to get there, and a call repeated at one position (an ``AfterModelCallEvent`` retry) gets the
    same reply again. Anything that changes the count moves the positions: a conversation manager
    that trims old turns, ``agent.messages`` assigned by hand, or a recorded direct tool call (which
    adds an assistant message of its own).

    ``calls`` counts calls, including failed ones; ``requests`` holds what each call was given, as
    ``{"messages": [...], "tool_specs": ..., "system_prompt": ...}`` (the list is a shallow copy).
    """

    def __init__(
        self, responses: Sequence[Message | str | BaseException], *, keyed_by: Literal["call", "position"] = "call"
    ) -> None:
        if keyed_by not in ("call", "position"):
            raise ValueError(f"ScriptedModel keyed_by must be 'call' or 'position', not {keyed_by!r}")
        self._script = [_script_entry(response, index) for index, response in enumerate(responses)]
        self.keyed_by = keyed_by
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
        """Yield the scripted reply's events for this call or position (or raise its exception)."""
        call = self.calls
        self.calls += 1
        self.requests.append({"messages": list(messages), "tool_specs": tool_specs, "system_prompt": system_prompt})
        if self.keyed_by == "call":
            index = call
            if index >= len(self._script):
                raise ModelError(
                    f"ScriptedModel was scripted with {len(self._script)} response(s) and the agent asked for one "
                    f"more (call {index + 1}); add a response for this turn (its request is in .requests[-1])"
                )
        else:
            index = sum(1 for message in messages if message.get("role") == "assistant")
            if index >= len(self._script):
                raise ModelError(
                    f"ScriptedModel was scripted with {len(self._script)} response(s), for positions 0 to "
                    f"{len(self._script) - 1}, and the conversation it was given holds {index} assistant "
                    f"message(s), so it asks for response {index}; add it (its request is in .requests[-1])"
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
