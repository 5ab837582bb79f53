"""``@tool``: the spec it builds, binding to instances, and how ``invoke`` turns calls into results."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from typing import Any

import pytest

from statehitl.errors import InterruptOutsideRunError
from statehitl.interrupt import InterruptRaised, InterruptScope, interrupt_id
from statehitl.tools import DecoratedFunctionTool, tool
from statehitl.types.tools import AgentTool, ToolContext, ToolResult, ToolUse


def use(name: str, tool_input: Any, tool_use_id: str = "t1") -> ToolUse:
    return {"toolUseId": tool_use_id, "name": name, "input": tool_input}


def context_for(tool_use: ToolUse, responses: dict[str, Any] | None = None) -> ToolContext:
    scope = InterruptScope(site="tool:t1", responses=responses or {}, source="tool", node="t1")
    return ToolContext(tool_use=tool_use, agent=None, _scope=scope)


def invoke(t: AgentTool, tool_input: Any, *, inline: bool = False, context: ToolContext | None = None) -> ToolResult:
    tool_use = use(t.tool_name, tool_input)
    return asyncio.run(t.invoke(tool_use, context or context_for(tool_use), inline=inline))


def text(result: ToolResult) -> str:
    return result["content"][0]["text"]


@tool
def search(query: str, limit: int = 10, tags: list[str] | None = None) -> str:
    """Search the knowledge base.

    Matches titles first.

    Args:
        query: Words to look for,
            all of them.
        limit (int): At most this many hits.

    Returns:
        The hits, one per line.
    """
    return f"{query}|{limit}|{tags}"


# --- the spec -------------------------------------------------------------------------------------


def test_spec_comes_from_signature_and_docstring():
    assert search.tool_name == "search"
    assert search.tool_type == "function"
    assert search.tool_spec == {
        "name": "search",
        "description": "Search the knowledge base.\n\nMatches titles first.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for, all of them."},
                    "limit": {"type": "integer", "default": 10, "description": "At most this many hits."},
                    "tags": {
                        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                        "default": None,
                        "description": "Parameter tags",
                    },
                },
                "required": ["query"],
            }
        },
    }


def test_undocumented_function_is_described_by_its_name():
    @tool()
    def ping() -> str:
        return "pong"

    assert ping.tool_spec["description"] == "ping"
    assert ping.tool_spec["inputSchema"]["json"] == {"type": "object", "properties": {}}


def test_name_description_and_schema_overrides():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @tool(name="find", description="Find things.", inputSchema={"json": schema})
    def wrapped(q: int) -> int:
        return q

    @tool(inputSchema=schema)
    def bare(q: int) -> int:
        return q

    assert wrapped.tool_spec == {"name": "find", "description": "Find things.", "inputSchema": {"json": schema}}
    assert bare.tool_spec["inputSchema"] == {"json": schema}
    # The signature still decides what input is valid.
    assert text(invoke(wrapped, {"q": "x"})).startswith("Error: find - q: Input should be a valid integer")


def test_parameters_named_like_model_attributes_or_private():
    @tool
    def query(json: str, schema: str, _limit: int = 1) -> str:
        return f"{json}|{schema}|{_limit}"

    assert list(query.tool_spec["inputSchema"]["json"]["properties"]) == ["json", "schema", "_limit"]
    assert text(invoke(query, {"json": "a", "schema": "b", "_limit": 2})) == "a|b|2"


def test_direct_call_runs_the_function():
    assert search("cats", limit=2) == "cats|2|None"
    assert search.original_function("dogs") == "dogs|10|None"
    assert search.__name__ == "search"
    assert search.__doc__ is not None
    assert search.__doc__.startswith("Search the knowledge base.")


# --- methods --------------------------------------------------------------------------------------


class DeleteTool:
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    @tool(context=True)
    def delete_files(self, tool_context: ToolContext, paths: list[str]) -> str:
        """Delete files.

        Args:
            paths: The files to delete.
        """
        approval = tool_context.interrupt(f"{self.app_name}-approval", reason={"paths": paths})
        return f"{self.app_name}:{approval}:{','.join(paths)}"

    @tool
    def label(self, suffix: str) -> str:
        return f"{self.app_name}-{suffix}"


def test_method_tool_binds_to_each_instance():
    first, second = DeleteTool("one").label, DeleteTool("two").label

    assert isinstance(first, DecoratedFunctionTool)
    assert isinstance(first, AgentTool)
    assert first.tool_spec["inputSchema"]["json"]["properties"].keys() == {"suffix"}
    assert text(invoke(first, {"suffix": "x"})) == "one-x"
    assert text(invoke(second, {"suffix": "x"})) == "two-x"
    assert first("y") == "one-y"
    assert first.original_function.__self__.app_name == "one"


def test_method_tool_through_the_class_is_the_unbound_tool():
    assert DeleteTool.label is DeleteTool.__dict__["label"]
    assert DeleteTool.label.tool_name == "label"


def test_module_level_tool_stored_on_a_class_is_not_bound():
    class Toolbox:
        find = search

    assert Toolbox().find is search


# --- the tool context and interrupts --------------------------------------------------------------


def test_method_tool_interrupt_propagates_out_of_invoke():
    delete = DeleteTool("myapp").delete_files
    assert delete.tool_spec["inputSchema"]["json"]["required"] == ["paths"]

    with pytest.raises(InterruptRaised) as raised:
        invoke(delete, {"paths": ["a.txt"]})

    (interrupt,) = raised.value.interrupts
    assert interrupt.id == interrupt_id("tool:t1", "myapp-approval")
    assert (interrupt.name, interrupt.reason, interrupt.source, interrupt.node) == (
        "myapp-approval",
        {"paths": ["a.txt"]},
        "tool",
        "t1",
    )


@pytest.mark.parametrize("inline", [True, False])
def test_interrupt_returns_the_response_on_resume(inline: bool):
    delete = DeleteTool("myapp").delete_files
    tool_use = use("delete_files", {"paths": ["a.txt", "b.txt"]})
    context = context_for(tool_use, {interrupt_id("tool:t1", "myapp-approval"): "y"})

    result = asyncio.run(delete.invoke(tool_use, context, inline=inline))

    assert result == {"toolUseId": "t1", "status": "success", "content": [{"text": "myapp:y:a.txt,b.txt"}]}


def test_async_tool_interrupt_propagates():
    @tool(context=True)
    async def approve(tool_context: ToolContext) -> str:
        return str(tool_context.interrupt("approve"))

    with pytest.raises(InterruptRaised):
        invoke(approve, {})


def test_a_hand_made_context_cannot_interrupt():
    delete = DeleteTool("myapp").delete_files
    tool_use = use("delete_files", {"paths": ["a.txt"]})
    with pytest.raises(InterruptOutsideRunError, match="outside an agent run"):
        asyncio.run(delete.invoke(tool_use, ToolContext(tool_use, agent=None)))


def test_context_parameter_with_a_custom_name():
    @tool(context="ctx")
    def who(ctx: ToolContext, greeting: str) -> str:
        return f"{greeting} {ctx.tool_use['toolUseId']}"

    assert who.tool_spec["inputSchema"]["json"]["properties"].keys() == {"greeting"}
    assert text(invoke(who, {"greeting": "hi"})) == "hi t1"


def test_context_without_the_expected_parameter_is_rejected():
    with pytest.raises(TypeError, match="expects a parameter named 'tool_context'"):

        @tool(context=True)
        def nope(ctx: ToolContext) -> None: ...


def test_tool_context_parameter_without_context_flag_is_rejected():
    with pytest.raises(TypeError, match=r"@tool\(context='ctx'\)"):

        @tool
        def nope(ctx: ToolContext) -> None: ...


@pytest.mark.parametrize("context", ["", "not a name", 1])
def test_context_must_be_a_flag_or_a_parameter_name(context: Any):
    with pytest.raises(TypeError, match="True, False or a parameter name"):
        tool(context=context)


def test_generators_positional_only_parameters_and_non_functions_are_rejected():
    def gen(x: int) -> Any:
        yield x

    def positional(x: int, /) -> int:
        return x

    with pytest.raises(TypeError, match="generator"):
        tool(gen)
    with pytest.raises(TypeError, match="'x' positional-only"):
        tool(positional)
    with pytest.raises(TypeError, match="decorates functions and methods"):
        tool(functools.partial(positional, 1))


def test_variadic_parameters_are_left_out_of_the_schema():
    @tool
    def total(first: int, *rest: int, **options: Any) -> str:
        return f"{first}|{rest}|{options}"

    assert total.tool_spec["inputSchema"]["json"]["properties"].keys() == {"first"}
    assert text(invoke(total, {"first": 1, "rest": [2]})) == "1|()|{}"


# --- invoke ---------------------------------------------------------------------------------------


def test_invalid_input_is_an_error_result_and_the_function_does_not_run():
    calls: list[int] = []

    @tool
    def count(n: int) -> int:
        calls.append(n)
        return n

    message = "Error: count - n: Input should be a valid integer, unable to parse string as an integer"
    assert invoke(count, {"n": "many"}) == {"toolUseId": "t1", "status": "error", "content": [{"text": message}]}
    assert text(invoke(count, {})) == "Error: count - n: Field required"
    assert text(invoke(count, ["n"])).startswith("Error: count - input: Input should be a valid dictionary")
    assert calls == []


def test_missing_input_means_no_arguments():
    @tool
    def ping() -> str:
        return "pong"

    assert text(invoke(ping, None)) == "pong"


def test_input_is_coerced_to_the_annotated_types():
    assert text(invoke(search, {"query": "q", "limit": "3", "tags": ["a"]})) == "q|3|['a']"


def test_exception_is_an_error_result():
    @tool
    def boom() -> None:
        raise RuntimeError("disk on fire")

    @tool
    def silent() -> None:
        raise KeyError

    assert invoke(boom, {}) == {"toolUseId": "t1", "status": "error", "content": [{"text": "Error: disk on fire"}]}
    assert text(invoke(silent, {}, inline=True)) == "Error: KeyError"


def test_cancellation_and_keyboard_interrupt_propagate():
    @tool
    async def cancelled() -> None:
        raise asyncio.CancelledError

    @tool
    def stopped() -> None:
        raise KeyboardInterrupt

    with pytest.raises(asyncio.CancelledError):
        invoke(cancelled, {})
    with pytest.raises(KeyboardInterrupt):
        invoke(stopped, {}, inline=True)


@pytest.mark.parametrize(("inline", "same_thread"), [(True, True), (False, False)])
def test_sync_tool_runs_inline_or_in_a_worker_thread(inline: bool, same_thread: bool):
    @tool
    def where() -> int:
        return threading.get_ident()

    async def main() -> tuple[int, ToolResult]:
        tool_use = use("where", {})
        return threading.get_ident(), await where.invoke(tool_use, context_for(tool_use), inline=inline)

    loop_thread, result = asyncio.run(main())
    assert (text(result) == str(loop_thread)) is same_thread


def test_worker_thread_sees_the_callers_context_variables():
    request: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")

    @tool
    def current() -> str:
        return request.get()

    async def main() -> ToolResult:
        request.set("r-42")
        tool_use = use("current", {})
        return await current.invoke(tool_use, context_for(tool_use))

    assert text(asyncio.run(main())) == "r-42"


def test_async_tool_is_awaited():
    @tool
    async def double(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    assert invoke(double, {"n": 21}) == {"toolUseId": "t1", "status": "success", "content": [{"text": "42"}]}


def test_tool_result_shaped_dict_is_passed_through():
    shared = {"status": "error", "content": [{"json": {"reason": "quota"}}]}

    @tool
    def shaped() -> dict[str, Any]:
        return shared

    @tool
    def plain() -> dict[str, Any]:
        return {"status": "ok"}

    assert invoke(shaped, {}) == {"toolUseId": "t1", "status": "error", "content": [{"json": {"reason": "quota"}}]}
    assert "toolUseId" not in shared
    assert text(invoke(plain, {})) == "{'status': 'ok'}"
