"""``ValidationNode``: LangGraph's node that checks the tool calls of the last AI message against schemas without
running anything, answering each call with a ``ToolMessage``: the validated arguments as JSON, or the validation
error (``additional_kwargs={"is_error": True}``) for the model to fix.

It serves extraction: the model "calls" a schema, and the graph loops back to the model until the call validates,
keeping the call ids and the conversation intact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, create_schema_from_function
from pydantic import BaseModel, ValidationError
from pydantic.v1 import BaseModel as BaseModelV1
from pydantic.v1 import ValidationError as ValidationErrorV1

__all__ = ["ValidationNode"]

FormatError = Callable[[BaseException, ToolCall, Any], str]


def _default_format_error(error: BaseException, call: ToolCall, schema: Any) -> str:
    return f"{error!r}\n\nRespond after fixing all validation errors."


def _schema_of(given: Any) -> tuple[str, Any]:
    """A schema given to the node, by the name the model calls it: a tool (its pydantic ``args_schema``), a pydantic
    class (v2 or v1), or a function (a schema made from its signature)."""
    if isinstance(given, BaseTool):
        schema = given.args_schema
        if schema is None:
            raise ValueError(f"Tool {given.name} does not have an args_schema defined.")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel | BaseModelV1)):
            raise ValueError("Validation node only works with tools that have a pydantic BaseModel args_schema. "
                             f"Got {given.name} with args_schema: {schema}.")
        return given.name, schema
    if isinstance(given, type) and issubclass(given, BaseModel | BaseModelV1):
        return given.__name__, given
    if callable(given):
        return given.__name__, create_schema_from_function("Validation", given)
    raise ValueError(f"Unsupported input to ValidationNode. Expected BaseModel, tool or function. Got: {type(given)}.")


class ValidationNode:
    """A node validating every tool call of the last AI message (LangGraph's ``ValidationNode``). Its input is the
    state (with ``messages``) or the message list; its output the same shape with one tool message per call."""

    def __init__(self, schemas: Sequence[BaseTool | type[BaseModel] | Callable[..., Any]], *,
                 format_error: FormatError | None = None, name: str = "validation",
                 tags: list[str] | None = None) -> None:
        self.name = name
        self.tags = tags
        self.format_error = format_error or _default_format_error
        self.schemas_by_name: dict[str, Any] = dict(_schema_of(s) for s in schemas)

    def __call__(self, input: Any) -> Any:
        return self.invoke(input)

    def invoke(self, input: Any, config: dict[str, Any] | None = None) -> Any:
        """The tool messages answering the last AI message's calls, as a list or under ``messages``."""
        if isinstance(input, list):
            messages, shape = input, "list"
        elif messages := input.get("messages", []):
            shape = "dict"
        else:
            raise ValueError("No message found in input")
        last = messages[-1]
        if not isinstance(last, AIMessage):
            raise ValueError("Last message is not an AIMessage")
        answers = [self._checked(call) for call in last.tool_calls]
        return answers if shape == "list" else {"messages": answers}

    async def ainvoke(self, input: Any, config: dict[str, Any] | None = None) -> Any:
        """``invoke`` (validation does no I/O)."""
        return self.invoke(input, config)

    def _checked(self, call: ToolCall) -> ToolMessage:
        schema = self.schemas_by_name[call["name"]]
        try:
            if issubclass(schema, BaseModel):
                content = schema.model_validate(call["args"]).model_dump_json()
            else:
                content = schema.validate(call["args"]).json()
        except (ValidationError, ValidationErrorV1) as error:
            return ToolMessage(content=self.format_error(error, call, schema), name=call["name"],
                               tool_call_id=call["id"] or "", additional_kwargs={"is_error": True})
        return ToolMessage(content=content, name=call["name"], tool_call_id=call["id"] or "")
