"""Callback handlers for ``Agent(callback_handler=...)``, defined in ``statehitl.handlers.callback_handler``."""

from __future__ import annotations

from statehitl.handlers.callback_handler import (
    CompositeCallbackHandler,
    PrintingCallbackHandler,
    null_callback_handler,
)

__all__ = ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"]
