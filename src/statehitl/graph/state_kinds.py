"""A LangGraph state schema (TypedDict, dataclass, pydantic model or a root value) as the pydantic model
the engine stores, and the views of it LangGraph code expects.

The engine only knows pydantic models (``StateSchema``): one field per channel, a reducer in the field's
``Annotated`` metadata. LangGraph programs describe the same channels four ways, and differ from a
pydantic model in one thing that matters: a channel can be *absent*. A plain channel is absent until
something writes it, and a TypedDict node then gets a dict without that key, not a key with ``None``;
a reducer channel starts at its type's zero value (``list`` -> ``[]``) when the type can build one.
This module keeps that distinction inside a pydantic model: an absent channel holds ``None`` and is not
in ``model_fields_set``; ``model_copy(update=...)`` adds what a step writes, and the model's serializer
leaves absent channels out, so a checkpoint round trip keeps them absent.

As in LangGraph, keys a schema does not have are dropped from a node's update and the caller's input (a
pydantic state with ``extra="forbid"`` refuses them), and a pydantic state's ``values`` are its fields as
the model holds them (a nested model or a message stays an object). One deviation: a pydantic state's
``values`` has every field, where LangGraph gives only the channels written so far.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, get_type_hints

from pydantic import BaseModel

from statehitl.channels import INPUT
from statehitl.errors import InvalidUpdateError
from statehitl.graph.code_cache import CodeCache
from statehitl.graph.state_channels import (
    Channel,
    Kind,
    absent_aware_base,
    build_model,
    channel_of,
    channels_of,
    hints_of,
    is_field_schema,
    kind_of,
    managed_of,
    root_value_type,
)
from statehitl.managed import ManagedValue, refuse_writes, values_of

ROOT = "root"
"""The one channel of a root-value schema (``StateGraph(Annotated[list, operator.add])``).

LangGraph calls this channel ``__root__``; pydantic refuses a field of that name (it is v1's root-model
spelling), and the engine applies updates by field name, so the channel is the field ``root``."""


# -- the kind -----------------------------------------------------------------------------------------


View = Callable[[BaseModel, dict[str, Any]], Any]
"""Builds a schema's view of a state, given the values of its managed keys."""


class StateKind:
    """What a user's state schema is, and the pydantic model the engine stores it as.

    ``node_input`` and ``values`` turn a stored state into what LangGraph code expects; ``update_of`` and
    ``input_of`` turn what it gives back into the ``{field: value}`` updates ``StateSchema`` applies.
    """

    def __init__(self, kind: Kind, schema: Any, model: type[BaseModel], channels: dict[str, Channel], *,
                 own: Sequence[str], tracked: frozenset[str],
                 managed: dict[str, type[ManagedValue]] | None = None) -> None:
        self.kind: Kind = kind
        self.schema: Any = schema
        self.model: type[BaseModel] = model
        self.channels: tuple[str, ...] = tuple(channels)
        self._own = tuple(own)
        self._known = frozenset(channels)
        self._own_input = frozenset(own) | _aliases(model)
        self.zeros = {n: c.factory for n, c in channels.items() if c.starts_present and c.factory is not None}
        """The reducer channels that exist from the start, with their zero value's factory."""
        self.forbids_extra = kind == "pydantic" and schema.model_config.get("extra") == "forbid"
        """A pydantic state with ``extra="forbid"``: keys it does not have are refused rather than dropped."""
        self._native = kind == "pydantic" and model is schema
        self._always = frozenset(channels) - tracked  # present whether written or not
        self.managed: dict[str, type[ManagedValue]] = dict(managed or {})
        """Keys of the schema the run fills in (``statehitl.managed``), with how."""
        self._views: dict[Any, View] = {}
        self._view_keys: dict[Any, frozenset[str]] = {}
        self._own_view = self._view_for(schema, own)

    def __repr__(self) -> str:
        return f"StateKind({self.kind!r}, {getattr(self.schema, '__name__', self.schema)!r})"

    # -- what nodes and callers see ---------------------------------------------------------------

    def node_input(self, state: BaseModel, wants: Any = None, managed: dict[str, Any] | None = None) -> Any:
        """What a node gets: the state schema's view, or the view of the schema its first parameter is
        annotated with (only that schema's channels); ``managed``: the values of the schema's managed keys."""
        extra = managed or {}
        if wants is None or wants is self.schema:
            if self._native:
                return state.model_copy(update=extra) if extra else state
            return self._own_view(state, extra)
        view = self._view(wants)
        return view(state, {k: v for k, v in extra.items() if k in self._view_keys[wants]} if extra else {})

    def managed_values(self, remaining: int) -> dict[str, Any]:
        """The managed keys' values when ``remaining`` steps remain."""
        return values_of(self.managed, remaining)

    def refuse_managed(self, fields: dict[str, Any], who: str) -> None:
        """Refuse a write to a managed key: the run sets it."""
        refuse_writes(self.managed, fields, _writer(who))

    def _writes(self, fields: dict[str, Any], given: Any, who: str) -> dict[str, Any]:
        """What a returned or given value writes: a whole state object's managed keys are the run's, not writes;
        a dict that names one is refused."""
        if self.managed and not isinstance(given, dict):
            fields = {k: v for k, v in fields.items() if k not in self.managed}
        self.refuse_managed(fields, who)
        return fields

    def values(self, state: BaseModel, only: Any = None) -> Any:
        """LangGraph's ``values`` of a result or snapshot: the channels present, as a dict (a root
        state's value itself); ``only`` (an output schema) keeps that schema's channels."""
        if only is not None and only is not self.schema:
            return self._present(state, self._keys_of(only))
        if self.kind == "root":
            return getattr(state, ROOT)
        if self.kind == "pydantic":  # every field, as the model holds it (a message, a nested model), not dumped
            held = state.__dict__
            return {name: held[name] for name in self._own if name in held}
        return self._present(state, self._own)

    def update_of(self, returned: Any, who: str) -> dict[str, Any] | None:
        """A node's return value as ``{field: value}`` (keys the state lacks dropped); None: it wrote nothing."""
        if returned is None:
            return None
        if self.kind == "root":
            return {ROOT: returned}
        fields = returned if isinstance(returned, dict) else _fields_of(returned)
        if fields is None:
            raise InvalidUpdateError(
                f"{_writer(who)} returned {type(returned).__name__} {returned!r}; return a dict of channel "
                f"updates, a {_name(self.schema)} or None"
            )
        if self.managed:
            fields = self._writes(fields, returned, who)
        return self._known_only(fields, self._known, who)

    def input_keys(self, schema: Any) -> frozenset[str]:
        """The keys an input of ``schema`` (an input schema; None: the state schema) may give."""
        return self._own_input if schema is None or schema is self.schema else frozenset(self._keys_of(schema))

    def input_of(self, given: Any, keys: frozenset[str] | None = None) -> dict[str, Any]:
        """A caller's input as ``{field: value}``: the ``keys`` of its input schema (``input_keys``; by default
        the state schema's), others dropped, as LangGraph's input keeps only its input schema's channels."""
        if given is None:
            return {}
        if self.kind == "root":
            return {ROOT: given}
        fields = given if isinstance(given, dict) else _fields_of(given)
        if fields is None:
            raise InvalidUpdateError(
                f"the input is {type(given).__name__} {given!r}; give a dict of channel values or a "
                f"{_name(self.schema)}"
            )
        if self.managed:
            fields = self._writes(fields, given, "the input")
        return self._known_only(fields, self._own_input if keys is None else keys, None)

    # -- helpers --------------------------------------------------------------------------------------

    def _known_only(self, fields: dict[str, Any], keys: frozenset[str], who: str | None) -> dict[str, Any]:
        """``fields`` without the keys not in ``keys``; a state that forbids extras refuses them instead (``who``
        wrote them: a node's label, None for the input; named only in the error, so a write pays nothing for it)."""
        for key in fields:
            if key not in keys:
                break
        else:
            return fields
        if self.forbids_extra:
            written = "the input has" if who is None else f"{_writer(who)} wrote"
            raise InvalidUpdateError(f"{written} unknown channel(s) {[k for k in fields if k not in keys]}; "
                                     f"{_name(self.schema)} forbids extra fields and has {sorted(keys)}")
        return {k: v for k, v in fields.items() if k in keys}

    def _present(self, state: BaseModel, keys: Iterable[str]) -> dict[str, Any]:
        """The channels among ``keys`` that exist: written, or present from the start."""
        written, stored, always = state.model_fields_set, state.__dict__, self._always
        return {k: stored[k] for k in keys if k in written or k in always}

    def _keys_of(self, schema: Any) -> tuple[str, ...]:
        if not is_field_schema(schema):
            raise TypeError(f"{schema!r} is not a state schema (a TypedDict, dataclass or pydantic model)")
        keys = tuple(hints_of(schema))
        missing = [k for k in keys if k not in self.channels and k not in self.managed]
        if missing:
            raise ValueError(
                f"{_name(schema)} has key(s) {missing} that are not channels of the state; pass it in "
                "state_kind(..., extra=[...])"
            )
        return keys

    def _view(self, schema: Any) -> View:
        view = self._views.get(schema)
        if view is None:
            keys = self._keys_of(schema)
            self._view_keys[schema] = frozenset(keys)  # a managed key of the state the schema names gets its value
            view = self._views[schema] = self._view_for(schema, keys)
        return view

    def _view_for(self, schema: Any, keys: Sequence[str]) -> View:
        """How to build one schema's view from a state, decided once per schema rather than per call."""
        keys = tuple(keys)
        kind = kind_of(schema)
        if kind == "root":
            return lambda state, extra: getattr(state, ROOT)
        if kind == "typeddict":
            return lambda state, extra: {**self._present(state, keys), **extra} if extra else self._present(state, keys)
        if kind == "dataclass":
            init = tuple(f.name for f in dataclasses.fields(schema) if f.init and f.name not in self.managed)
            return lambda state, extra: schema(**self._present(state, init), **extra)
        if schema is self.schema:  # the user's own model, stored as a subclass with the private channels
            return lambda state, extra: schema.model_construct(
                state.model_fields_set & set(keys), **{k: getattr(state, k) for k in keys}, **extra
            )
        return lambda state, extra: schema.model_validate({**self._present(state, keys), **extra})


def _aliases(model: type[BaseModel]) -> frozenset[str]:
    """A pydantic state takes its input under a field's alias too (``StateSchema.initial`` does)."""
    return frozenset(info.alias for info in model.model_fields.values() if info.alias)


def _fields_of(obj: Any) -> dict[str, Any] | None:
    """What a model or dataclass writes, by LangGraph's rule: a dataclass every field; a model every field but
    those left at a default of None (a field set to None explicitly writes it), so a default factory's value
    (``docs: list = Field(default_factory=...)``) is written, as a required field's is."""
    if isinstance(obj, BaseModel):
        written = obj.model_fields_set
        return {name: value for name, info in type(obj).model_fields.items()
                if (value := getattr(obj, name)) is not None or info.default is not None or name in written}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return None


def _writer(who: str) -> str:
    """``who`` is a node's name; a caller that already wrote the phrase ("node 'x'", "the input") keeps it."""
    if who in (INPUT, "the input"):
        return "the input"
    return who if who.startswith("node '") else f"node {who!r}"


def _name(schema: Any) -> str:
    return getattr(schema, "__name__", None) or repr(schema)


# -- building a kind ----------------------------------------------------------------------------------


_KINDS: dict[tuple[Any, ...], StateKind] = {}
"""Kinds already built, by schema and extra schemas: a graph compiled per request (or per resume) reuses
its kind, and with it one synthesized model, whose validators pydantic builds once."""
_KINDS_MAX = 256


def state_kind(schema: Any, *, extra: Sequence[Any] = ()) -> StateKind:
    """The kind of ``schema`` and its stored model; the fields of ``extra`` schemas (input and output
    schemas, node input annotations) become channels too, LangGraph's private channels. Where two
    schemas annotate one key differently the state schema wins, then the first extra."""
    others = [s for s in extra if s is not None and s is not schema]
    key = (schema, *others)
    try:
        known = _KINDS.get(key)
    except TypeError:  # a schema that cannot be hashed: built every time
        return _state_kind(schema, others)
    if known is None:
        known = _state_kind(schema, others)
        if len(_KINDS) >= _KINDS_MAX:
            _KINDS.pop(next(iter(_KINDS)))
        _KINDS[key] = known
    return known


def _state_kind(schema: Any, others: list[Any]) -> StateKind:
    kind = kind_of(schema)
    if kind == "root":
        return _root_kind(schema, others)
    own = channels_of(schema)
    managed = managed_of(schema)
    private: dict[str, Channel] = {}
    for other in others:
        if not is_field_schema(other):
            raise TypeError(f"{other!r} is not a state schema (a TypedDict, dataclass or pydantic model)")
        for name, channel in channels_of(other).items():
            if name not in own and name not in private:
                private[name] = channel
    if kind == "pydantic":
        return _pydantic_kind(schema, own, private, managed)
    channels = {**own, **private}
    tracked = frozenset(n for n, c in channels.items() if not c.starts_present)
    model = build_model(f"{_name(schema)}Channels", channels.values(), absent_aware_base(tracked))
    return StateKind(kind, schema, model, channels, own=list(own), tracked=tracked, managed=managed)


def _pydantic_kind(schema: type[BaseModel], own: dict[str, Channel], private: dict[str, Channel],
                   managed: dict[str, type[ManagedValue]]) -> StateKind:
    """The user's model is the stored model when it has every channel: the engine's native, zero-cost
    path. Private channels make it a subclass, so validators and reducers of the user's fields still hold.
    A managed key stays a field of the model (holding its default), so it needs a default."""
    required = [name for name in managed if schema.model_fields[name].is_required()]
    if required:
        raise ValueError(f"{schema.__name__}.{required[0]} is filled in by the run ({managed[required[0]].name}); "
                         "on a pydantic state give it a default (= 0), since the state is stored as the model")
    if not private:
        return StateKind("pydantic", schema, schema, own, own=list(own), tracked=frozenset(), managed=managed)
    tracked = frozenset(n for n, c in private.items() if not c.starts_present)
    base = (absent_aware_base(tracked), schema)
    model = build_model(f"{schema.__name__}Channels", private.values(), base)
    return StateKind("pydantic", schema, model, {**own, **private}, own=list(own), tracked=tracked,
                     managed=managed)


def _root_kind(schema: Any, others: Sequence[Any]) -> StateKind:
    if any(is_field_schema(other) for other in others):
        raise TypeError(
            f"a root-value state ({schema!r}) has one channel and cannot take the channels of "
            f"{[_name(o) for o in others if is_field_schema(o)]}"
        )
    channel = channel_of(ROOT, root_value_type(schema), None)
    tracked = frozenset() if channel.starts_present else frozenset({ROOT})
    model = build_model("RootChannels", [channel], absent_aware_base(tracked))
    return StateKind("root", schema, model, {ROOT: channel}, own=[ROOT], tracked=tracked)


def schema_of(fn: Callable[..., Any]) -> Any | None:
    """The state schema a node function's first parameter is annotated with, or None: LangGraph gives
    such a node that schema's view of the state (and its keys become channels)."""
    return _annotated_schema(fn)


def _schema_of(fn: Callable[..., Any]) -> Any | None:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if not params:
        return None
    annotation = params[0].annotation
    if isinstance(annotation, str):
        annotation = _resolved_hints(fn).get(params[0].name, annotation)
    return annotation if is_field_schema(annotation) and isinstance(annotation, type) else None


_annotated_schema: CodeCache[Any] = CodeCache(_schema_of)


def _resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """String annotations (``from __future__ import annotations``) resolved in the function's module."""
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(target, "__call__", target)  # noqa: B004 - a callable object's method
    try:
        return get_type_hints(target)
    except Exception:
        return {}
