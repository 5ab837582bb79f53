"""``ToolRegistry``: what it accepts, how it rejects mistakes, and the specs it hands the model."""

from __future__ import annotations

import pytest

from statehitl.tools import ToolRegistry, tool
from statehitl.types.tools import AgentTool, ToolContext, ToolResult, ToolSpec, ToolUse


@tool
def inspect_files(paths: list[str]) -> str:
    """Inspect files."""
    return ",".join(paths)


class DeleteTool:
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    @tool
    def delete_files(self, paths: list[str]) -> bool:
        return bool(paths)


class Echo(AgentTool):
    @property
    def tool_name(self) -> str:
        return "echo"

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": "echo", "description": "Echo.", "inputSchema": {"json": {"type": "object"}}}

    async def invoke(self, tool_use: ToolUse, context: ToolContext, *, inline: bool = False) -> ToolResult:
        return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "echo"}]}


def test_holds_tools_by_name_in_registration_order():
    delete = DeleteTool("myapp").delete_files
    echo = Echo()
    registry = ToolRegistry([delete, inspect_files, echo])

    assert registry.names == ("delete_files", "inspect_files", "echo")
    assert len(registry) == 3
    assert list(registry) == [delete, inspect_files, echo]
    assert registry.get("echo") is echo
    assert registry.get("missing") is None
    assert "inspect_files" in registry
    assert "missing" not in registry
    assert [spec["name"] for spec in registry.specs()] == ["delete_files", "inspect_files", "echo"]
    assert registry.specs() is registry.specs()


def test_empty_registry():
    registry = ToolRegistry()
    assert (len(registry), registry.names, registry.specs()) == (0, (), [])


def test_undecorated_function_is_rejected_with_a_hint():
    def plain(x: int) -> int:
        return x

    with pytest.raises(TypeError, match=r"plain is a plain function; decorate it with @tool"):
        ToolRegistry([inspect_files, plain])


def test_other_objects_are_rejected():
    with pytest.raises(TypeError, match="tools must be AgentTool objects"):
        ToolRegistry([DeleteTool("myapp")])


def test_duplicate_names_are_rejected():
    with pytest.raises(ValueError, match="two tools are named 'delete_files'"):
        ToolRegistry([DeleteTool("a").delete_files, DeleteTool("b").delete_files])
