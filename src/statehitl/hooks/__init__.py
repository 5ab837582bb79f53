"""Hooks: subscribe to a machine's transitions, and interrupt from them.

``HookRegistry.add_callback(EventType, fn)`` or a ``HookProvider`` registering several at once.
"""

from __future__ import annotations

from statehitl.hooks.events import AfterNodeCallEvent, BeforeNodeCallEvent
from statehitl.hooks.registry import HookEvent, HookProvider, HookRegistry, InterruptibleEvent

__all__ = [
    "AfterNodeCallEvent",
    "BeforeNodeCallEvent",
    "HookEvent",
    "HookProvider",
    "HookRegistry",
    "InterruptibleEvent",
]
