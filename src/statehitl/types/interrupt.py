"""``statehitl.types.interrupt``: Strands' path to the shapes of interrupts and their answers.

``Interrupt`` is what ``result.interrupts`` holds (defined in ``statehitl.interrupt``); an answer is an
``InterruptResponseContent`` block, ``{"interruptResponse": {"interruptId": ..., "response": ...}}``
(defined in ``statehitl.types.agent``).

The same name is LangGraph's ``interrupt()`` in ``statehitl.types`` (``from statehitl.types import
interrupt``), and once this module is imported Python makes ``statehitl.types.interrupt`` this module:
a program that imported an agent's types first would then call a module, and fail with "'module'
object is not callable". So the module is callable, and calling it is calling LangGraph's
``interrupt(value)``.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from statehitl.interrupt import Interrupt
from statehitl.types.agent import InterruptResponse, InterruptResponseContent

__all__ = ["Interrupt", "InterruptResponse", "InterruptResponseContent"]


class _InterruptModule(ModuleType):
    """This module, which ``statehitl.types.interrupt`` names once imported, callable as LangGraph's ``interrupt``."""

    def __call__(self, value: Any = None) -> Any:
        # loaded when called, as statehitl.types loads it: an agent importing these shapes never loads graphs
        return importlib.import_module("statehitl.graph.node_calls").interrupt(value)


sys.modules[__name__].__class__ = _InterruptModule
