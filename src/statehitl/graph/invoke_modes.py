"""What LangGraph's ``invoke``/``stream`` keywords beyond the thread ask for: which chunks a call returns
(``invoke(..., stream_mode="updates")`` returns the list of them), which it prints as they come
(``print_mode=``, ``debug=True``), which keys of the values it returns (``output_keys=``), and the run's context
coerced into the graph's ``context_schema``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from statehitl.event_stream import Emit
from statehitl.stream_sink import STREAM_MODES


class CallModes:
    """A call's stream modes: ``streamed`` the chunks it yields (``invoke``: returns; empty for its values),
    ``shown`` those it prints, ``paired``/``subgraphs`` how its chunks are shaped."""

    __slots__ = ("paired", "shown", "streamed", "subgraphs")

    def __init__(self, streamed: tuple[str, ...], shown: tuple[str, ...], paired: bool, subgraphs: bool) -> None:
        self.streamed, self.shown, self.paired, self.subgraphs = streamed, shown, paired, subgraphs

    @property
    def every(self) -> tuple[str, ...]:
        """The modes the run has to send: streamed or printed."""
        return tuple(dict.fromkeys((*self.streamed, *self.shown)))


def call_modes(stream_mode: str | Sequence[str] | None, print_mode: str | Sequence[str], debug: bool, *,
               subgraphs: bool = False) -> CallModes:
    """The modes a call asks for; an unknown one is a ``ValueError`` naming it. ``debug``: print ``updates``
    and ``values`` (LangGraph's ``debug=True``)."""
    streamed = () if stream_mode is None else (stream_mode,) if isinstance(stream_mode, str) else tuple(stream_mode)
    shown = (print_mode,) if isinstance(print_mode, str) else tuple(print_mode)
    if debug:
        shown = ("updates", "values")
    for name, given, modes in (("stream_mode", stream_mode, streamed), ("print_mode", print_mode, shown)):
        if any(m not in STREAM_MODES for m in modes) or (name == "stream_mode" and given is not None and not modes):
            raise ValueError(f"{name} must be one of {list(STREAM_MODES)} or a list of them, got {given!r}")
    return CallModes(streamed, shown, stream_mode is not None and not isinstance(stream_mode, str), subgraphs)


def printed(modes: CallModes, emit: Emit) -> Emit:
    """The emitter of a run whose sink pairs each chunk with its mode (``(mode, chunk)``, or with
    ``subgraphs=True`` ``(namespace, mode, chunk)``): prints the chunks of the printed modes as LangGraph does
    (``[mode] chunk``, bold), hands the streamed ones to ``emit`` in the shape the call asked."""

    def deliver(item: Any) -> None:
        namespace, mode, chunk = item if modes.subgraphs else ((), *item)
        if mode in modes.shown:
            graph = f" \033[1;30;33m[graph={namespace}]\033[0m" if modes.subgraphs and namespace else ""
            print(f"\033[1m[{mode}]\033[0m{graph} {chunk!r}")
        if mode in modes.streamed:
            shaped = (mode, chunk) if modes.paired else chunk
            emit((namespace, *shaped) if modes.subgraphs and modes.paired
                 else (namespace, shaped) if modes.subgraphs else shaped)

    return deliver


def kept_keys(values: Any, output_keys: str | Sequence[str] | None) -> Any:
    """``invoke(..., output_keys=)``: one key's value, or only those keys of the values."""
    if output_keys is None or not isinstance(values, dict):
        return values
    if isinstance(output_keys, str):
        return values.get(output_keys)
    return {key: values[key] for key in output_keys if key in values}


def coerced_context(schema: Any, context: Any, graph: str) -> Any:
    """``context`` as the graph's ``context_schema``: a dict becomes the dataclass or pydantic model the schema
    names (a key it does not take, or a missing one, is a ``TypeError``; a pydantic model's own validation error
    as it is); anything else is handed over as given."""
    if context is None or schema is None or not isinstance(context, dict):
        return context
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema(**context)
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        build: Callable[..., Any] = schema
        try:
            return build(**context)
        except TypeError as error:
            raise TypeError(f"context={context!r} does not fit the context_schema {schema.__name__} of graph "
                            f"{graph!r}: {error}") from None
    return context
