"""A StateGraph's mistakes, found at ``compile()`` and reported in LangGraph's words (so code and tests that
match LangGraph's messages keep matching), each with what to do about it: an edge from or to a node that
does not exist, no way in from START, a breakpoint on an unknown node, a sync node with a timeout."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from statehitl.errors import GraphValidationError
from statehitl.machine import END, START, Edge, Join
from statehitl.routers import Router


def check_edges(name: str, nodes: Iterable[str], edges: Sequence[Edge], joins: Sequence[Join],
                routers: Sequence[Router], *, destinations: Mapping[str, Sequence[str]]) -> None:
    """Every edge starts at a node (or START) and ends at one (or END), and something leaves START."""
    known = set(nodes)
    if not known:
        return  # the machine says it has no nodes
    sources = [e.source for e in edges] + [s for j in joins for s in j.sources] + [r.source for r in routers]
    for source in sources:
        if source not in known and source != START:
            raise GraphValidationError(f"Found edge starting at unknown node '{source}' "
                                       f"(known nodes: {sorted(known)}); add_node() it first")
    if START not in sources:
        raise GraphValidationError(f"Graph must have an entrypoint: {name!r} has no entry; add at least one edge "
                                   "from START to another node")
    for router in routers:
        for key, target in (router.path_map or {}).items():
            if target not in known and target != END:
                raise GraphValidationError(f"At '{router.source}' node, '{key}' branch found unknown target "
                                           f"'{target}' (known nodes: {sorted(known)})")
    targets = [e.target for e in edges] + [j.target for j in joins]
    targets += [t for goto in destinations.values() for t in goto]
    for target in targets:
        if target not in known and target != END:
            raise GraphValidationError(f"Found edge ending at unknown node `{target}` (known nodes: {sorted(known)}); "
                                       "add_node() it first")


def check_breakpoints(names: Sequence[str], nodes: Iterable[str], handlers: Iterable[str]) -> None:
    """``interrupt_before``/``interrupt_after`` name nodes of the graph (an error handler runs in its node's
    step, where no breakpoint can stop it)."""
    known = set(nodes)
    for name in names:
        if name in set(handlers):
            raise GraphValidationError(f"Interrupt node `{name}` is an error handler, which runs in its node's step "
                                       "as soon as the node failed; statehitl cannot stop before it")
        if name not in known:
            raise GraphValidationError(f"Interrupt node `{name}` not found (known nodes: {sorted(known)})")


def check_timeouts(timed: Mapping[str, Any], is_async: Mapping[str, bool]) -> None:
    """A timeout cancels the node's attempt, which only an async function can be: a sync one is refused."""
    for name in timed:
        if not is_async.get(name, True):
            raise GraphValidationError(
                f"Node `{name}` has a timeout, but timeouts are only supported for async nodes: a sync function "
                "cannot be cancelled in-process; make it `async def` or drop the timeout"
            )
