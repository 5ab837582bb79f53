"""LangGraph's ``langgraph.prebuilt.interrupt``: the shapes of an Agent Inbox style request and its answer, for
a program that asks with ``interrupt([request])`` and reads ``response["type"]``.

They are plain ``TypedDict`` s (JSON, so an ``interrupt()`` value or an answer made of them is stored as is);
nothing checks them at run time, as on LangGraph.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

__all__ = ["ActionRequest", "HumanInterrupt", "HumanInterruptConfig", "HumanResponse"]


class HumanInterruptConfig(TypedDict):
    """Which answers the person may give: skip the step, reply in words, edit the request, or accept it."""

    allow_ignore: bool
    allow_respond: bool
    allow_edit: bool
    allow_accept: bool


class ActionRequest(TypedDict):
    """The action awaiting a decision (a tool's name, say) and the arguments it would run with."""

    action: str
    args: dict  # type: ignore[type-arg]  # any JSON object, as LangGraph's


class HumanInterrupt(TypedDict):
    """What ``interrupt()`` is given: the request, the answers allowed, and words for the person."""

    action_request: ActionRequest
    config: HumanInterruptConfig
    description: str | None


class HumanResponse(TypedDict):
    """The answer: ``accept`` and ``ignore`` carry no ``args``, ``response`` a text, ``edit`` a changed request."""

    type: Literal["accept", "ignore", "response", "edit"]
    args: str | ActionRequest | None
