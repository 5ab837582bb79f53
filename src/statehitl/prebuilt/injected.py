"""The arguments ``ToolNode`` fills in for a tool, which the model never sees: LangGraph's ``InjectedState`` and
``InjectedStore``, langchain-core's ``InjectedToolCallId``, and statehitl's ``InjectedIdempotencyKey``.

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

    def values(self, state: Any, store: Any, key: str) -> dict[str, Any]:
        """The arguments to add to the model's, for a call whose idempotency key is ``key``."""
        given: dict[str, Any] = {}
        for param, field in self.state.items():
            given[param] = state if field is None else _field(state, field)
        given.update(dict.fromkeys(self.store, store))
        given.update(dict.fromkeys(self.idempotency_key, key))
        return given


def _field(state: Any, field: str) -> Any:
    return state[field] if isinstance(state, dict) else getattr(state, field)


def _marker(hint: Any) -> Any:
    """The injection marker among ``Annotated`` metadata (an instance or the class itself), or None."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    for meta in hint.__metadata__:
        for kind in (InjectedState, InjectedStore, InjectedIdempotencyKey):
            if meta is kind or isinstance(meta, kind):
                return meta
    return None


def injections_of(tool: BaseTool) -> Injections:
    """What ``ToolNode`` gives ``tool``, read from the annotations of the function it wraps (a tool without
    one, a ``BaseTool`` subclass, is read through its ``_run``)."""
    fn: Callable[..., Any] | None = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if fn is None:
        fn = type(tool)._run
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        return Injections({})
    state: dict[str, str | None] = {}
    store: list[str] = []
    keys: list[str] = []
    for param, hint in hints.items():
        marker = _marker(hint)
        if marker is InjectedState or isinstance(marker, InjectedState):
            state[param] = marker.field if isinstance(marker, InjectedState) else None
        elif marker is InjectedStore or isinstance(marker, InjectedStore):
            store.append(param)
        elif marker is InjectedIdempotencyKey or isinstance(marker, InjectedIdempotencyKey):
            keys.append(param)
    return Injections(state, tuple(store), tuple(keys))
