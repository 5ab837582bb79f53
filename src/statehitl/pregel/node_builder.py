"""``NodeBuilder``: a low-level graph's node, as LangGraph spells it: which channels wake it, which it reads, what
it does with them, and which channels get the result.

    NodeBuilder().subscribe_only("input").do(add_one).write_to("output")

A built node (``PregelNode``) is plain data; ``statehitl.pregel.node_run`` turns it into the function a
StateGraph node runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from statehitl.graph.caching import CachePolicy
from statehitl.graph.retries import RetryPolicy
from statehitl.timeout_policy import TimeoutPolicy


class _Passthrough:
    """The marker of a write that gives the channel the node's output itself."""

    def __repr__(self) -> str:
        return "PASSTHROUGH"


PASSTHROUGH = _Passthrough()


@dataclass(frozen=True)
class ChannelWriteEntry:
    """One write of a node's output: to ``channel``, the output itself (``value=PASSTHROUGH``), a fixed
    ``value``, or what ``mapper(output)`` returns; ``skip_none``: no write when that is None."""

    channel: str
    value: Any = PASSTHROUGH
    skip_none: bool = False
    mapper: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class PregelNode:
    """A built node. ``channels``: one name (the node gets that channel's value) or a list (it gets a dict of
    those that hold a value); ``triggers``: the channels whose update runs it in the next step; ``bound``: the
    steps its input goes through, in order; ``writers``: where the result goes."""

    channels: str | list[str]
    triggers: list[str]
    bound: tuple[Any, ...] = ()
    writers: tuple[ChannelWriteEntry, ...] = ()
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    retry_policy: tuple[RetryPolicy, ...] = ()
    cache_policy: CachePolicy | None = None
    timeout: TimeoutPolicy | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "timeout", TimeoutPolicy.coerce(self.timeout))  # 0 is refused here, as on LangGraph

    @property
    def reads(self) -> list[str]:
        """Every channel the node reads."""
        return [self.channels] if isinstance(self.channels, str) else list(self.channels)


class NodeBuilder:
    """Builds a ``PregelNode`` step by step; each method returns the builder."""

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._bound: list[Any] = []
        self._writes: list[ChannelWriteEntry] = []
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._retry_policy: list[RetryPolicy] = []
        self._cache_policy: CachePolicy | None = None
        self._timeout: TimeoutPolicy | None = None

    def subscribe_only(self, channel: str) -> NodeBuilder:
        """Run when ``channel`` is updated, with its value as the input."""
        if self._channels:
            raise ValueError("Cannot subscribe to single channels when other channels are already subscribed to")
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> NodeBuilder:
        """Run when any of ``channels`` is updated, with a dict of channel values as the input (``read=False``:
        they wake the node without being part of its input)."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot subscribe to channels when subscribed to a single channel")
        if read:
            self._channels.extend(channels)
        self._triggers.extend(channels)
        return self

    def read_from(self, *channels: str) -> NodeBuilder:
        """Also read ``channels`` into the input dict, without being woken by them."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot read additional channels when subscribed to a single channel")
        self._channels.extend(channels)
        return self

    def do(self, node: Any) -> NodeBuilder:
        """Add a step: a function (sync or async) or a LangChain Runnable, given the previous step's output."""
        self._bound.append(node)
        return self

    def write_to(self, *channels: str | ChannelWriteEntry, **kwargs: Any) -> NodeBuilder:
        """Write the node's output to ``channels``; ``name=value`` writes a fixed value, ``name=fn`` writes
        ``fn(output)``."""
        self._writes.extend(ChannelWriteEntry(c) if isinstance(c, str) else c for c in channels)
        self._writes.extend(ChannelWriteEntry(k, mapper=v) if callable(v) else ChannelWriteEntry(k, value=v)
                            for k, v in kwargs.items())
        return self

    def meta(self, *tags: str, **metadata: Any) -> NodeBuilder:
        """Tags and metadata for the node's config."""
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> NodeBuilder:
        self._retry_policy.extend(policies)
        return self

    def add_cache_policy(self, policy: CachePolicy) -> NodeBuilder:
        self._cache_policy = policy
        return self

    def set_timeout(self, timeout: float | timedelta | TimeoutPolicy | None) -> NodeBuilder:
        """Limit each attempt of the node (an async node only; a limit not above 0 is a ``ValueError``)."""
        self._timeout = TimeoutPolicy.coerce(timeout)
        return self

    def build(self) -> PregelNode:
        channels = self._channels if isinstance(self._channels, str) else list(self._channels)
        return PregelNode(channels, list(self._triggers), tuple(self._bound), tuple(self._writes),
                          list(self._tags), dict(self._metadata), tuple(self._retry_policy), self._cache_policy,
                          self._timeout)


def built(node: NodeBuilder | PregelNode, name: str) -> PregelNode:
    """A node as ``Pregel(nodes=)`` takes it: a builder is built."""
    if isinstance(node, NodeBuilder):
        return node.build()
    if isinstance(node, PregelNode):
        return node
    raise TypeError(f"node {name!r}: give a NodeBuilder or a PregelNode, got {type(node).__name__}")


def subscribers(nodes: dict[str, PregelNode], channels: Sequence[str]) -> list[str]:
    """The nodes a write to ``channels`` wakes, by name."""
    written = set(channels)
    return sorted(n for n, node in nodes.items() if written.intersection(node.triggers))
