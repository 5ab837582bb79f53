"""``@tool``: turn a typed, documented function into an ``AgentTool`` the model can call.

Everything a call needs (the pydantic input model, which parameter takes the ``ToolContext``, whether
the function is async) is worked out once, when the function is decorated, so ``invoke`` costs one
validation and one call. The schema comes from the type hints and the Google-style ``Args:`` section
of the docstring, which is how Strands users already write their tools.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import MethodType
from typing import Any, Generic, ParamSpec, Self, TypeVar, cast, get_type_hints, overload

from pydantic import BaseModel, Field, ValidationError, create_model

from statehitl.errors import InterruptError
from statehitl.interrupt import InterruptRaised
from statehitl.offload import call_sync, may_run_inline
from statehitl.types.tools import AgentTool, ToolContext, ToolResult, ToolSpec, ToolUse, error_result

__all__ = ["DecoratedFunctionTool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_ARGS_SECTIONS = frozenset({"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"})
_SECTIONS = _ARGS_SECTIONS | {
    "attributes",
    "example",
    "examples",
    "note",
    "notes",
    "raises",
    "references",
    "return",
    "returns",
    "see also",
    "todo",
    "warning",
    "warnings",
    "yield",
    "yields",
}
# ``name: text`` or ``name (type): text``; stars allow documenting ``*args`` the Google way.
_ARG_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the tool's description and its parameters' descriptions.

    The description stops at the first section header: ``Returns:`` and ``Raises:`` are written for
    readers of the code, the model only needs to know when to pick the tool.
    """
    description: list[str] = []
    params: dict[str, list[str]] = {}
    section: str | None = None
    entry_indent: int | None = None
    current: list[str] | None = None
    for line in doc.splitlines():
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 0 and text.endswith(":") and text[:-1].lower() in _SECTIONS:
            section, entry_indent, current = text[:-1].lower(), None, None
        elif section is None:
            description.append(line)
        elif section in _ARGS_SECTIONS and text:
            if entry_indent is None:
                entry_indent = indent
            entry = _ARG_ENTRY.match(text) if indent <= entry_indent else None
            if entry is not None:
                current = params[entry[1]] = [entry[2]]
            elif current is not None:
                current.append(text)
    described = {name: " ".join(words).strip() for name, words in params.items()}
    return "\n".join(description).strip(), {name: text for name, text in described.items() if text}


@dataclass(frozen=True, slots=True)
class _CallPlan:
    """What ``invoke`` needs to turn model input into a call, shared by every binding of one tool.

    Model fields are named ``f0``, ``f1``... with the parameter names as aliases, so parameters named
    like ``BaseModel`` attributes (``json``, ``schema``) or starting with ``_`` work unchanged.
    """

    model: type[BaseModel]
    fields: tuple[tuple[str, str], ...]  # (model field, function parameter)
    context_param: str | None
    is_async: bool
    binds_self: bool

    def arguments(self, raw_input: Any) -> dict[str, Any]:
        """Validated keyword arguments for the function; raises ``ValidationError``."""
        values = self.model.model_validate({} if raw_input is None else raw_input).__dict__
        return {param: values[field] for field, param in self.fields}


def _plan(func: Callable[..., Any], context_param: str | None) -> tuple[_CallPlan, str, dict[str, Any]]:
    """Inspect ``func`` once: its call plan, its description, and the JSON schema of its input."""
    where = func.__qualname__
    if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
        raise TypeError(f"@tool cannot wrap the generator {where}: a tool call has one result, so return it")
    try:
        hints = get_type_hints(func, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"@tool could not resolve the type hints of {where} ({exc}); the types a tool's parameters name "
            "must be importable from its module"
        ) from exc
    description, documented = _parse_docstring(inspect.getdoc(func) or "")

    params = list(inspect.signature(func).parameters.values())
    binds_self = bool(params) and params[0].name in ("self", "cls")
    if binds_self:
        params = params[1:]
    if context_param is not None and context_param not in {p.name for p in params}:
        raise TypeError(
            f"@tool(context=...) on {where} expects a parameter named {context_param!r} to receive the "
            f"ToolContext, but its parameters are {[p.name for p in params]}; add `{context_param}: ToolContext` "
            "or pass context='<parameter name>'"
        )

    definitions: dict[str, Any] = {}
    fields: list[tuple[str, str]] = []
    for param in params:
        if param.name == context_param or param.kind in _SKIPPED_KINDS:
            continue  # the model only sends named fields, so *args and **kwargs stay empty
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"@tool passes arguments by name, so {where} cannot take {param.name!r} positional-only")
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            raise TypeError(
                f"parameter {param.name!r} of {where} is a ToolContext, which the model cannot supply; "
                f"decorate with @tool(context={param.name!r}) so the agent passes it"
            )
        field = f"f{len(fields)}"
        info: dict[str, Any] = {"alias": param.name}
        if param.name in documented:
            info["description"] = documented[param.name]
        default = ... if param.default is inspect.Parameter.empty else param.default
        definitions[field] = (annotation, Field(default, **info))
        fields.append((field, param.name))
    model = create_model(f"{func.__name__}_input", **definitions)

    schema = model.model_json_schema()
    schema.pop("title", None)
    for name, prop in schema.get("properties", {}).items():
        prop.pop("title", None)
        prop.setdefault("description", f"Parameter {name}")
    plan = _CallPlan(model, tuple(fields), context_param, inspect.iscoroutinefunction(func), binds_self)
    return plan, description, schema


def _validation_message(exc: ValidationError) -> str:
    """One line per bad field, e.g. ``paths: Field required``: what the model needs to fix its call."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'input'}: {error['msg']}"
        for error in exc.errors(include_url=False)
    )


class DecoratedFunctionTool(AgentTool, Generic[P, R]):
    """A function made into a tool by ``@tool``; calling it still calls the function.

    Accessed through an instance, a tool defined on a class is bound to that instance (a new tool
    object per access, sharing the schema), so ``Tools(...).delete_files`` can be given to an agent.
    """

    def __init__(self, func: Callable[P, R], spec: ToolSpec, plan: _CallPlan) -> None:
        self._func = func
        self._spec = spec
        self._plan = plan
        functools.update_wrapper(self, func)

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> DecoratedFunctionTool[..., R]: ...
    def __get__(self, instance: object | None, owner: type[Any] | None = None) -> DecoratedFunctionTool[..., R]:
        if instance is None or not self._plan.binds_self or inspect.ismethod(self._func):
            return self
        bound = cast("Callable[..., R]", MethodType(self._func, instance))
        return DecoratedFunctionTool(bound, self._spec, self._plan)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._func(*args, **kwargs)

    @property
    def tool_name(self) -> str:
        return self._spec["name"]

    @property
    def tool_spec(self) -> ToolSpec:
        return self._spec

    @property
    def tool_type(self) -> str:
        return "function"

    @property
    def original_function(self) -> Callable[P, R]:
        """The decorated function (a bound method when this tool was accessed through an instance)."""
        return self._func

    async def invoke(self, tool_use: ToolUse, context: ToolContext, *, inline: bool = False) -> ToolResult:
        """Validate the model's input, call the function, and report the outcome as a ``ToolResult``.

        Bad input and exceptions become error results the model can read and correct; only
        ``InterruptRaised`` (and cancellation) escape, because they mean the run must stop here, and
        ``InterruptError`` (a misused ``interrupt()``: a non-JSON reason, a direct call), which is the
        developer's to fix, not the model's.
        """
        plan = self._plan
        tool_use_id = tool_use["toolUseId"]
        try:
            kwargs = plan.arguments(tool_use.get("input"))
        except ValidationError as exc:
            return error_result(tool_use, f"Error: {self._spec['name']} - {_validation_message(exc)}")
        if plan.context_param is not None:
            kwargs[plan.context_param] = context
        func: Callable[..., Any] = self._func  # called by keyword, which ``P`` cannot describe
        try:
            if plan.is_async:
                value = await func(**kwargs)
            elif may_run_inline(inline):
                value = func(**kwargs)
            else:
                value = await call_sync(func, **kwargs)
        except (InterruptRaised, InterruptError):
            raise
        except Exception as exc:
            return error_result(tool_use, f"Error: {str(exc) or type(exc).__name__}")
        if isinstance(value, dict) and "status" in value and "content" in value:
            return cast(ToolResult, {**value, "toolUseId": tool_use_id})
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": str(value)}]}


def _context_param(context: bool | str) -> str | None:
    if isinstance(context, bool):
        return "tool_context" if context else None
    if isinstance(context, str) and context.isidentifier():
        return context
    raise TypeError(f"@tool(context=...) takes True, False or a parameter name, got {context!r}")


@overload
def tool(func: Callable[P, R], /) -> DecoratedFunctionTool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,
    context: bool | str = False,
) -> Callable[[Callable[P, R]], DecoratedFunctionTool[P, R]]: ...
def tool(
    func: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,
    context: bool | str = False,
) -> DecoratedFunctionTool[P, R] | Callable[[Callable[P, R]], DecoratedFunctionTool[P, R]]:
    """Make ``func`` a tool: ``@tool``, ``@tool()`` or ``@tool(name=..., description=..., context=True)``.

    ``name`` and ``description`` default to the function's name and docstring; ``inputSchema``
    replaces the generated schema in the spec (as ``{"json": schema}`` or the bare schema) while input
    is still validated against the signature. ``context=True`` passes the ``ToolContext`` to the
    parameter ``tool_context``; a string names a different parameter.
    """
    context_param = _context_param(context)

    def decorate(f: Callable[P, R]) -> DecoratedFunctionTool[P, R]:
        if not (inspect.isfunction(f) or inspect.ismethod(f)):
            raise TypeError(f"@tool decorates functions and methods, got {f!r}")
        plan, doc_description, schema = _plan(f, context_param)
        if inputSchema is not None:
            schema = inputSchema["json"] if inputSchema.keys() == {"json"} else inputSchema
        spec: ToolSpec = {
            "name": name or f.__name__,
            "description": description or doc_description or f.__name__,
            "inputSchema": {"json": schema},
        }
        return DecoratedFunctionTool(f, spec, plan)

    return decorate if func is None else decorate(func)
