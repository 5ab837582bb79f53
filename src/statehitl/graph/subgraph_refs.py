"""Which compiled graph a node's function reaches: LangGraph's ``graph.nodes[name].subgraphs``.

A node that calls ``sub.invoke(...)`` in its code runs ``sub`` as its subgraph; what reads the compiled graph
(``nodes``, drawing) finds ``sub`` from the function's code, without running it: the values its closure
captures, the globals its code names, and each value along an attribute path its code (or a function nested
in it) loads from one of those (``holder.payload.graph``). A subscript, ``self.attr``, or a global named only in
a nested function are out of reach, as in LangGraph; code the compiler dropped loads nothing.
"""

from __future__ import annotations

import dis
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType
from typing import Any

__all__ = ["reached_values", "subgraph_of"]

_CHAIN_LINKS = ("LOAD_ATTR", "LOAD_METHOD")


def reached_values(fn: Callable[..., Any]) -> list[Any]:
    """The values ``fn`` reaches from outside its own scope (an over-approximation: a value may come back
    that no run would reach). A callable without code of its own (a builtin, a ``functools.partial``)
    reaches nothing."""
    fn = getattr(fn, "__func__", fn)  # a bound method: its function
    wrapped = getattr(fn, "__wrapped__", None)
    if callable(wrapped):
        fn = getattr(wrapped, "__func__", wrapped)
    if not isinstance(fn, FunctionType):
        return []
    code = fn.__code__
    cells = dict(_readable_cells(code, fn.__closure__ or ()))
    names = {name: fn.__globals__[name] for name in code.co_names if name in fn.__globals__}
    values = list(cells.values())
    for nested in _codes(code):
        values.extend(_chains(nested, names, cells))
    return values


def subgraph_of(action: Any, is_graph: Callable[[Any], bool]) -> Any:
    """The first graph (``is_graph``) ``action`` is, or its function reaches (a bound method reached counts as
    the object it is bound to: ``graph.invoke``); None if none."""
    if is_graph(action):
        return action
    for value in reached_values(action):
        candidate = getattr(value, "__self__", value)
        if is_graph(candidate):
            return candidate
    return None


def _readable_cells(code: CodeType, closure: tuple[Any, ...]) -> Iterator[tuple[str, Any]]:
    for name, cell in zip(code.co_freevars, closure, strict=False):
        try:
            yield name, cell.cell_contents
        except ValueError:  # a cell never filled (a name assigned after the function was made)
            continue


def _codes(code: CodeType) -> Iterator[CodeType]:
    """``code`` and the code of every function, lambda and comprehension nested in it."""
    pending = [code]
    while pending:
        current = pending.pop(0)
        yield current
        pending.extend(c for c in current.co_consts if isinstance(c, CodeType))


def _chains(code: CodeType, names: dict[str, Any], cells: dict[str, Any]) -> Iterator[Any]:
    """Each value an attribute path in ``code`` loads, from a global or captured name to its last attribute."""
    value: Any = None
    for instruction in dis.get_instructions(code):
        op = instruction.opname
        if op == "LOAD_GLOBAL":
            value = names.get(instruction.argval)
        elif op == "LOAD_DEREF":
            value = cells.get(instruction.argval)
        elif op in _CHAIN_LINKS and value is not None:
            value = getattr(value, instruction.argval, None)
        else:
            value = None  # anything else ends the path: `a, b.c` is not `a.c`
            continue
        if value is not None:
            yield value
