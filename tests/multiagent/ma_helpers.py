"""Helpers for the multi-agent tests: scripted agents, tools that count their runs, answers."""

from __future__ import annotations

from typing import Any

from statehitl import Agent, tool
from statehitl.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.types.tools import ToolContext

RUNS: list[str] = []
"""What the tools below did, in order: the proof that an approved action ran once."""


def agent(name: str, *replies: Any, tools: list[Any] | None = None, **options: Any) -> Agent:
    return Agent(model=ScriptedModel(list(replies)), name=name, tools=tools or [], callback_handler=None, **options)


def uses(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message asking for tools: ``uses(("t1", "name", {...}), ...)``."""
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": i, "name": n, "input": x}} for i, n, x in calls]}


def handoff(to: str, message: str = "over to you", context: dict[str, Any] | None = None,
            use_id: str = "h1") -> dict[str, Any]:
    given: dict[str, Any] = {"agent_name": to, "message": message}
    if context is not None:
        given["context"] = context
    return uses((use_id, "handoff_to_agent", given))


def answer(result: Any, text: str = "y", only: str | None = None) -> list[dict[str, Any]]:
    """Answer every pending interrupt of ``result`` (or those named ``only``) with ``text``."""
    return [{"interruptResponse": {"interruptId": i.id, "response": text}} for i in result.interrupts
            if only is None or i.name == only]


@tool(context=True)
def delete(path: str, tool_context: ToolContext) -> str:
    """Delete a file (pretend).

    Args:
        path: the file
    """
    if tool_context.interrupt("delete-ok", reason={"path": path}) != "y":
        return "not deleted"
    RUNS.append(f"delete {path}")
    return f"deleted {path}"


@tool
def note(text: str) -> str:
    """Note something.

    Args:
        text: what
    """
    RUNS.append(f"note {text}")
    return "noted"


class Approval(HookProvider):
    """The seed's hook: ask before ``node`` runs, cancel it unless the answer is y."""

    def __init__(self, node: str = "cleanup", name: str = "myapp-approval") -> None:
        self.node, self.name = node, name

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id != self.node:
            return
        if event.interrupt(self.name, reason={"resources": "example"}).lower() != "y":
            event.cancel_node = "User denied permission to cleanup resources"


def text_of(result: Any, node: str) -> str:
    return str(result.results[node].result)
