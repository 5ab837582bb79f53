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
from types import CodeType, FunctionType
from typing import Any, TypeVar

__all__ = ["graphs_reached", "reached_values"]

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
    names = {name: func.__globals__[name] for name in _all_names(func.__code__) if name in func.__globals__}
    values = [*cells.values(), *names.values()]
    if all(isinstance(v, _LEAVES) for v in values):
        return values
    return values + _attribute_paths(func.__code__, cells, names)


def graphs_reached(fn: Callable[..., Any], kind: type[G]) -> list[G]:
    """The instances of ``kind`` (a compiled graph's class) ``fn`` reaches, each once, in the order found."""
    found: dict[int, G] = {}
    for value in reached_values(fn):
        if isinstance(value, kind) and id(value) not in found:
            found[id(value)] = value
    return list(found.values())


def _cells(func: FunctionType) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=False):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # an empty cell: a recursive function not bound yet
            continue
    return cells


def _codes(code: CodeType) -> list[CodeType]:
    """``code`` and the code of every function, lambda and comprehension defined in it."""
    codes = [code]
    for known in codes:
        codes.extend(c for c in known.co_consts if isinstance(c, CodeType))
    return codes


def _all_names(code: CodeType) -> set[str]:
    return {name for c in _codes(code) for name in c.co_names}


def _attribute_paths(code: CodeType, cells: dict[str, Any], names: dict[str, Any]) -> list[Any]:
    """Each value an attribute path of the code reaches (``self.graph``: ``self`` is a cell or a global),
    read from the bytecode: a load of a global or a captured name, then attribute loads."""
    found: list[Any] = []
    for c in _codes(code):
        value: Any = None
        for instruction in dis.get_instructions(c):
            if instruction.opname == "LOAD_GLOBAL":
                value = names.get(instruction.argval)
            elif instruction.opname == "LOAD_DEREF":
                value = cells.get(instruction.argval)
            elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and value is not None:
                value = getattr(value, instruction.argval, None)
            else:
                value = None  # any other instruction ends the path
                continue
            if value is not None:
                found.append(value)
    return found
