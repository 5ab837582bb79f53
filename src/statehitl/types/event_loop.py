"""``statehitl.types.event_loop``: Strands' path to the types of a model turn's outcome.

``Usage`` (tokens) and ``Metrics`` (latency) are what a model's ``metadata`` event and
``result.metrics`` carry; ``StopReason`` why a turn or a call ended. They are defined with the stream
events, in ``statehitl.types.streaming``.
"""

from __future__ import annotations

from statehitl.types.streaming import Metrics, StopReason, Usage

__all__ = ["Metrics", "StopReason", "Usage"]
