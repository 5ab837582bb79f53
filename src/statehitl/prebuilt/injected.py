"""The arguments ``ToolNode`` fills in for a tool, which the model never sees: LangGraph's ``InjectedState`` and
``InjectedStore``, ``ToolRuntime`` (by its type alone), langchain-core's ``InjectedToolCallId``, and statehitl's
``InjectedIdempotencyKey``.

A tool marks such a parameter with ``Annotated[T, InjectedState]`` (or ``InjectedState("field")``, one key of the
state). Each marker subclasses langchain-core's ``InjectedToolArg``, so the tool's schema, which the model is
shown, leaves the parameter out, and the arguments the model proposed never carry it.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool, InjectedToolArg

from statehitl.prebuilt.tool_calls import ToolRuntime


class InjectedState(InjectedToolArg):
    """The graph's state, or one of its keys (``InjectedState("field")``), given to the tool by ``ToolNode``."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """The graph's store (``compile(store=)``), given to the tool by ``ToolNode``."""


class InjectedIdempotencyKey(InjectedToolArg):
    """statehitl's key naming this one tool call of this step of this thread (``interrupt_ids.action_key``):
    the same in every process and every re-run of the call, so a service the tool acts on (a payment API's
    ``Idempotency-Key``) recognises a repeat as the same action."""


@dataclass(frozen=True)
class Injections:
    """Which parameters of one tool ``ToolNode`` fills in, by what."""

    state: dict[str, str | None]
    """Parameter name to the state key it takes (None: the whole state)."""
    store: tuple[str, ...] = ()
    idempotency_key: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    """Parameters typed ``ToolRuntime`` (or named ``runtime``)."""
    hidden: frozenset[str] = frozenset()
    """Every parameter the model may not set (any ``InjectedToolArg``): a value the model gave is dropped."""
    optional: frozenset[str] = frozenset()
    """State-key parameters with a default: a key the state lacks leaves them to it."""

    def values(self, state: Any, runtime: Any, messages_key: str) -> dict[str, Any]:
        """The arguments to add to the model's (``runtime``: the call's ``ToolRuntime``, holding its store and
        idempotency key)."""
        given: dict[str, Any] = {}
        if self.state:
            given.update(self._state_values(state, messages_key))
        if self.store and runtime.store is None:
            raise ValueError("Cannot inject store into tools with InjectedStore annotations - please compile your "
                             "graph with a store.")
        given.update(dict.fromkeys(self.store, runtime.store))
        given.update(dict.fromkeys(self.idempotency_key, runtime.idempotency_key))
        given.update(dict.fromkeys(self.runtime, runtime))
        return given

    def _state_values(self, state: Any, messages_key: str) -> dict[str, Any]:
        if isinstance(state, list):  # messages as the state: a tool may ask for them, or the whole state
            fields = list(self.state.values())
            if fields[0] is not None and fields != [messages_key]:
                raise ValueError(f"Invalid input to ToolNode. Tool requires graph state dict as input. State should "
                                 f"contain fields {', '.join(f for f in fields if f)}.")
            state = {messages_key: state}
        given: dict[str, Any] = {}
        for param, field in self.state.items():
            if field is None:
                given[param] = state
            elif isinstance(state, dict) and field in state:
                given[param] = state[field]
            elif not isinstance(state, dict) and hasattr(state, field):
                given[param] = getattr(state, field)
            elif param not in self.optional:
                raise KeyError(field) if isinstance(state, dict) else AttributeError(field)
        return given


def _marker(hint: Any) -> Any:
    """The injection marker among ``Annotated`` metadata (an instance or the class itself), or None."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    for meta in hint.__metadata__:
        for kind in (InjectedState, InjectedStore, InjectedIdempotencyKey):
            if meta is kind or isinstance(meta, kind):
                return meta
    return None


def _hidden(hint: Any) -> bool:
    """Whether the model may not set this parameter: any langchain-core injected argument marks it."""
    if typing.get_origin(hint) is typing.Annotated:
        return any(m is InjectedToolArg or isinstance(m, InjectedToolArg)
                   or (isinstance(m, type) and issubclass(m, InjectedToolArg)) for m in hint.__metadata__)
    return _is_runtime(hint)


def _is_runtime(hint: Any) -> bool:
    kind = typing.get_origin(hint) or hint
    return isinstance(kind, type) and issubclass(kind, ToolRuntime)


def _hints(tool: BaseTool) -> dict[str, Any]:
    fn: Callable[..., Any] | None = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if fn is None:
        fn = type(tool)._run
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        return {}


def _optional(tool: BaseTool, params: list[str]) -> frozenset[str]:
    schema = tool.get_input_schema()
    fields = getattr(schema, "model_fields", {})
    return frozenset(p for p in params if p in fields and not fields[p].is_required())


def injections_of(tool: BaseTool) -> Injections:
    """What ``ToolNode`` gives ``tool``, read from the annotations of the function it wraps (a tool without
    one, a ``BaseTool`` subclass, is read through its ``_run``)."""
    state: dict[str, str | None] = {}
    found: dict[str, list[str]] = {"store": [], "key": [], "runtime": []}
    hidden: set[str] = set()
    for param, hint in _hints(tool).items():
        marker = _marker(hint)
        if _hidden(hint):
            hidden.add(param)
        if marker is InjectedState or isinstance(marker, InjectedState):
            state[param] = marker.field if isinstance(marker, InjectedState) else None
        elif marker is InjectedStore or isinstance(marker, InjectedStore):
            found["store"].append(param)
        elif marker is InjectedIdempotencyKey or isinstance(marker, InjectedIdempotencyKey):
            found["key"].append(param)
        elif param == "runtime" or _is_runtime(hint):
            found["runtime"].append(param)
            hidden.add(param)
    optional = _optional(tool, [p for p, f in state.items() if f]) if state else frozenset()
    return Injections(state, tuple(found["store"]), tuple(found["key"]), tuple(found["runtime"]),
                      frozenset(hidden), optional)
