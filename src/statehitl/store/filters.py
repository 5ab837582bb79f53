"""``search(filter=...)``: which stored values a filter keeps, as LangGraph's stores read a filter.

A filter maps value keys to what they must hold: a plain value (equal), a dict without operators (a
nested value that matches it key by key), a list (equal length, each element matching), or a dict of
operators: ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``. Ordering operators compare numbers
with numbers and text with text; a missing value or one of another kind matches none of them (as a JSON
``null`` compares in PostgreSQL), where LangGraph's in-memory store raises. An unknown operator is refused
before anything is read.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}
_OPERATORS = frozenset({"$eq", "$ne", *_ORDER})


def _is_operators(wanted: Mapping[str, Any]) -> bool:
    return any(isinstance(k, str) and k.startswith("$") for k in wanted)


def check_filter(filter: Mapping[str, Any] | None, path: str = "filter") -> None:
    """Refuse a filter with an operator no store knows, naming where it is (nothing is read first)."""
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise ValueError(f"{path} must be a dict of value keys to what they hold, got {filter!r}")
    for key, wanted in filter.items():
        where = f"{path}[{key!r}]"
        if isinstance(wanted, Mapping):
            if _is_operators(wanted):
                unknown = sorted(str(op) for op in wanted if op not in _OPERATORS)
                if unknown:
                    raise ValueError(f"{where} uses operator(s) {unknown}; the operators are "
                                     f"{sorted(_OPERATORS)}")
            else:
                check_filter(wanted, where)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ordered(op: str, value: Any, bound: Any) -> bool:
    if _number(value) and _number(bound):
        return _ORDER[op](float(value), float(bound))
    if isinstance(value, str) and isinstance(bound, str):
        return _ORDER[op](value, bound)
    return False


def _holds(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if _is_operators(wanted):
            return all(value == bound if op == "$eq" else value != bound if op == "$ne"
                       else _ordered(op, value, bound) for op, bound in wanted.items())
        return isinstance(value, Mapping) and all(_holds(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return isinstance(value, list | tuple) and len(value) == len(wanted) and all(
            _holds(have, want) for have, want in zip(value, wanted, strict=True))
    return bool(value == wanted)


def matches_filter(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether a stored value meets every condition of ``filter`` (None or ``{}`` keeps everything)."""
    return not filter or all(_holds(value.get(key), wanted) for key, wanted in filter.items())
