"""A StateGraph's state as the runner sees it: any schema LangGraph takes, stored through one pydantic model.

``channels.StateSchema`` reduces, validates and stores a pydantic model; this adds what a StateGraph's
nodes may return besides a dict (a ``Command``, a list of them, a dataclass, a root value) and carries a
Command's ``goto`` to the scheduler inside the update (``commands.GOTO``), where the checkpoint keeps it
with the step's writes. For a native pydantic state nothing else changes: its model is the user's own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from statehitl.channels import StateSchema, append_items, writer_label
from statehitl.commands import GOTO, Command, ParentCommand, Send, dump_goto, goto_of, goto_targets
from statehitl.errors import InvalidUpdateError
from statehitl.graph.caching import CachedWrites
from statehitl.graph.state_channels import is_messages_reducer
from statehitl.graph.state_kinds import StateKind

__all__ = ["StateGraphSchema"]


class StateGraphSchema(StateSchema[Any]):
    """The runner's state adapter for a StateGraph over ``kind`` (named apart from Strands' multi-agent
    ``GraphState``, which is a view of one call of a Graph)."""

    def __init__(self, kind: StateKind, *, nested: bool = False) -> None:
        super().__init__(kind.model, tag_values=True)  # LangGraph's values: datetimes, sets, bytes... as they were
        self.kind = kind
        self.native = kind.kind == "pydantic" and kind.model is kind.schema
        self.nested = nested
        """The graph runs as a node of another: ``Command(graph=Command.PARENT)`` goes to that one."""
        self.message_channels = frozenset(n for n, r in self.reducers.items() if is_messages_reducer(r))
        """Channels merged by ``add_messages`` (``message_state.MessagesStateGraphSchema`` holds and stores their writes
        as messages; a plain ``StateGraphSchema`` has none)."""
        if self.message_channels & self.tagged:  # messages are stored in their own JSON form (message_forms)
            self.tagged = self.tagged - self.message_channels

    def as_nested(self) -> StateGraphSchema:
        """The adapter of this graph running as a node of another graph."""
        return type(self)(self.kind, nested=True)

    def shown(self, state: Any) -> Any:
        """The state as a reader sees it: the model itself for a native pydantic state, else its values."""
        return state if self.native else self.kind.values(state)

    def initial(self, value: Any) -> Any:
        if self.native:
            if isinstance(value, dict) and self.kind.managed:
                self.kind.refuse_managed(value, "the input")
            return super().initial(value)
        return super().initial(self.kind.input_of(value))

    def input_update(self, value: Any) -> dict[str, Any]:
        """A caller's input on an existing thread as an update (refusing unknown keys)."""
        if self.native:
            return self.normalize_update("input", value.model_dump(exclude_unset=True)
                                         if isinstance(value, BaseModel) else value)
        return self.kind.input_of(value)

    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]:
        if returned is None:
            return {}
        if isinstance(returned, CachedWrites):  # the update as stored: channels by name, its goto dumped
            update = dict(returned.update)
            goto = update.pop(GOTO, None)
            return {**update, GOTO: goto_of({GOTO: goto})} if goto else update
        if isinstance(returned, Command):
            return self._command(node, [returned])
        if isinstance(returned, list) and returned and all(isinstance(r, Command) for r in returned):
            return self._command(node, returned)
        if isinstance(returned, dict) and GOTO in returned:  # a finished node's update, kept across an interrupt
            update = dict(returned)
            goto = update.pop(GOTO)
            return {**self._plain(node, update), GOTO: goto_of({GOTO: goto})}
        return self._plain(node, returned)

    def _plain(self, node: str, returned: Any) -> dict[str, Any]:
        if self.native or returned is None:
            update = super().normalize_update(node, returned)
            if not self.kind.managed:
                return update
            if isinstance(returned, BaseModel):  # a whole state: its managed keys are the run's
                return {k: v for k, v in update.items() if k not in self.kind.managed}
            self.kind.refuse_managed(update, node)
            return update
        written = self.kind.update_of(returned, writer_label(node))
        return {} if written is None else written

    def _command(self, node: str, commands: list[Command[Any]]) -> dict[str, Any]:
        update: dict[str, Any] = {}
        goto: list[str | Send] = []
        for command in commands:
            if command.graph == Command.PARENT:
                if self.nested:  # the subgraph stops here; the node running it hands this on (graph.subgraphs)
                    raise ParentCommand(node, Command(update=command.update, goto=command.goto))
                raise InvalidUpdateError(
                    f"node {node!r} returned Command(graph=Command.PARENT) but its graph is not running as a "
                    "node of another graph"
                )
            if command.resume is not None:
                raise InvalidUpdateError(f"node {node!r} returned Command(resume=...); resume is for the caller")
            for key, value in self._plain(node, command.update).items():
                update[key] = self._combined(node, key, update[key], value) if key in update else value
            goto.extend(goto_targets(command.goto, f"node {node!r}"))
        if goto:
            update[GOTO] = goto
        return update

    def shown_update(self, node: str, returned: Any) -> dict[str, Any] | None:
        """What ``stream_mode="updates"`` shows of what ``node`` returned: its channel writes (None for none)."""
        return {k: v for k, v in self.normalize_update(node, returned).items() if k != GOTO} or None

    def _combined(self, node: str, key: str, first: Any, then: Any) -> Any:
        """Two writes of one channel by one node (a list of Commands): merged by its reducer, as the reducer
        would merge them into the state one after the other (reducers are taken to be associative)."""
        reducer = self.reducers.get(key)
        if reducer is None:
            raise InvalidUpdateError(f"node {node!r} wrote {key!r} twice in one step (a list of Commands), but "
                                     f"{key!r} has no reducer; give it one or write it once")
        if key in self.append_channels:
            return [*append_items(first), *append_items(then)]
        return reducer(first, then)

    def apply(self, state: Any, writes: list[tuple[str, dict[str, Any]]]) -> Any:
        if len(writes) == 1 and not writes[0][1]:  # a chain's step that wrote nothing
            return state
        for _, update in writes:
            if GOTO in update:  # where a Command went is the scheduler's, not a channel
                writes = [(n, {k: v for k, v in u.items() if k != GOTO}) for n, u in writes]
                break
        return super().apply(state, writes)

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        if GOTO not in update:
            return super().dump_update(update)
        rest = {k: v for k, v in update.items() if k != GOTO}
        return {**super().dump_update(rest), GOTO: dump_goto(update[GOTO])}

    def load_update(self, node: str, stored: dict[str, Any]) -> dict[str, Any]:
        if GOTO not in stored:
            return super().load_update(node, stored)
        rest = {k: v for k, v in stored.items() if k != GOTO}
        return self.normalize_update(node, {**self.decoded(rest), GOTO: stored[GOTO]})

    def dump_values(self, state: Any) -> dict[str, Any]:
        if self.native:
            return super().dump_values(state)
        # channels never written stay absent when the thread is read back, as LangGraph's state lacks them
        dumped: dict[str, Any] = state.model_dump(mode="json", exclude_unset=True,
                                                  exclude=set(self.append_channels | self.tagged) or None)
        if not self.tagged:
            return dumped
        present = state.model_fields_set
        return self.with_tagged(state, dumped, (n for n in self.tagged
                                                if n in present and n not in self.append_channels))
