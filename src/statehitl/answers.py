"""The built-in answer vocabulary: ``Approve``, ``Reject(message)``, ``Edit(input)``, ``Respond(text)``.

Most interrupts ask one of a few questions: may this run, may it run with other input, or what should
I say. These models name the answers, JSON-tagged so a UI (or ``curl``) can send them as plain JSON,
``{"type": "approve"}``, ``{"type": "reject", "message": "too expensive"}``, ``{"type": "edit",
"input": {...}}``, ``{"type": "respond", "text": "..."}``, and any of them can be a ``response_type``.

For a tool call, ``BeforeToolCallEvent.approve(name, reason=...)`` asks with ``ToolAnswer`` (approve,
reject or edit) and applies the answer to the call: ``Edit`` replaces its input, checked against the
tool's input schema; ``Reject`` cancels it with the message; ``Approve`` lets it run. The interrupt's
schema names the tool's input schema for ``Edit``, so a wrong edit is refused at resume.
"""

from __future__ import annotations

import copy
import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from statehitl.errors import ResponseValidationError
from statehitl.json_schema_check import schema_errors
from statehitl.response_types import response_schema

__all__ = [
    "Answer",
    "Approve",
    "Edit",
    "Reject",
    "Respond",
    "ToolAnswer",
    "check_edit",
    "outcome_of",
    "tool_answer_schema",
]


class Approve(BaseModel):
    """Go ahead, as shown."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True,
                              json_schema_extra={"required": ["type"]})

    type: Literal["approve"] = "approve"


class Reject(BaseModel):
    """Do not do it; ``message`` says why (a rejected tool call returns it to the model as the error)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True,
                              json_schema_extra={"required": ["type"]})

    type: Literal["reject"] = "reject"
    message: str = "rejected"


class Edit(BaseModel):
    """Do it with this ``input`` instead (a tool call's arguments)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True,
                              json_schema_extra={"required": ["type", "input"]})

    type: Literal["edit"] = "edit"
    input: Any


class Respond(BaseModel):
    """A free-text answer: what the human says, for the run to use."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True,
                              json_schema_extra={"required": ["type", "text"]})

    type: Literal["respond"] = "respond"
    text: str


# The tag is required in the schema (a form must send it; the union is told apart by it) though each
# model fills it in when built in Python: ``Approve()`` rather than ``Approve(type="approve")``.
Answer = Annotated[Approve | Reject | Edit | Respond, Field(discriminator="type")]
"""Any answer of the vocabulary."""

ToolAnswer = Annotated[Approve | Reject | Edit, Field(discriminator="type")]
"""An answer to "may this tool call run?"."""

AnswerOutcome = Literal["applied", "rejected", "edited"]
"""What an applied answer did (``AuditEntry.outcome``)."""
_OUTCOMES: dict[str, AnswerOutcome] = {"approve": "applied", "reject": "rejected", "edit": "edited",
                                       "respond": "applied"}


def outcome_of(response: Any) -> AnswerOutcome:
    """What an answer did, for the audit trail: ``rejected``, ``edited``, else ``applied``."""
    kind = getattr(response, "type", None)
    if kind is None and isinstance(response, dict):
        kind = response.get("type")
    return _OUTCOMES.get(kind, "applied") if isinstance(kind, str) else "applied"


@functools.cache
def _tool_answer_base() -> dict[str, Any]:
    return response_schema(ToolAnswer)


def tool_answer_schema(input_schema: dict[str, Any] | None) -> dict[str, Any]:
    """``ToolAnswer``'s schema with ``Edit.input`` held to the tool's ``input_schema``, whose own
    definitions move to the root under a ``tool.`` prefix so its references still resolve."""
    schema = copy.deepcopy(_tool_answer_base())
    if input_schema is None:
        return schema
    tool = copy.deepcopy(input_schema)
    definitions = {f"tool.{k}": _rebase(v) for k, v in tool.pop("$defs", {}).items()}
    definitions.update({f"tool.{k}": _rebase(v) for k, v in tool.pop("definitions", {}).items()})
    schema["$defs"]["Edit"]["properties"]["input"] = _rebase(tool)
    schema["$defs"].update(definitions)
    return schema


def _rebase(node: Any) -> Any:
    """Point a tool schema's local references at the prefixed root definitions."""
    if isinstance(node, dict):
        out = {k: _rebase(v) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str):
            for head in ("#/$defs/", "#/definitions/"):
                if ref.startswith(head):
                    out["$ref"] = "#/$defs/tool." + ref[len(head):]
        return out
    if isinstance(node, list):
        return [_rebase(v) for v in node]
    return node


def check_edit(edit: Edit, input_schema: dict[str, Any] | None, where: str) -> None:
    """Refuse an ``Edit`` whose input the tool would not take (``ResponseValidationError``)."""
    if input_schema is None:
        return
    problems = schema_errors(edit.input, input_schema)
    if problems:
        raise ResponseValidationError(f"{where}: the edited input does not fit the tool's input schema: "
                                      + "; ".join(problems))
