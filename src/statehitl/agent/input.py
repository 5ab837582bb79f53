"""Turning what a caller passes to ``agent(...)`` into user messages, with errors that say what was wrong."""

from __future__ import annotations

from typing import Any

from statehitl.errors import ResumeInputError
from statehitl.types.content import Message

_SHAPES = "a str, a list of content blocks, a list of messages, interrupt responses, or None"


def to_messages(prompt: Any) -> list[Message]:
    """The new messages a prompt adds to the conversation."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [{"role": "user", "content": [{"text": prompt}]}]
    if not isinstance(prompt, list):
        raise ResumeInputError(f"agent input must be {_SHAPES}; got {type(prompt).__name__}: {prompt!r}")
    if not prompt:
        return []
    if all(isinstance(item, dict) and "role" in item for item in prompt):
        for index, message in enumerate(prompt):
            if message["role"] not in ("user", "assistant") or not isinstance(message.get("content"), list):
                raise ResumeInputError(
                    f"message {index} of the input must have role 'user' or 'assistant' and a list of content "
                    f"blocks; got {message!r}"
                )
        return list(prompt)
    for index, block in enumerate(prompt):
        if not isinstance(block, dict) or not block:
            raise ResumeInputError(
                f"item {index} of the input is {block!r}; a list input must hold content blocks like "
                "{'text': ...} or messages like {'role': 'user', 'content': [...]}"
            )
    return [{"role": "user", "content": list(prompt)}]
