"""A StateGraph's state as the runner sees it: any schema LangGraph takes, stored through one pydantic model.

``channels.StateSchema`` reduces, validates and stores a pydantic model; this adds what a StateGraph's
nodes may return besides a dict (a ``Command``, a list mixing Commands and updates, a dataclass, a root
value: ``graph.writes``) and carries a Command's ``goto`` to the scheduler inside the update
(``commands.GOTO``), where the checkpoint keeps it with the step's writes.

As in LangGraph, a pydantic state validates (the input against the input schema, raising pydantic's
``ValidationError``, and every write), while a TypedDict, dataclass or root state takes values as they are
written: its annotations are not enforced. Read back from a checkpoint, a value is restored through its
channel's annotation where it fits, and kept as stored where it does not.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from statehitl._json import dump_written
from statehitl.channels import INPUT, StateSchema, writer_label
from statehitl.commands import GOTO, HANDLED, Handled, dump_goto, goto_of
from statehitl.errors import InvalidUpdateError
from statehitl.graph.caching import CachedWrites
from statehitl.graph.state_channels import is_messages_reducer
from statehitl.graph.state_kinds import ROOT, StateKind
from statehitl.graph.writes import SeveralWrites, fold, returned_writes, shown_writes

_ROUTING = (GOTO, HANDLED)
"""The keys of an update that are the scheduler's, not channels."""


class StateGraphSchema(StateSchema[Any]):
    """The runner's state adapter for a StateGraph over ``kind``, whose input is ``input_schema`` (None: the
    state schema); named apart from Strands' multi-agent ``GraphState``, which is a view of one call of a Graph."""

    def __init__(self, kind: StateKind, *, nested: bool = False, input_schema: Any = None,
                 hidden: frozenset[str] = frozenset()) -> None:
        super().__init__(kind.model, tag_values=True)  # LangGraph's values: datetimes, sets, bytes... as they were
        self.kind = kind
        self.native = kind.kind == "pydantic" and kind.model is kind.schema
        self.nested = nested
        """The graph runs as a node of another: ``Command(graph=Command.PARENT)`` goes to that one."""
        self.hidden = hidden
        """Private channels no reader is shown: where subgraphs compiled with ``checkpointer=True`` keep
        their state (``graph.subgraphs``)."""
        self.validates = kind.kind == "pydantic"
        """Writes are validated against their channels' types (a pydantic state), else taken as they are."""
        self.input_schema = input_schema
        self._input_keys = kind.input_keys(input_schema)
        pydantic_input = isinstance(input_schema, type) and issubclass(input_schema, BaseModel)
        self._input_model: type[BaseModel] | None = input_schema if pydantic_input else \
            kind.schema if kind.kind == "pydantic" else None
        self._root = ROOT if kind.kind == "root" else None
        self.message_channels = frozenset(n for n, r in self.reducers.items() if is_messages_reducer(r))
        """Channels merged by ``add_messages`` (``message_state.MessagesStateGraphSchema`` holds and stores their writes
        as messages; a plain ``StateGraphSchema`` has none)."""
        if self.message_channels & self.tagged:  # messages are stored in their own JSON form (message_forms)
            self.tagged = self.tagged - self.message_channels

    def as_nested(self) -> StateGraphSchema:
        """The adapter of this graph running as a node of another graph (of this adapter's own class)."""
        return type(self)(self.kind, nested=True, input_schema=self.input_schema, hidden=self.hidden)

    def shown(self, state: Any) -> Any:
        """The state as a reader sees it: the model itself for a native pydantic state, else its values."""
        return state if self.native else self.kind.values(state)

    # -- input ----------------------------------------------------------------------------------------

    def empty(self) -> Any:
        """The state before any input: reducer channels at their zero values, the rest unwritten (none of them
        set: what the input writes is what the state's set fields say, so an input of nothing shows no chunk)."""
        zeros = {name: make() for name, make in self.kind.zeros.items()}
        if not self.validates:
            return self.model.model_construct(set(), **zeros)
        return self.model.model_construct(**zeros)

    def initial(self, value: Any) -> Any:
        """A new thread's state: the input (its input schema's keys) written through the reducers onto the
        empty state; a pydantic input validated first, against the input schema."""
        if self._input_model is not None:
            return self._validated_start(value)
        given = self.kind.input_of(value, self._input_keys)
        if self.reducers.keys().isdisjoint(given):  # nothing to reduce (and nothing validated): the input as it is
            for name in self.tagged.intersection(given):  # but refused here, naming the input, if it cannot be stored
                self._storable(INPUT, name, given[name])
            zeros = {name: make() for name, make in self.kind.zeros.items()}
            return self.model.model_construct(set(given), **zeros, **given)
        return self.apply(self.empty(), [(INPUT, given)])

    def _validated_start(self, value: Any) -> Any:
        """A pydantic input: validated against its schema (pydantic's ``ValidationError``, as LangGraph raises),
        required reducer channels it does not give at their zero values; then the state, its reducer channels
        taking the input through their reducers."""
        if value is not None and not isinstance(value, dict | BaseModel):
            raise TypeError(f"input must be a dict or a {self.model.__name__}, got {type(value).__name__}: {value!r}")
        given = self.kind.input_of(value, self._input_keys)
        schema = self._input_model
        assert schema is not None
        validated = schema.model_validate({**self._zeros(schema, given), **given} if self.kind.zeros else given)
        reducers = self.reducers
        reduced = [name for name in validated.model_fields_set if name in reducers and _given(schema, name, given)] \
            if reducers else []
        if schema is self.model and not reduced:
            return validated
        written = {name: getattr(validated, name) for name in validated.model_fields_set if _given(schema, name, given)}
        zeros = self.kind.zeros  # a reducer channel without a zero value takes its first write as it is
        plain = {k: v for k, v in written.items() if k not in self.reducers or k not in zeros}
        base = self.model.model_validate({**self._zeros(self.model, plain), **plain})
        reduced = [k for k in reduced if k not in plain]
        return self.apply(base, [(INPUT, {k: written[k] for k in reduced})]) if reduced else base

    def _zeros(self, model: type[BaseModel], given: dict[str, Any]) -> dict[str, Any]:
        """The zero values of ``model``'s required reducer channels ``given`` lacks: they exist from the start."""
        zeros = self.kind.zeros
        return {k: zeros[k]() for k in zeros if k not in given and k in model.model_fields
                and model.model_fields[k].is_required()}

    def input_update(self, value: Any) -> dict[str, Any]:
        """A caller's input on an existing thread as an update (keys outside the input schema dropped)."""
        if isinstance(value, BaseModel) and self.native:
            value = value.model_dump(exclude_unset=True)
        return self.kind.input_of(value, self._input_keys)

    # -- what nodes write -----------------------------------------------------------------------------

    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]:
        if returned is None:
            return {}
        if type(returned) is dict:
            if GOTO in returned and self._root is None:  # a finished node's update, kept across an interrupt
                return self._stored(returned)
            return self._plain(node, returned)
        if isinstance(returned, CachedWrites):  # the update as the cache stored it: as a checkpoint stores one
            return self._stored(returned.update)
        if isinstance(returned, Handled):  # an error handler wrote this instead of the node that failed
            return {**self.normalize_update(returned.by, returned.returned), HANDLED: returned.by}
        writes, goto = returned_writes(node, returned, lambda value: self._pairs(node, value), nested=self.nested)
        update = fold(writes)
        if goto:
            update[GOTO] = goto
        return update

    def load_update(self, node: str, stored: dict[str, Any]) -> dict[str, Any]:
        """An update as ``dump_update`` stored it (a finished node's, kept across an interrupt; a run's input),
        as the node returned it: its channels by name, several writes of one channel, its ``goto``."""
        return self._stored(stored)

    def _stored(self, stored: dict[str, Any]) -> dict[str, Any]:
        if self.tagged:  # tagged channels' values read back (a channel's several writes, each of them)
            stored = self.decoded(stored)
        update = {k: SeveralWrites.stored(v) or v for k, v in stored.items() if k != GOTO}
        if GOTO in stored:
            update[GOTO] = goto_of(stored)
        return update

    def _plain(self, node: str, returned: Any) -> dict[str, Any]:
        update = self.kind.update_of(returned, node)  # (the node named only in an error)
        return {} if update is None else update

    def _pairs(self, node: str, returned: Any) -> list[tuple[str, Any]]:
        return list(self._plain(node, returned).items())

    def shown_update(self, node: str, returned: Any) -> Any:
        """What ``stream_mode="updates"`` shows of what ``node`` returned: its writes (None for none), a list of
        them when it wrote a channel more than once, a root state's value itself; never a ``hidden`` channel."""
        shown = self._shown_update(node, returned)
        if not self.hidden or shown is None or self._root:
            return shown
        if type(shown) is dict:
            return {k: v for k, v in shown.items() if k not in self.hidden} or None
        return [one for one in shown if one.keys().isdisjoint(self.hidden)] or None

    def _shown_update(self, node: str, returned: Any) -> Any:
        if returned is None:
            return None
        if isinstance(returned, Handled):  # shown as its error handler's write
            return self.shown_update(returned.by, returned.returned)
        if isinstance(returned, CachedWrites) or (type(returned) is dict and HANDLED in returned):
            # what the node wrote when it last ran on this input, or a handled node's update as stored
            stored = self._stored(returned.update if isinstance(returned, CachedWrites) else returned)
            return shown_writes([(k, w) for k, v in stored.items() if k not in _ROUTING
                                 for w in (v.values if type(v) is SeveralWrites else (v,))], self._root)
        if type(returned) is dict and GOTO not in returned:
            plain = self._plain(node, returned)
            return plain.get(ROOT) if self._root else plain or None
        writes, _ = returned_writes(node, returned, lambda value: self._pairs(node, value), nested=self.nested)
        return shown_writes(writes, self._root)

    def task_result(self, node: str, returned: Any) -> dict[str, Any]:
        """What a task's result shows of what ``node`` returned (``stream_mode="tasks"``): its channel writes,
        a channel written more than once as ``{"$writes": [...]}``."""
        update = self.normalize_update(node, returned)
        hidden = self.hidden
        return {k: v.to_json(lambda x: x) if isinstance(v, SeveralWrites) else v for k, v in update.items()
                if k not in _ROUTING and k not in hidden}

    # -- applying and storing -------------------------------------------------------------------------

    def _validate(self, node: str, name: str, value: Any) -> Any:
        return super()._validate(node, name, value) if self.validates else value

    def apply(self, state: Any, writes: list[tuple[str, dict[str, Any]]]) -> Any:
        if len(writes) == 1 and not writes[0][1]:  # a chain's step that wrote nothing
            return state
        for _, update in writes:
            if GOTO in update or HANDLED in update or SeveralWrites in map(type, update.values()):
                writes = [one for node, written in writes for one in self._one_by_one(node, written)]
                break
        return super().apply(state, writes)

    def _one_by_one(self, node: str, update: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """A node's update as the writes the step applies one after another: the channels it wrote several
        times once per write, in order (a channel without a reducer takes one write per step), its goto left
        (and the error handler that wrote it) left to the scheduler."""
        several = {k: v.values for k, v in update.items() if type(v) is SeveralWrites}
        first = {k: several[k][0] if k in several else v for k, v in update.items() if k not in _ROUTING}
        for key in several:
            if key not in self.reducers:
                raise InvalidUpdateError(
                    f"{writer_label(node)} wrote {key!r} {len(several[key])} times in one step, but {key!r} has no "
                    "reducer and takes one value per step; give it one (Annotated[T, reducer]) or write it once")
        rest = [(node, {key: values[i]}) for key, values in several.items() for i in range(1, len(values))]
        return [(node, first), *rest]

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        if GOTO not in update and SeveralWrites not in map(type, update.values()):
            return super().dump_update(update)  # HANDLED is a node's name: JSON as it is
        rest = {k: v.to_json(_as_given if k in self.tagged else _jsonable) if type(v) is SeveralWrites else v
                for k, v in update.items() if k != GOTO}  # (a tagged channel's writes are tagged one by one)
        dumped = super().dump_update(rest)
        if GOTO in update:
            dumped[GOTO] = dump_goto(update[GOTO])
        return dumped

    def dump_input(self, update: dict[str, Any]) -> dict[str, Any]:
        """A run's input as its checkpoint records it; a value JSON cannot hold is refused naming its channel."""
        return dump_written(self.dump_update, INPUT, update)

    def dump_values(self, state: Any) -> dict[str, Any]:
        if self.native:
            return super().dump_values(state)
        # channels never written stay absent when the thread is read back, as LangGraph's state lacks them; a
        # value that does not fit its annotation (not enforced) is stored as it is
        dumped: dict[str, Any] = state.model_dump(mode="json", exclude_unset=True,
                                                  exclude=set(self.append_channels | self.tagged | self.untracked)
                                                  or None,
                                                  warnings=False)
        if not self.tagged:
            return dumped
        present = state.model_fields_set
        return self.with_tagged(state, dumped, (n for n in self.tagged
                                                if n in present and n not in self.append_channels))

    def load(self, values: dict[str, Any]) -> Any:
        """A stored state back as the model. Values of a state whose annotations are not enforced are read
        through their annotations where they fit, and as stored where they do not; a message channel's values
        are always read as messages (one that is none means the record is corrupt)."""
        if self.validates:
            return super().load(values)
        stored, values = values, self.decoded(values) if self.tagged else values
        try:
            return self._as_written(self.model.model_validate(values), values)
        except ValidationError as exc:
            misfits = {e["loc"][0] for e in exc.errors() if e["loc"]}
        if not self.message_channels.isdisjoint(misfits):
            return super().load(stored)  # (raises CheckpointCorruptError)
        fitting = self.model.model_validate({k: v for k, v in values.items() if k not in misfits})
        return self._as_written(fitting.model_copy(update={k: values[k] for k in misfits if k in values}), values)

    def _as_written(self, state: Any, values: dict[str, Any]) -> Any:
        """``state`` with its tagged channels' values as decoded: tagged JSON gives back what was written (a list
        a list, a tuple a tuple), which reading it through the annotation would change (a list written to a
        ``tuple[...]`` item becomes a tuple), where LangGraph's state keeps what was written."""
        tagged = {name: values[name] for name in self.tagged if name in values}
        return state.model_copy(update=tagged) if tagged else state


def _as_given(value: Any) -> Any:
    return value


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


def _given(model: type[BaseModel], name: str, given: dict[str, Any]) -> bool:
    """Whether the input ``given`` holds field ``name`` of ``model``, by its name or its alias."""
    if name in given:
        return True
    alias = model.model_fields[name].alias
    return alias is not None and alias in given
