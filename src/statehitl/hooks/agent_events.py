"""Hook events of the agent loop, with the names, fields and order Strands users know.

One invocation fires, in order: ``BeforeInvocationEvent``; ``MessageAddedEvent`` for the prompt; then
per cycle ``BeforeModelCallEvent`` / ``AfterModelCallEvent``, and if the model asked for tools
``BeforeToolsEvent``, ``BeforeToolCallEvent`` / ``AfterToolCallEvent`` per tool, ``AfterToolsEvent``,
``MessageAddedEvent`` for the assistant message and for the tool results; finally
``AfterInvocationEvent``. ``BeforeToolsEvent`` and ``BeforeToolCallEvent`` may interrupt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statehitl.action_digest import tool_call_digest
from statehitl.errors import InvalidResponseError
from statehitl.hooks.registry import HookEvent, InterruptibleEvent
from statehitl.types.content import ContentBlock, Message, Messages
from statehitl.types.tools import AgentTool, ToolResult, ToolUse

if TYPE_CHECKING:
    from statehitl.agent.result import AgentResult
    from statehitl.answers import Approve, Edit, Reject
    from statehitl.types.agent import AgentInput


@dataclass
class BeforeInvocationEvent(HookEvent):
    """A call to the agent starts (also when it resumes from an interrupt).

    ``messages`` are the new input messages (None on a resume); a hook may rewrite them, e.g. to
    redact. ``cancel`` (True or a message) stops the invocation before the model is called: as in
    Strands, the message (``"invocation denied by hook"`` for True) is the call's ``end_turn`` reply,
    recorded in place of the prompt (on a resume nothing is recorded and the agent still waits).
    """

    agent: Any
    invocation_state: dict[str, Any] = field(default_factory=dict)
    messages: Messages | None = None
    cancel: bool | str = False


@dataclass
class AfterInvocationEvent(HookEvent):
    """A call to the agent ended, however it ended. ``resume`` set to an input runs the agent again."""

    agent: Any
    invocation_state: dict[str, Any] = field(default_factory=dict)
    result: AgentResult | None = None
    resume: AgentInput = None

    should_reverse_callbacks = True


@dataclass
class MessageAddedEvent(HookEvent):
    """A message joined ``agent.messages`` (prompt, assistant reply, tool results)."""

    agent: Any
    message: Message


@dataclass
class BeforeModelCallEvent(HookEvent):
    """The model is about to be called. ``cancel`` (True or a message) answers in its place, as in Strands:
    the message (``"model call denied by hook"`` for True) is the ``end_turn`` reply ``AfterModelCallEvent``
    hooks see.

    ``new_messages``: messages a hook adds to the conversation now (an intervention's guidance): the
    model sees them on this call, and they join ``agent.messages`` ahead of its reply, checkpointed with it.
    """

    agent: Any
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel: bool | str = False
    new_messages: list[Message] = field(default_factory=list)


@dataclass
class ModelStopResponse:
    """What the model answered: its message and why it stopped."""

    message: Message
    stop_reason: str


@dataclass
class AfterModelCallEvent(HookEvent):
    """The model answered (``stop_response``) or failed (``exception``). ``retry = True`` calls it again.

    ``new_messages``: messages a hook adds to the conversation now, ahead of the reply that is kept (with
    ``retry``, the call that follows sees them: how a guided retry tells the model what to change).
    """

    agent: Any
    invocation_state: dict[str, Any] = field(default_factory=dict)
    stop_response: ModelStopResponse | None = None
    exception: Exception | None = None
    retry: bool = False
    new_messages: list[Message] = field(default_factory=list)

    should_reverse_callbacks = True


@dataclass
class BeforeToolsEvent(InterruptibleEvent):
    """The model asked for tools (``message`` is its assistant message); none has run yet.

    Interrupt to approve the whole batch; set ``cancel`` (True or a message) to give every tool an
    error result instead of running it (no per-tool events fire then). Fires once per cycle, so again
    on the resume of a batch split by a per-tool interrupt.
    """

    agent: Any
    message: Message
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel: bool | str = False


@dataclass
class AfterToolsEvent(HookEvent):
    """The cycle's tools finished; ``message`` is the user message of the results collected this cycle.

    ``end_turn`` (True, a text, or content blocks) stops the loop without calling the model again.
    """

    agent: Any
    message: Message
    invocation_state: dict[str, Any] = field(default_factory=dict)
    end_turn: bool | str | list[ContentBlock] = False

    should_reverse_callbacks = True


@dataclass
class BeforeToolCallEvent(InterruptibleEvent):
    """One tool is about to run. Interrupt to ask first; ``cancel_tool`` (True or a message) skips it.

    ``selected_tool`` is None when the model named a tool the agent does not have.
    """

    agent: Any
    selected_tool: AgentTool | None
    tool_use: ToolUse
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel_tool: bool | str = False

    def _digest(self) -> str | None:
        # The call as it stands when the hook asks: hooks before this one may have changed its input.
        return tool_call_digest(self.tool_use["name"], self.tool_use.get("input"))

    def approve(self, name: str = "approval", reason: Any = None, *,
                responders: list[str] | None = None) -> Approve | Reject | Edit:
        """Ask the human to approve this call, and apply the answer (the ``answers`` vocabulary).

        ``Approve`` lets the call run; ``Reject(message)`` cancels it, the message going back to the
        model as the tool's error; ``Edit(input)`` runs it with ``input`` instead, which must fit the
        tool's input schema (checked at resume, before the thread is claimed, and again here). The
        interrupt carries the call's digest, so the answer is never applied to other arguments.
        ``responders``: who may answer (names and ``group:NAME`` groups), as for ``interrupt``.
        """
        # Imported here: the vocabulary's models are built only by agents that use it (cold starts).
        from statehitl.answers import Edit, Reject, ToolAnswer, tool_answer_schema

        scope = self._active_scope(name)
        answer: Approve | Reject | Edit = scope.interrupt(
            name, reason, None, ToolAnswer, digest=self._digest(), schema=tool_answer_schema(self.input_schema),
            responders=responders)
        if isinstance(answer, Reject):
            self.cancel_tool = answer.message
        elif isinstance(answer, Edit):
            self.apply_edit(answer, name)
        return answer

    @property
    def input_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the selected tool's input (None for a tool the agent does not have)."""
        return self.selected_tool.tool_spec["inputSchema"]["json"] if self.selected_tool is not None else None

    def apply_edit(self, edit: Edit, name: str) -> None:
        """Run this call with ``edit.input``, a human's ``Edit`` answer to interrupt ``name``.

        An input the tool would not take is refused (``ResponseValidationError``) as an answer refused at
        resume is: nothing was applied, and the interrupt waits to be answered again.
        """
        from statehitl.answers import check_edit

        try:
            check_edit(edit, self.input_schema, f"the answer to interrupt {name!r} on tool {self.tool_use['name']!r}")
        except InvalidResponseError as refused:
            self.refuse_answer(refused, name)
            raise
        self.tool_use = {**self.tool_use, "input": edit.input}


@dataclass
class AfterToolCallEvent(HookEvent):
    """One tool finished (or was cancelled): ``result`` may be replaced; ``retry = True`` runs it again."""

    agent: Any
    selected_tool: AgentTool | None
    tool_use: ToolUse
    invocation_state: dict[str, Any]
    result: ToolResult
    exception: Exception | None = None
    cancel_message: str | None = None
    duration: float | None = None
    retry: bool = False

    should_reverse_callbacks = True
