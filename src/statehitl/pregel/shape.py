"""What the compiler and the stream translation read of a ``Pregel``: its shape, as a protocol, so that neither
needs the class (which uses them both)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from statehitl.channels.base import BaseChannel
from statehitl.pregel.node_builder import PregelNode


class PregelShape(Protocol):
    """A low-level graph's nodes, channels and options (``statehitl.pregel.Pregel``)."""

    name: str
    nodes: dict[str, PregelNode]
    channels: dict[str, BaseChannel]
    input_channels: str | list[str]
    output_channels: str | list[str]
    interrupt_before_nodes: Sequence[str] | str
    interrupt_after_nodes: Sequence[str] | str
    retry_policy: Any
    cache_policy: Any
    context_schema: Any
    store: Any
    cache: Any
    debug: bool
    config: dict[str, Any] | None

    @property
    def stream_keys(self) -> str | list[str]:
        """The channels ``stream`` shows."""
        ...

    @property
    def checkpointer(self) -> Any:
        ...

    def output(self, values: Any, keys: str | Sequence[str] | None = None) -> Any:
        """The output channels' values (or ``keys``') out of the state's values."""
        ...
