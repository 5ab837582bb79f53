"""Tool uses, tool results, tool specs, and the ``ToolContext`` a tool receives.

``ToolContext.interrupt`` is how a tool asks a human: it returns the answer when the resumed run
supplies one, and otherwise stops the tool (the agent then stops with ``stop_reason == "interrupt"``).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from statehitl.action_digest import tool_call_digest

if TYPE_CHECKING:
    from statehitl.interrupt import InterruptScope

__all__ = [
    "AgentTool",
    "ToolContext",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSpec",
    "ToolUse",
    "error_result",
]

ToolResultStatus = Literal["success", "error"]


class ToolUse(TypedDict):
    """The model's request to run a tool."""

    toolUseId: str
    name: str
    input: Any


class ToolResultContent(TypedDict, total=False):
    text: str
    json: Any
    image: dict[str, Any]
    document: dict[str, Any]


class ToolResult(TypedDict):
    """What a tool call produced, sent back to the model in a user message's ``toolResult`` block."""

    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


def error_result(tool_use: ToolUse, text: str) -> ToolResult:
    """A failed call as the model reads it: the error goes back as a result, so the model can correct itself."""
    return {"toolUseId": tool_use["toolUseId"], "status": "error", "content": [{"text": text}]}


class _InputSchema(TypedDict):
    json: dict[str, Any]


class ToolSpec(TypedDict):
    """What the model is told about a tool: its name, what it does, and a JSON schema of its input."""

    name: str
    description: str
    inputSchema: _InputSchema


@dataclass
class ToolContext:
    """The context a ``@tool(context=True)`` function receives.

    ``agent`` is the running agent (its ``state`` and ``messages``); ``invocation_state`` is the dict
    passed to this invocation. ``interrupt`` raises an interrupt whose name need only be unique within
    this tool call. ``cancel_signal`` is the agent's (``agent.cancel_signal``): a long tool may poll
    ``cancel_signal.is_set()`` and return early once the call is cancelled; one that ignores it runs to its
    end. Read it only; ``agent.cancel()`` sets it.
    """

    tool_use: ToolUse
    agent: Any
    invocation_state: dict[str, Any] = field(default_factory=dict)
    _scope: InterruptScope | None = None
    cancel_signal: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def interrupt(self, name: str, reason: Any = None, response: Any = None, *, response_type: Any = None,
                  expires_in: float | None = None, expires_at: float | None = None, on_expire: Any = None,
                  responders: list[str] | None = None) -> Any:
        """Ask the human; returns their response on resume (or ``response``, an answer known in
        advance). ``reason`` must be JSON-serializable. ``response_type``: the response is validated as
        this type and returned as its value. The interrupt carries the digest of this tool call, so an
        answer is never applied to a call with other input.
        ``expires_in`` (seconds) or ``expires_at`` (epoch) with ``on_expire``: past the deadline a sweep
        (``statehitl inbox sweep``) answers it with ``on_expire``. ``responders``: who may answer, names
        and ``group:NAME`` groups; an answer from anyone else is refused (``ResponderNotAllowedError``) and
        kept in the audit trail as ``refused``."""
        if self._scope is None:
            from statehitl.errors import InterruptOutsideRunError

            # Only a context made by hand gets here: an agent's calls, direct ones too, always give one.
            raise InterruptOutsideRunError(
                f"tool {self.tool_use['name']!r} called interrupt({name!r}) outside an agent run (this "
                "ToolContext has no run to stop); interrupts work when the agent calls the tool (agent('...'))"
            )
        digest = tool_call_digest(self.tool_use["name"], self.tool_use.get("input"))
        return self._scope.interrupt(name, reason, response, response_type, digest=digest, expires_in=expires_in,
                                     expires_at=expires_at, on_expire=on_expire, responders=responders)

    @property
    def idempotency_key(self) -> str:
        """A key that names this tool call for the outside world: the same whenever this call of this step
        of this thread runs (in any process, after any crash), different for every other call. Pass it to
        the service the tool acts on (an ``Idempotency-Key`` header, a unique column), so that an action
        run again after its outcome was lost (``ActionOutcomeUnknownError``, then a retry) is done once."""
        from statehitl import interrupt_ids

        if self._scope is None or self._scope.site.startswith(interrupt_ids.DIRECT_CALL):
            # A context made by hand, or a direct call (agent.tool.x()): no run that could repeat it.
            return interrupt_ids.action_key("", f"call:{self.tool_use['toolUseId']}")
        return interrupt_ids.action_key(self._scope.thread or "", self._scope.site)


class AgentTool(ABC):
    """A tool an agent can call. ``@tool`` builds one from a function; subclass for anything else.

    ``invoke`` returns a ``ToolResult``. It should turn the tool's own failures (bad input, exceptions)
    into ``status: "error"`` results the model can read, and must let ``InterruptRaised`` (raised by
    ``ToolContext.interrupt``) propagate: that is how the agent learns the tool is waiting on a human.
    ``inline=True`` means the caller is running this tool alone and a sync function may run on the
    event loop's thread instead of a worker thread.
    """

    @property
    @abstractmethod
    def tool_name(self) -> str: ...

    @property
    @abstractmethod
    def tool_spec(self) -> ToolSpec: ...

    @abstractmethod
    async def invoke(self, tool_use: ToolUse, context: ToolContext, *, inline: bool = False) -> ToolResult: ...
