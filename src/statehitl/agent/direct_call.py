"""``agent.tool.<name>(...)``: one tool called by the program rather than the model, as Strands does it.

The call goes through the same per-tool path as a call the model asks for, so the tool's
``BeforeToolCallEvent`` and ``AfterToolCallEvent`` fire (a hook may cancel the call or replace its
result). There is no run to stop, though, so an interrupt from a hook or from the tool raises
``DirectToolCallError`` instead.

By default (``Agent(record_direct_tool_call=True)``, or per call) the call then joins the conversation
as four messages: the request, the ``toolUse``, its result and an acknowledgement. The model sees on
its next turn what was done on its behalf, and with a session the messages are saved at once, so a new
Agent built on the session sees them too (the seed's server pattern builds one per request).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from statehitl import interrupt_ids
from statehitl._sync import run_sync
from statehitl.agent.result import AgentMetrics
from statehitl.agent.runtime import AgentRuntime, LoopRun
from statehitl.agent.thread import AgentThread
from statehitl.agent.tool_batch import call_tool
from statehitl.errors import DirectToolCallError
from statehitl.interrupt import Interrupt, InterruptContext
from statehitl.types.content import Message
from statehitl.types.tools import AgentTool, ToolResult, ToolUse


class ToolCaller:
    """``agent.tool``: ``agent.tool.name(**input)`` calls the tool ``name`` and returns its ``ToolResult``.

    ``_`` in ``name`` also matches ``-`` in a tool's name (``agent.tool.get_weather`` calls
    ``get-weather``). Two keywords are the call's own, not the tool's: ``record_direct_tool_call``
    (overrides the agent's setting for this call) and ``user_message_override`` (a text recorded
    before the standard description of the call).
    """

    def __init__(self, runtime: AgentRuntime, thread: AgentThread, record: bool) -> None:
        self._runtime = runtime
        self._thread = thread
        self._record = record

    def __getattr__(self, name: str) -> Callable[..., ToolResult]:
        runtime = self._runtime
        registry = runtime.tools
        tool = registry.get(name) or next(
            (registry.get(n) for n in registry.names if "-" in n and n.replace("-", "_") == name), None)
        if tool is None:
            raise AttributeError(f"agent {runtime.name!r} has no tool {name!r}; its tools: {registry.names}")

        def call(*, record_direct_tool_call: bool | None = None, user_message_override: str | None = None,
                 **tool_input: Any) -> ToolResult:
            record = self._record if record_direct_tool_call is None else record_direct_tool_call
            return run_sync(self._call(tool, tool_input, record, user_message_override))

        return call

    async def _call(self, tool: AgentTool, tool_input: dict[str, Any], record: bool,
                    user_message_override: str | None) -> ToolResult:
        use: ToolUse = {"toolUseId": f"tooluse_{tool.tool_name}_{os.urandom(6).hex()}", "name": tool.tool_name,
                        "input": tool_input}
        if not record:
            return await self._run_tool(use)
        thread = self._thread
        with thread.recording():
            result = await self._run_tool(use)
            await thread.record(recorded_messages(tool, use, result, user_message_override), saved=thread.session)
        return result

    async def _run_tool(self, use: ToolUse) -> ToolResult:
        """The tool's result, through its hooks; an interrupt is refused, as nothing could resume it."""
        run = LoopRun(self._runtime, {}, AgentMetrics())
        outcome = await call_tool(run, use, 0, InterruptContext({}, interrupt_ids.nested(interrupt_ids.DIRECT_CALL)),
                                  inline=True)
        if isinstance(outcome, list):
            raise DirectToolCallError(_refusal(use["name"], outcome))
        return outcome


def _refusal(name: str, interrupts: list[Interrupt]) -> str:
    who = "the tool" if interrupts[0].source == "tool" else "a BeforeToolCallEvent hook"
    names = ", ".join(repr(i.name) for i in interrupts)
    return (f"{who} called interrupt({names}) in a direct tool call of {name!r}; interrupts are only "
            "supported when the agent calls the tool (agent('...')), not in agent.tool.<name>()")


def recorded_messages(tool: AgentTool, use: ToolUse, result: ToolResult,
                      user_message_override: str | None) -> list[Message]:
    """The four messages that record a direct call, in the form Strands records them.

    Only the inputs the tool's schema declares are recorded: a caller may pass extra keywords the tool
    ignores, and the model should not read them as the tool's parameters.
    """
    declared = tool.tool_spec["inputSchema"]["json"].get("properties")
    given = use["input"]
    kept = dict(given) if declared is None else {k: v for k, v in given.items() if k in declared}
    described = json.dumps(kept, default=lambda o: f"<<non-serializable: {type(o).__qualname__}>>")
    request: list[Any] = [{"text": f"agent.tool.{use['name']} direct tool call.\nInput parameters: {described}\n"}]
    if user_message_override:
        request.insert(0, {"text": f"{user_message_override}\n"})
    recorded_use: ToolUse = {"toolUseId": use["toolUseId"], "name": use["name"], "input": kept}
    return [
        {"role": "user", "content": request},
        {"role": "assistant", "content": [{"toolUse": recorded_use}]},
        {"role": "user", "content": [{"toolResult": result}]},
        {"role": "assistant", "content": [{"text": f"agent.tool.{use['name']} was called."}]},
    ]
