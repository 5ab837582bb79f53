"""``BinaryOperatorAggregate``: a running total (or any fold) of every value written, e.g. ``operator.add``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from statehitl.channels.base import BaseChannel, Reducer

__all__ = ["BinaryOperatorAggregate"]


class BinaryOperatorAggregate(BaseChannel):
    """Folds each write into its value with ``operator(current, write)``, starting from ``typ()`` when the type
    can build one (``int`` -> 0, ``list`` -> []), as LangGraph does."""

    def __init__(self, typ: Any, operator: Callable[[Any, Any], Any]) -> None:
        super().__init__(typ)
        self.operator = operator

    def reducer(self) -> Reducer:
        return self.operator

    def annotation(self) -> Any:
        return Annotated[self.typ, self.operator]
