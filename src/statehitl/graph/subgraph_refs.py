"""The graphs a node's function can reach: LangGraph's way of finding the subgraphs a node invokes in its
own code, read once at ``compile()``.

A graph ``.invoke()``d inside a node runs as that node's subgraph whatever the function looks like; what
``compile()`` needs to know beforehand is where such a graph keeps its state when it was compiled with
``checkpointer=True`` (a private channel of the parent, one per node), and which graphs to read a stopped
call's snapshot with (``get_state(config, subgraphs=True)``). As in LangGraph, a function's reach is what
it captures in its closure, the module globals it names, and the attributes it loads from those (``self.
graph``, ``agents.writer``): an over-approximation, which only costs a channel that is never written.
"""

from __future__ import annotations

import dis
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, FunctionType
from typing import Any, TypeVar

G = TypeVar("G")

_LEAVES = (int, float, str, bytes, bool, type(None), complex)
"""Values that hold nothing else: a function that captures only these reaches no graph."""


def reached_values(fn: Callable[..., Any]) -> list[Any]:
    """The values ``fn`` reaches from outside its own scope: its closure's cells, the globals its code (and
    the code of the functions defined in it) names, and each value along an attribute path it loads."""
    func: Any = getattr(fn, "__func__", fn)  # a bound method: its function
    wrapped = getattr(func, "__wrapped__", None)
    if callable(wrapped):
        func = getattr(wrapped, "__func__", wrapped)
    if not isinstance(func, FunctionType):
        call = getattr(type(fn), "__call__", None)  # noqa: B004 - a callable object: its method, bound to it
        return [] if not isinstance(call, FunctionType) else [fn, *reached_values(call)]
    cells = _cells(func)
    read = _read(func.__code__)
    names = {name: func.__globals__[name] for name in read.names if name in func.__globals__}
    values = [*cells.values(), *names.values()]
    if all(isinstance(v, _LEAVES) for v in values):
        return values
    for scope, name, attributes in read.paths:
        value = (names if scope == "global" else cells).get(name)
        for attribute in attributes:
            if value is None:
                break
            value = getattr(value, attribute, None)
            if value is not None:
                values.append(value)
    return values


def graphs_reached(fn: Callable[..., Any], kind: type[G]) -> list[G]:
    """The instances of ``kind`` (a compiled graph's class) ``fn`` reaches, each once, in the order found."""
    found: dict[int, G] = {}
    for value in reached_values(fn):
        if isinstance(value, kind) and id(value) not in found:
            found[id(value)] = value
    return list(found.values())


def subgraph_of(action: Any, is_graph: Callable[[Any], bool]) -> Any:
    """The first graph (``is_graph``) ``action`` is, or its function reaches (a bound method reached counts as
    the object it is bound to: ``graph.invoke``), for ``graph.nodes[name].subgraphs``; None if none."""
    if is_graph(action):
        return action
    for value in reached_values(action):
        candidate = getattr(value, "__self__", value)
        if is_graph(candidate):
            return candidate
    return None


def _cells(func: FunctionType) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=False):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # an empty cell: a recursive function not bound yet
            continue
    return cells


@dataclass(frozen=True)
class _Read:
    """What a code object (with the code defined in it) names: globals, and attribute paths from a global
    or a captured name (``("global", "self", ("graph",))``); read once per code object."""

    names: frozenset[str]
    paths: tuple[tuple[str, str, tuple[str, ...]], ...]


_READS: dict[CodeType, _Read] = {}
_READS_MAX = 1024


def _read(code: CodeType) -> _Read:
    """The names and attribute paths of ``code``: from its bytecode, each path a load of a global or a
    captured name then the attribute loads that follow it (a graph built per request reads its functions'
    code once)."""
    known = _READS.get(code)
    if known is not None:
        return known
    codes = [code]
    for c in codes:
        codes.extend(k for k in c.co_consts if isinstance(k, CodeType))
    paths: list[tuple[str, str, tuple[str, ...]]] = []
    for c in codes:
        start: tuple[str, str] | None = None
        attributes: list[str] = []
        for instruction in dis.get_instructions(c):
            opname = instruction.opname
            if opname in ("LOAD_ATTR", "LOAD_METHOD") and start is not None:
                attributes.append(str(instruction.argval))
                continue
            if start is not None and attributes:  # any other instruction ends the path
                paths.append((*start, tuple(attributes)))
            start, attributes = None, []
            if opname in ("LOAD_GLOBAL", "LOAD_DEREF"):
                start = ("global" if opname == "LOAD_GLOBAL" else "cell", str(instruction.argval))
        if start is not None and attributes:
            paths.append((*start, tuple(attributes)))
    read = _Read(frozenset(name for c in codes for name in c.co_names), tuple(dict.fromkeys(paths)))
    if len(_READS) >= _READS_MAX:
        _READS.pop(next(iter(_READS)))
    _READS[code] = read
    return read
