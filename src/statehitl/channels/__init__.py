"""A pydantic model as a set of channels: which fields have reducers, and how updates merge.

Burr's split, which keeps the runner simple: nodes compute an update, this module alone applies it.
A field annotated ``Annotated[T, reducer]`` merges writes with ``reducer(current, new)``; any other
field is last-write-wins, and two nodes writing it in the same step is an error, because the order of
concurrent nodes is not something a user should have to depend on.

The package's other modules are LangGraph's channel classes (``LastValue``, ``Topic``...), declarations a
low-level graph (``statehitl.pregel``) turns into such fields; two flags a field's ``Annotated`` metadata may
carry are read here: a step-scoped reducer (cleared before each step applies) and ``UNTRACKED`` (never stored).
"""

from __future__ import annotations

import operator
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from statehitl.errors import CheckpointCorruptError, InvalidUpdateError
from statehitl.values import ValueTypes, decode_value, encode_value, needs_tags

__all__ = [
    "INPUT",
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EphemeralValue",
    "LastValue",
    "Overwrite",
    "Rewritten",
    "StateSchema",
    "Topic",
    "UntrackedValue",
    "append",
    "append_items",
    "overwritten",
    "writer_label",
]

INPUT = "input"
"""The writer a caller's input on an existing thread is recorded under (``writes``), as if a node wrote it."""

M = TypeVar("M", bound=BaseModel)
Reducer = Callable[[Any, Any], Any]


def append(current: list[Any] | None, new: Any) -> list[Any]:
    """Reducer for append-only channels: ``new`` (an item or a list of items) goes on the end."""
    return [*(current or ()), *append_items(new)]


def append_items(new: Any) -> list[Any]:
    """What an ``append`` write adds: nothing for None, the items of a list or tuple, else the one item."""
    return [] if new is None else list(new) if isinstance(new, list | tuple) else [new]


@dataclass(slots=True)
class Overwrite:
    """A write that replaces a reducer channel's value instead of being merged by its reducer (LangGraph's
    ``langgraph.types.Overwrite``): ``{"items": Overwrite(["only"])}``. Two in one step for one channel are an
    ``InvalidUpdateError``; the channel's other writes of that step are dropped. Stored as JSON, it reads
    back as ``{"value": ..., "type": "__overwrite__"}``, which is taken as an overwrite too."""

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"


_OVERWRITE = "__overwrite__"


class Rewritten(list[Any]):
    """An append-only channel's list as an ``Overwrite`` left it: a plain list that also tells the checkpoint
    engine to store the channel whole in this step's record (its items no longer extend the parent's, so a
    piece of "what this step added" would read back wrong). The next step that writes anything turns it back
    into a plain list, so only the overwriting step's record holds the channel whole."""


def overwritten(value: Any) -> tuple[bool, Any]:
    """Whether a write is an ``Overwrite`` (the object, or its JSON form ``{"value": v, "type":
    "__overwrite__"}``, or ``{"__overwrite__": v}``), and the value it writes."""
    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if len(value) == 1 and _OVERWRITE in value:
            return True, value[_OVERWRITE]
        if value.get("type") == _OVERWRITE and "value" in value and len(value) == 2:
            return True, value["value"]
    return False, None


def _is_list(info: Any) -> bool:
    """Whether a field holds a list (``list``, ``list[T]``, optionally ``None``): what ``operator.add`` extends."""
    annotation = info.annotation
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) \
        else (annotation,)
    kinds = [typing.get_origin(o) or o for o in options if o is not type(None)]
    return bool(kinds) and all(k is list for k in kinds)


def writer_label(node: str) -> str:
    """Who wrote an update, for messages: a node, or the caller's input."""
    return "the input" if node == INPUT else f"node {node!r}"


@lru_cache(maxsize=1024)
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """A validator for one field, shared by every compile of the same model (building one costs more than a
    small graph's whole step).

    The field's constraints (``Field(ge=0)``, ``AfterValidator``...) live in its metadata, not its
    annotation; without them an update the model would reject could reach a checkpoint.
    """
    info = model.model_fields[name]
    annotation: Any = info.annotation or Any
    if info.metadata:
        annotation = Annotated[(annotation, *info.metadata)]
    return TypeAdapter(annotation)


class StateSchema(Generic[M]):
    """Reduces, validates and serializes states of one pydantic model.

    ``tag_values``: a channel whose type may hold what pydantic's JSON would change (``Any``, ``float``,
    ``bytes``...: ``values.needs_tags``) is stored as tagged JSON (``statehitl.values``) and read back as it
    was, and a write of a value it cannot store is refused naming the node and the channel. Every other
    channel is stored by pydantic's JSON as it is, with no walk of its value.
    """

    def __init__(self, model: type[M], *, tag_values: bool = False) -> None:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"the state schema must be a pydantic BaseModel subclass, got {model!r}")
        self.model = model
        self.fields = dict(model.model_fields)
        self.reducers: dict[str, Reducer] = {}
        for name, info in self.fields.items():
            for meta in info.metadata:
                if callable(meta) and not isinstance(meta, type):
                    self.reducers[name] = meta
        self.append_channels = frozenset(n for n, r in self.reducers.items()
                                         if r is append or (r is operator.add and _is_list(self.fields[n])))
        """Channels that only grow, stored as the pieces each step added (``checkpoint/chain.py``): those of
        statehitl's ``append``, and LangGraph's ``Annotated[list, operator.add]`` (a list plus a list extends
        the first)."""
        self.untracked = frozenset(n for n, info in self.fields.items()
                                   if any(getattr(m, "untracked", False) is True for m in info.metadata))
        """Channels never stored (LangGraph's ``UntrackedValue``): a run holds them, its checkpoints and recorded
        writes leave them out, so they may hold any object (``statehitl.channels.base.UNTRACKED`` marks them)."""
        self._ordinary = [n for n in self.fields if n not in self.append_channels and n not in self.untracked]
        self.step_scoped = frozenset(n for n, r in self.reducers.items() if getattr(r, "step_scoped", False))
        """Channels that hold only what the latest step wrote (LangGraph's ``EphemeralValue``, a ``Topic`` that
        does not accumulate, ``AnyValue``): their reducer says so (``statehitl.channels.base.step_scoped``)."""
        # the model validates a new thread's input, and takes a field under its alias there
        self._aliases = frozenset(info.alias for info in self.fields.values() if info.alias)
        self.tagged = frozenset(n for n, info in self.fields.items()
                                if tag_values and n not in self.untracked and needs_tags(info.annotation))
        """The channels stored as tagged JSON (see the class docstring)."""
        self.value_types = ValueTypes.of_annotations(info.annotation for info in self.fields.values()
                                                     if info.annotation is not None) if self.tagged else ValueTypes()
        """The classes a tagged channel's values may be read back into: those the schema names (and registered)."""
        self._last_encoded: dict[str, tuple[Any, Any]] = {}

    def describe(self) -> str:
        """A stable text of the schema's fields and types, for the machine fingerprint."""
        return ";".join(
            f"{n}:{info.annotation!r}:{getattr(self.reducers.get(n), '__name__', '')}"
            for n, info in self.fields.items()
        )

    def _validate(self, node: str, name: str, value: Any) -> Any:
        try:
            return _field_adapter(self.model, name).validate_python(value)
        except ValidationError as exc:
            raise InvalidUpdateError(
                f"{writer_label(node)} wrote an invalid value to {name!r} of {self.model.__name__}: "
                f"{exc.errors(include_url=False)}"
            ) from None

    def initial(self, value: Any) -> M:
        """The starting state of a new thread from the caller's input (a dict or a model)."""
        if isinstance(value, self.model):
            return value
        if isinstance(value, BaseModel):
            value = value.model_dump()
        if not isinstance(value, dict):
            raise TypeError(
                f"input must be a dict or a {self.model.__name__}, got {type(value).__name__}: {value!r}"
            )
        self._known(value, "the input has", accepted=self._aliases)
        try:
            return self.model.model_validate(value)
        except ValidationError as exc:
            raise InvalidUpdateError(
                f"input does not fit {self.model.__name__}: {exc.errors(include_url=False)}"
            ) from None

    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]:
        """What a node returned, as ``{field: value}``: None, a dict, or a model (its set fields)."""
        if returned is None:
            return {}
        if isinstance(returned, BaseModel):
            if not isinstance(returned, self.model):
                raise InvalidUpdateError(
                    f"node {node!r} returned a {type(returned).__name__}; return a dict, a "
                    f"{self.model.__name__} or None"
                )
            return {name: getattr(returned, name) for name in returned.model_fields_set}
        if not isinstance(returned, dict):
            raise InvalidUpdateError(
                f"node {node!r} returned {type(returned).__name__} {returned!r}; return a dict of field "
                f"updates, a {self.model.__name__} or None"
            )
        self._known(returned, "the input has" if node == INPUT else f"{writer_label(node)} wrote")
        return returned

    def _known(self, update: dict[str, Any], who: str, accepted: frozenset[str] = frozenset()) -> None:
        """Refuse fields the state does not have, as pydantic would silently drop them from a new thread's
        input while a node's write would fail: the same mistake gets the same error wherever it is made."""
        unknown = [k for k in update if k not in self.fields and k not in accepted]
        if unknown:
            raise InvalidUpdateError(
                f"{who} unknown field(s) {unknown}; {self.model.__name__} has {list(self.fields)}"
            )

    def apply(self, state: M, writes: list[tuple[str, dict[str, Any]]]) -> M:
        """Merge the updates of one step into ``state``; concurrent writes need a reducer (or an ``Overwrite``)."""
        if self.step_scoped:
            state = self._cleared(state, writes)
        if not any(update for _, update in writes):
            return state
        merged: dict[str, Any] = {}
        writers: dict[str, str] = {}
        replaced: set[str] = set()
        for node, update in writes:
            for name, value in update.items():
                reducer = self.reducers.get(name)
                replacing, new = overwritten(value)
                if replacing:
                    if name in replaced:
                        raise InvalidUpdateError("Can receive only one Overwrite value per super-step. "
                                                 f"({writer_label(node)} wrote Overwrite to {name!r}, which another "
                                                 "write of this step overwrote already)")
                    replaced.add(name)
                    merged[name] = self._validate(node, name, new)
                    if name in self.append_channels and isinstance(merged[name], list):
                        merged[name] = Rewritten(merged[name])
                elif name in replaced:
                    continue  # an Overwrite of this step wins over the channel's other writes
                elif reducer is None:
                    if name in writers:
                        raise InvalidUpdateError(
                            f"At key {name!r}: nodes {writers[name]!r} and {node!r} both wrote {name!r} in the same "
                            f"step, but {name!r} has no reducer; give it one, e.g. Annotated[list[str], append], "
                            "or let only one of them write it"
                        )
                    merged[name] = self._validate(node, name, value)
                    if name in self.tagged:
                        self._storable(node, name, merged[name])
                else:
                    merged[name] = self._reduced(state, merged, node, name, value, reducer=reducer)
                writers[name] = node
        for name in self.append_channels:  # an earlier step's Overwrite is stored already: extend it again
            if name not in merged and type(getattr(state, name, None)) is Rewritten:
                merged[name] = list(getattr(state, name))
        return state.model_copy(update=merged)

    def _cleared(self, state: M, writes: list[tuple[str, dict[str, Any]]]) -> M:
        """``state`` with its step-scoped channels unwritten again before a step applies: a step's writes start
        them afresh, and one not written in the step is gone after it (absent: None and not a set field)."""
        present = self.step_scoped & state.model_fields_set
        if not present:
            return state
        values = {n: None if n in present else getattr(state, n) for n in self.fields}
        return type(state).model_construct(state.model_fields_set - present, **values)

    def _reduced(self, state: M, merged: dict[str, Any], node: str, name: str, value: Any, *, reducer: Reducer) -> Any:
        """Channel ``name`` after ``reducer`` takes ``value``; of an append, only the new items are validated (and,
        of a tagged channel, checked storable), not the whole history again."""
        current = merged[name] if name in merged else getattr(state, name)
        if reducer is append or (name in self.append_channels and isinstance(value, list)):
            added = self._validate(node, name, append_items(value) if reducer is append else value)
            if name in self.tagged:
                self._storable(node, name, added)
            return [*(current or ()), *added]
        reduced = self._validate(node, name, reducer(current, value))
        if name in self.tagged:
            self._storable(node, name, reduced)
        return reduced

    def _storable(self, node: str, name: str, value: Any) -> None:
        """Check ``value`` storable in tagged channel ``name`` (``values.encode_value``), so that a value the store
        cannot hold fails the step that wrote it, naming its node and channel, before anything is stored,
        rather than the checkpoint's write."""
        self._encoded(name, value, f"{writer_label(node)} wrote to channel {name!r} a value that")

    def _encoded(self, name: str, value: Any, where: str = "") -> Any:
        """``value`` of tagged channel ``name`` as stored. A step checks what it writes, stores it in its
        checkpoint and records it in its writes: the last value encoded per channel is kept, and the same
        object is not walked again (the identity of the object, not its contents: a channel not written
        this step is walked anew)."""
        last = self._last_encoded.get(name)
        if last is not None and last[0] is value:
            return last[1]
        encoded = encode_value(value, where or f"channel {name!r}", self.value_types)
        self._last_encoded[name] = (value, encoded)
        return encoded

    # -- the engine's StateCodec: append-only channels are stored as deltas --------------------------

    def dump_values(self, state: M) -> dict[str, Any]:
        """The ordinary channels as JSON (append-only ones are stored as deltas by the engine)."""
        if not self.tagged:
            if not self.append_channels and not self.untracked:
                return state.model_dump(mode="json")
            return state.model_dump(mode="json", include=set(self._ordinary))
        plain = [n for n in self._ordinary if n not in self.tagged]
        dumped: dict[str, Any] = state.model_dump(mode="json", include=set(plain)) if plain else {}
        return self.with_tagged(state, dumped, (n for n in self._ordinary if n in self.tagged))

    def with_tagged(self, state: M, dumped: dict[str, Any], channels: Any) -> dict[str, Any]:
        """``dumped`` with ``channels`` (tagged ones) added as tagged JSON, in the schema's order of fields."""
        for name in channels:
            dumped[name] = self._encoded(name, getattr(state, name))
        return {name: dumped[name] for name in self.fields if name in dumped}

    def dump_items(self, state: M, channel: str, start: int) -> list[Any]:
        """Items ``start:`` of an append-only channel as JSON: only what a step added gets serialized."""
        added = getattr(state, channel)[start:]
        if channel in self.tagged:
            return [encode_value(item, f"channel {channel!r}", self.value_types) for item in added]
        items: list[Any] = to_jsonable_python(added)
        return items

    def length(self, state: M, channel: str) -> int:
        return len(getattr(state, channel))

    def restarted(self, state: M, channel: str) -> bool:
        """Whether this state's step replaced the channel (an ``Overwrite``) rather than extending it."""
        return type(getattr(state, channel)) is Rewritten

    def load(self, values: dict[str, Any]) -> M:
        """A stored state back as the model; a mismatch means the thread was written by other code."""
        if self.tagged:
            values = self.decoded(values)
        try:
            return self.model.model_validate(values)
        except ValidationError as exc:
            raise CheckpointCorruptError(
                f"a stored state does not fit {self.model.__name__} (was the thread written by a different "
                f"state schema?): {exc.errors(include_url=False)}"
            ) from None

    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]:
        if self.untracked:
            update = {name: value for name, value in update.items() if name not in self.untracked}
        if not self.tagged or not any(name in self.tagged for name in update):
            dumped: dict[str, Any] = to_jsonable_python(update)
            return dumped
        return {name: self._encoded_write(name, value) if name in self.tagged
                else to_jsonable_python(value) for name, value in update.items()}

    def _encoded_write(self, name: str, value: Any) -> Any:
        """A write to tagged channel ``name`` as stored: an ``Overwrite`` in its JSON form around its value
        tagged (read back as an overwrite: ``overwritten``), any other value tagged."""
        replacing, new = overwritten(value)
        if replacing:
            return {"value": self._encoded(name, new), "type": _OVERWRITE}
        return self._encoded(name, value)

    def load_update(self, node: str, stored: dict[str, Any]) -> dict[str, Any]:
        """An update as ``dump_update`` stored it (a finished node's, kept across an interrupt), as the node
        returned it."""
        return self.normalize_update(node, self.decoded(stored) if self.tagged else stored)

    def decoded(self, values: dict[str, Any]) -> dict[str, Any]:
        """Stored channel values with the tagged channels' values read back (``values.decode_value``)."""
        return {name: decode_value(value, self.value_types) if name in self.tagged else value
                for name, value in values.items()}


# LangGraph's channels of a low-level graph (``statehitl.pregel.Pregel``), one module each
from statehitl.channels.any_value import AnyValue  # noqa: E402
from statehitl.channels.base import BaseChannel  # noqa: E402
from statehitl.channels.binop import BinaryOperatorAggregate  # noqa: E402
from statehitl.channels.delta import DeltaChannel  # noqa: E402
from statehitl.channels.ephemeral_value import EphemeralValue  # noqa: E402
from statehitl.channels.last_value import LastValue  # noqa: E402
from statehitl.channels.topic import Topic  # noqa: E402
from statehitl.channels.untracked_value import UntrackedValue  # noqa: E402
