"""Checking interrupt responses before a resume touches anything.

Pure functions: given the payload a caller passed and the interrupts pending on the thread, either
return ``{interrupt_id: response}`` or raise an error that names what was wrong. Because this runs
before the runner loads or writes anything, a rejected call leaves the stored checkpoint as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statehitl._json import require_json
from statehitl.errors import InvalidResponseError, ResumeInputError, UnknownInterruptError
from statehitl.interrupt import Interrupt

__all__ = ["is_response_list", "parse_responses"]

_EXAMPLE = "[{'interruptResponse': {'interruptId': interrupt.id, 'response': ...}}]"


def is_response_list(payload: Any) -> bool:
    """Whether ``payload`` looks like an attempt to answer interrupts (a list of interruptResponse)."""
    return isinstance(payload, list) and any(
        isinstance(item, dict) and "interruptResponse" in item for item in payload
    )


def parse_responses(payload: Any, pending: Sequence[Interrupt], *, thread: str) -> dict[str, Any]:
    """Validate ``payload`` against the ``pending`` interrupts of ``thread``; return id -> response."""
    names = {i.id: i.name for i in pending}
    waiting = ", ".join(f"{i.name!r} (id {i.id})" for i in pending)
    if not isinstance(payload, list):
        raise ResumeInputError(
            f"{thread} is waiting on interrupts {waiting}; resume it with a list like {_EXAMPLE}, "
            f"not a {type(payload).__name__}"
        )
    if not payload:
        raise InvalidResponseError(f"{thread}: the list of interrupt responses is empty; expected {_EXAMPLE}")
    answers: dict[str, Any] = {}
    for index, item in enumerate(payload):
        if not isinstance(item, dict) or set(item) != {"interruptResponse"}:
            raise ResumeInputError(
                f"{thread}: item {index} of the resume list is {item!r}; while interrupted every item "
                f"must be {{'interruptResponse': {{...}}}} and nothing else"
            )
        block = item["interruptResponse"]
        if not isinstance(block, dict):
            raise ResumeInputError(f"{thread}: item {index}'s interruptResponse must be a dict, got {block!r}")
        if "interruptId" not in block:
            raise InvalidResponseError(f"{thread}: item {index}'s interruptResponse has no 'interruptId'")
        iid = block["interruptId"]
        if iid not in names:
            raise UnknownInterruptError(
                f"{thread}: interrupt id {iid!r} (item {index}) is not pending; pending: {waiting or 'none'}"
            )
        if "response" not in block:
            raise InvalidResponseError(
                f"{thread}: the response to interrupt {names[iid]!r} (id {iid}) is missing its 'response'"
            )
        if iid in answers:
            raise InvalidResponseError(f"{thread}: interrupt {names[iid]!r} (id {iid}) is answered twice")
        require_json(block["response"], f"the response to interrupt {names[iid]!r}")
        answers[iid] = block["response"]
    return answers
