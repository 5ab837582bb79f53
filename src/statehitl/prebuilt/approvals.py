"""The approval step LangGraph leaves to each user: before ``ToolNode`` runs a listed tool call, a human approves it,
edits its arguments, or rejects it with a reason.

Each call is its own interrupt (one question per call, all asked at once), at a site of its own under the node
call (``call_site``), typed with the answer vocabulary (``statehitl.answers.ToolAnswer``, the ``Edit`` held to the
tool's argument schema) and bound to the call's digest (``action_digest``), so an answer given for other arguments
is refused. The answer is the interrupt's one binding answer, whichever door it came through (the application's
``Command(resume=...)``, the inbox, the worker). The node re-runs only after its resume claimed the thread, so an
approved call runs once however many processes race to resume it; the same site names its idempotency key
(``InjectedIdempotencyKey``), which the tool hands to the service it acts on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from statehitl import interrupt_ids
from statehitl.action_digest import tool_call_digest
from statehitl.errors import InterruptOutsideRunError, InvalidResponseError
from statehitl.interrupt import Interrupt, InterruptRaised
from statehitl.position import NodeContext

APPROVAL_INTERRUPT = "tool-approval"
"""The name of every approval interrupt (each call has a site of its own, so the ids differ)."""


@dataclass(frozen=True)
class ApprovedCall:
    """A call as the human decided it: to run (its arguments as approved or edited), or refused with
    ``refusal``, the tool message the model gets instead."""

    call: ToolCall
    refusal: ToolMessage | None = None


def call_site(ctx: NodeContext, call_id: str) -> str:
    """The site of one tool call of the node call ``ctx``: its approval's interrupt id and its idempotency key."""
    node = interrupt_ids.node(ctx.interrupts.prefix, ctx.step, ctx.node)
    return interrupt_ids.tool_call(interrupt_ids.nested(node), ctx.step, call_id)


def idempotency_key(ctx: NodeContext | None, call_id: str) -> str:
    """The key of tool call ``call_id``: the same whenever this call of this step of this thread runs."""
    if ctx is None:  # outside a run nothing can repeat the call: the call's own id names it
        return interrupt_ids.action_key("", f"call:{call_id}")
    return interrupt_ids.action_key(ctx.thread_id, call_site(ctx, call_id))


def _schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON schema of the arguments the model gives ``tool`` (its injected arguments left out)."""
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return schema
    made: dict[str, Any] = schema.model_json_schema() if hasattr(schema, "model_json_schema") else schema.schema()
    return made


@dataclass(frozen=True)
class Approvals:
    """Which tools' calls wait for a human, and who may answer."""

    schemas: Mapping[str, dict[str, Any]]
    """The argument schema of each tool that needs approval, by name (an ``Edit`` must fit it)."""
    responders: list[str] | None = None

    @classmethod
    def of(cls, approve_tools: bool | Sequence[str], tools: Mapping[str, BaseTool],
           responders: list[str] | None) -> Approvals:
        """``approve_tools``: True (every tool), False (none), or tool names, each one of ``tools``."""
        if isinstance(approve_tools, str):
            raise TypeError(f"approve_tools takes a list of tool names or True, got the string {approve_tools!r}")
        names = list(tools) if approve_tools is True else list(approve_tools or ())
        unknown = [n for n in names if n not in tools]
        if unknown:
            raise ValueError(f"approve_tools names {unknown} that are not among the tools {list(tools)}")
        return cls({n: _schema(tools[n]) for n in names}, responders)

    def decide(self, calls: list[ToolCall], ctx: NodeContext | None) -> list[ApprovedCall]:
        """Each call as the human decided it; stops the node (``InterruptRaised``, one interrupt per call) while
        any listed call is unanswered."""
        if not any(c["name"] in self.schemas for c in calls):
            return [ApprovedCall(c) for c in calls]
        if ctx is None:
            raise InterruptOutsideRunError("tool calls that need approval (approve_tools) can only wait in a "
                                           "graph run: run the ToolNode as a node of a compiled graph")
        asked: list[Interrupt] = []
        decided: list[ApprovedCall] = []
        for call in calls:
            if call["name"] not in self.schemas:
                decided.append(ApprovedCall(call))
                continue
            try:
                decided.append(self._decide_one(call, ctx))
            except InterruptRaised as raised:
                asked.extend(raised.interrupts)
        if asked:
            raise InterruptRaised(asked)
        return decided

    def _decide_one(self, call: ToolCall, ctx: NodeContext) -> ApprovedCall:
        # imported on the first approval: graphs without one never build the vocabulary's models
        from statehitl.answers import Edit, Reject, ToolAnswer, check_edit, tool_answer_schema

        name, call_id = call["name"], call["id"] or ""
        scope = ctx.interrupts.scope(call_site(ctx, call_id), "tool", ctx.node)
        reason = {"tool": name, "args": call["args"], "id": call_id}
        answer = scope.interrupt(APPROVAL_INTERRUPT, reason, None, ToolAnswer,
                                 digest=tool_call_digest(name, call["args"]),
                                 schema=tool_answer_schema(self.schemas[name]), responders=self.responders)
        if isinstance(answer, Reject):
            return ApprovedCall(call, ToolMessage(answer.message, name=name, tool_call_id=call_id, status="error"))
        if isinstance(answer, Edit):
            try:
                check_edit(answer, self.schemas[name], f"the answer to the approval of tool call {call_id!r} ({name})")
            except InvalidResponseError as refused:
                refused.refused_answer = True
                raise
            return ApprovedCall(ToolCall(name=name, args=answer.input, id=call_id, type="tool_call"))
        return ApprovedCall(call)
