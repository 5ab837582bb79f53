"""The state adapter of a graph whose state has message channels (``Annotated[list, add_messages]``).

A write to such a channel is turned into held messages once, as the node's update is read (each message
with its id), so the state the next node sees and the checkpoint's record of the write name the same ids;
the record stores them in their JSON form (``message_forms``). Graphs without message channels use the
plain ``StateGraphSchema``, which does none of this on its hot path.
"""

from __future__ import annotations

from typing import Any

from statehitl.channels import INPUT, writer_label
from statehitl.commands import GOTO
from statehitl.errors import InvalidUpdateError
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.message_forms import coerce_all, stored_write

__all__ = ["MessagesStateGraphSchema"]


class MessagesStateGraphSchema(StateGraphSchema):
    """A ``StateGraphSchema`` whose message channels hold messages: what nodes, the input and ``update_state`` write
    to them is converted as ``add_messages`` converts it, and stored as JSON."""

    def initial(self, value: Any) -> Any:
        if self.native and isinstance(value, dict):  # the user's own model: its field is not MessageList
            value = self._held(value, INPUT)
        return super().initial(value)

    def input_update(self, value: Any) -> dict[str, Any]:
        update = super().input_update(value)
        return update if self.native else self._held(update, INPUT)  # a native input went through normalize_update

    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]:
        return self._held(super().normalize_update(node, returned), node)

    def shown_update(self, node: str, returned: Any) -> dict[str, Any] | None:
        """What the node returned, as it returned it (LangGraph's updates stream shows the writes unconverted)."""
        return {k: v for k, v in super().normalize_update(node, returned).items() if k != GOTO} or None

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        if not self.message_channels.isdisjoint(update):
            update = {k: stored_write(v) if k in self.message_channels else v for k, v in update.items()}
        return super().dump_update(update)

    def _held(self, update: dict[str, Any], who: str) -> dict[str, Any]:
        """The update with its writes to message channels as held messages, each with its id."""
        written = self.message_channels & update.keys()
        if not written:
            return update
        held = dict(update)
        for channel in written:
            try:
                held[channel] = coerce_all(update[channel])
            except ValueError as exc:
                raise InvalidUpdateError(f"{writer_label(who)} wrote to message channel {channel!r}: {exc}") from None
        return held
