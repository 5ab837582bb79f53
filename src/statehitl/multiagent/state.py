"""An orchestration's state: one JSON document of named channels, reduced and stored by the engine.

The whole orchestration lives in one thread: the task, each node's result, the order nodes ran in,
and every node's own state (an agent's conversation and ``agent.state``, a nested Graph's whole
orchestration). Each channel has a kind that says how concurrent writes merge and how it is stored:

- ``APPEND``: a list that only grows, stored as deltas (each step writes only the items it added).
  A node's growing lists (an agent's ``messages``) are channels of this kind, named ``node/key``.
- ``EXTEND``: a list the writes of one step extend, stored whole (short: this invocation's order).
- ``MERGE``: a dict the writes of one step update key by key (results by node, nodes' other state).
- ``REPLACE``: one value; two writers in one step is an error.

A node's sub-state is reassembled from its ``nodes`` entry and its ``APPEND`` channels. An ``APPEND``
channel never shrinks: a node that starts over (``reset_on_revisit``) begins a new segment of it, and
its entry records where its current segment starts (``$from``), so deltas stay valid.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from statehitl.agent.binary import from_json_safe, to_json_safe
from statehitl.errors import InvalidUpdateError
from statehitl.nesting import MachineNode


def task_channel(task: Any) -> Any:
    """The call's task as its ``task`` channel stores it: JSON, bytes (an image's) tagged."""
    return to_json_safe(task)


def stored_task(state: dict[str, Any]) -> Any:
    """The call's task as the caller gave it (an image's bytes as bytes again), for the nodes' input
    and the conditions: the ``task`` channel holds it as JSON."""
    return from_json_safe(state.get("task"))


class ChannelKind(enum.Enum):
    APPEND = "append"
    EXTEND = "extend"
    MERGE = "merge"
    REPLACE = "replace"


FROM = "$from"


class OrchestrationSchema:
    """The ``StateAdapter`` of an orchestration: a dict state with declared channels.

    ``defaults`` gives each channel's value in a thread that never wrote it.
    """

    def __init__(self, channels: Mapping[str, ChannelKind], defaults: Mapping[str, Any]) -> None:
        self.channels = dict(channels)
        self.defaults = dict(defaults)
        self.append_channels = frozenset(c for c, kind in self.channels.items() if kind is ChannelKind.APPEND)

    def describe(self) -> str:
        """The channels and their kinds, for the machine's fingerprint."""
        return ";".join(f"{name}:{kind.value}" for name, kind in sorted(self.channels.items()))

    def halted(self, state: dict[str, Any]) -> bool:
        """A run whose state records a failure (a limit hit, a failed node) goes no further."""
        return state.get("failure") is not None

    def fresh(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A state with every channel at its default, then ``values``."""
        state = {name: _copy(value) for name, value in self.defaults.items()}
        for name in self.append_channels:
            state.setdefault(name, [])
        state.update(values or {})
        return state

    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]:
        if returned is None:
            return {}
        if not isinstance(returned, dict):
            raise InvalidUpdateError(f"node {node!r} returned {returned!r}; an orchestration node returns a dict")
        unknown = [k for k in returned if k not in self.channels]
        if unknown:
            raise InvalidUpdateError(
                f"node {node!r} wrote unknown channel(s) {unknown}; known: {sorted(self.channels)}")
        return returned

    def apply(self, state: dict[str, Any], writes: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        if not any(update for _, update in writes):
            return state
        new = dict(state)
        writers: dict[str, str] = {}
        for node, update in writes:
            for name, value in update.items():
                kind = self.channels[name]
                if kind is ChannelKind.APPEND or kind is ChannelKind.EXTEND:
                    new[name] = [*new.get(name, ()), *value]
                elif kind is ChannelKind.MERGE:
                    new[name] = {**new.get(name, {}), **value}
                else:
                    if name in writers:
                        raise InvalidUpdateError(
                            f"nodes {writers[name]!r} and {node!r} both wrote {name!r} in one step")
                    writers[name] = node
                    new[name] = value
        return new

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        return update  # already JSON: nodes write what their machines dumped

    def load_update(self, node: str, stored: dict[str, Any]) -> dict[str, Any]:
        """A finished node's update kept across an interrupt: JSON as its node wrote it."""
        return self.normalize_update(node, stored)

    def dump_values(self, state: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in state.items() if k not in self.append_channels}

    def dump_items(self, state: dict[str, Any], channel: str, start: int) -> list[Any]:
        items: list[Any] = state.get(channel, [])[start:]
        return items

    def length(self, state: dict[str, Any], channel: str) -> int:
        return len(state.get(channel, ()))

    def restarted(self, state: dict[str, Any], channel: str) -> bool:
        return False  # a multi-agent channel only ever grows

    def load(self, values: dict[str, Any]) -> dict[str, Any]:
        return self.fresh(values)


def _copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


def node_state_of(state: dict[str, Any], node_id: str, node: MachineNode) -> dict[str, Any]:
    """The sub-state of ``node_id`` as its machine takes it: its entry plus its current segments."""
    entry = state.get("nodes", {}).get(node_id)
    if entry is None:
        return node.node_state()
    starts = entry.get(FROM, {})
    sub = {k: v for k, v in entry.items() if k != FROM}
    for key in node.append_channels:
        sub[key] = state.get(f"{node_id}/{key}", [])[starts.get(key, 0):]
    return sub


def node_update(state: dict[str, Any], node_id: str, node: MachineNode, sub: dict[str, Any], *,
                restart: bool = False) -> dict[str, Any]:
    """The orchestration update that stores ``sub`` as ``node_id``'s new sub-state.

    Its growing lists get only what was added to their current segment, or, when the node started
    over (``restart``), a new segment holding all of them.
    """
    entry = state.get("nodes", {}).get(node_id)
    starts = {} if entry is None else dict(entry.get(FROM, {}))
    update: dict[str, Any] = {}
    for key in node.append_channels:
        channel = f"{node_id}/{key}"
        stored = len(state.get(channel, ()))
        start = stored if restart or entry is None else starts.get(key, 0)
        current = stored - start
        items = sub.get(key, [])
        if len(items) >= current:
            update[channel] = items[current:]
        else:  # shorter than its current segment: it started over, so a new segment begins
            start, update[channel] = stored, items
        starts[key] = start
    rest = {k: v for k, v in sub.items() if k not in node.append_channels}
    update["nodes"] = {node_id: {**rest, FROM: starts}}
    return update
