"""``statehitl.types.interrupt``: Strands' path to the shapes of interrupts and their answers.

``Interrupt`` is what ``result.interrupts`` holds (defined in ``statehitl.interrupt``); an answer is an
``InterruptResponseContent`` block, ``{"interruptResponse": {"interruptId": ..., "response": ...}}``
(defined in ``statehitl.types.agent``).
"""

from __future__ import annotations

from statehitl.interrupt import Interrupt
from statehitl.types.agent import InterruptResponse, InterruptResponseContent

__all__ = ["Interrupt", "InterruptResponse", "InterruptResponseContent"]
