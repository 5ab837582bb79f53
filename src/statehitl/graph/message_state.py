"""The state adapter of a graph whose state has message channels (``Annotated[list, add_messages]``).

A write to such a channel is turned into held messages once, as the node's update is read (each message
with its id), so the state the next node sees and the checkpoint's record of the write name the same ids;
the record stores them in their JSON form (``message_forms``). Graphs without message channels use the
plain ``StateGraphSchema``, which does none of this on its hot path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from statehitl.channels import INPUT, writer_label
from statehitl.errors import InvalidUpdateError
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.message_forms import coerce_all, load_all, stored_write
from statehitl.graph.writes import SeveralWrites


class MessagesStateGraphSchema(StateGraphSchema):
    """A ``StateGraphSchema`` whose message channels hold messages: what nodes, the input and ``update_state`` write
    to them is converted as ``add_messages`` converts it, and stored as JSON."""

    def initial(self, value: Any) -> Any:
        if isinstance(value, dict):  # (the writes of a TypedDict state are not validated into MessageList)
            value = self._held(value, INPUT)
        return super().initial(value)

    def input_update(self, value: Any) -> dict[str, Any]:
        return self._held(super().input_update(value), INPUT)

    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]:
        return self._held(super().normalize_update(node, returned), node)

    def load_update(self, node: str, stored: dict[str, Any]) -> dict[str, Any]:
        return self._held(super().load_update(node, stored), node)

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        if not self.message_channels.isdisjoint(update):
            update = {k: _each(stored_write, v) if k in self.message_channels else v for k, v in update.items()}
        return super().dump_update(update)

    def dump_values(self, state: Any) -> dict[str, Any]:
        """A native pydantic state (the user's own model, whose message fields say ``list[BaseMessage]``) stores its
        messages in their JSON form too, so they come back as the classes they were, not as ``BaseMessage``."""
        dumped = super().dump_values(state)
        if self.native:
            held = state.__dict__
            dumped.update({k: stored_write(list(held[k])) for k in self.message_channels & dumped.keys()})
        return dumped

    def load(self, values: dict[str, Any]) -> Any:
        if self.native and not self.message_channels.isdisjoint(values):
            values = {k: load_all(v) if k in self.message_channels else v for k, v in values.items()}
        return super().load(values)

    def _held(self, update: dict[str, Any], who: str) -> dict[str, Any]:
        """The update with its writes to message channels as held messages, each with its id."""
        written = self.message_channels & update.keys()
        if not written:
            return update
        held = dict(update)
        for channel in written:
            try:
                held[channel] = _each(coerce_all, update[channel])
            except ValueError as exc:
                raise InvalidUpdateError(f"{writer_label(who)} wrote to message channel {channel!r}: {exc}") from None
        return held


def _each(convert: Callable[[Any], Any], written: Any) -> Any:
    """``convert`` applied to a channel's write, or to each write when the node wrote the channel several times."""
    if type(written) is SeveralWrites:
        return SeveralWrites(tuple(convert(value) for value in written.values))
    return convert(written)
