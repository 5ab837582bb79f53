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
they are (a nested model stays a model). One deviation: a pydantic state's ``values`` has every field, where
LangGraph gives only the channels written so far.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any, Literal, NotRequired, Required, get_args, get_origin, get_type_hints

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, TypeAdapter, create_model, model_serializer
from typing_extensions import is_typeddict

from statehitl.channels import INPUT, append
from statehitl.errors import InvalidUpdateError
from statehitl.graph.code_cache import CodeCache

__all__ = ["ROOT", "StateKind", "schema_of", "state_kind"]

ROOT = "root"
"""The one channel of a root-value schema (``StateGraph(Annotated[list, operator.add])``).

LangGraph calls this channel ``__root__``; pydantic refuses a field of that name (it is v1's root-model
spelling), and the engine applies updates by field name, so the channel is the field ``root``."""

Kind = Literal["pydantic", "typeddict", "dataclass", "root"]
Reducer = Callable[[Any, Any], Any]

_MISSING: Any = object()
_REQUIRED_WRAPPERS = (Required, NotRequired)
_ABSTRACT_ZEROS: dict[Any, type] = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


@dataclasses.dataclass(frozen=True)
class _Channel:
    """One channel as a model field: its annotation (reducer in the metadata) and how it starts."""

    name: str
    annotation: Any
    default: Any = None
    factory: Callable[[], Any] | None = None
    starts_present: bool = False
    """A reducer channel with a zero value exists from the start (LangGraph shows ``n: 0``); any other
    channel, even a dataclass field with a default, is absent until written."""


# -- reading a schema ---------------------------------------------------------------------------------


def _kind_of(schema: Any) -> Kind:
    """LangGraph decides by shape too: anything that is not a class of fields is a single root value."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return "pydantic"
    if is_typeddict(schema):
        return "typeddict"
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        return "dataclass"
    return "root"


def _is_field_schema(schema: Any) -> bool:
    return _kind_of(schema) != "root"


def _unrequire(annotation: Any) -> Any:
    """``NotRequired[T]`` -> ``T``, also inside ``Annotated``: presence is tracked, not declared, here."""
    if get_origin(annotation) in _REQUIRED_WRAPPERS:
        return _unrequire(get_args(annotation)[0])
    if get_origin(annotation) is Annotated:
        base, *meta = get_args(annotation)
        inner = _unrequire(base)
        return annotation if inner is base else Annotated[(inner, *meta)]
    return annotation


def _hints(schema: Any) -> dict[str, Any]:
    """The annotated fields of a field schema, in declaration order, with their ``Annotated`` extras."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return {name: _with_metadata(info.annotation, info.metadata) for name, info in schema.model_fields.items()}
    hints = get_type_hints(schema, include_extras=True)
    if dataclasses.is_dataclass(schema):
        return {f.name: _unrequire(hints.get(f.name, Any)) for f in dataclasses.fields(schema)}
    return {name: _unrequire(hint) for name, hint in hints.items()}


def _with_metadata(annotation: Any, metadata: Sequence[Any]) -> Any:
    """Pydantic splits ``Annotated`` into annotation and metadata; a channel needs them together again."""
    base = Any if annotation is None else annotation
    return Annotated[(base, *metadata)] if metadata else base


def _split(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    if get_origin(annotation) is Annotated:
        base, *meta = get_args(annotation)
        return base, tuple(meta)
    return annotation, ()


def _reducer(name: str, meta: tuple[Any, ...]) -> Reducer | None:
    """LangGraph's rule: the last ``Annotated`` item, when callable, merges writes; it must take two
    positional arguments, which is checked now so a wrong reducer fails at compile time, not mid-run."""
    if not meta or not callable(meta[-1]) or isinstance(meta[-1], type):
        return None
    reducer: Reducer = meta[-1]
    try:
        params = inspect.signature(reducer).parameters.values()
    except (TypeError, ValueError):  # some builtins have no signature; trust them
        return reducer
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) != 2 and not any(p.kind is p.VAR_POSITIONAL for p in params):
        raise ValueError(
            f"the reducer of channel {name!r}, {getattr(reducer, '__name__', reducer)!r}, takes "
            f"{inspect.signature(reducer)}; a reducer takes two arguments: (current, new) -> merged"
        )
    return reducer


def _zero_factory(base: Any) -> Callable[[], Any] | None:
    """The type's no-argument constructor when calling it works (``list``, ``int``, ``dict[str, int]``);
    ``Optional[list]``, ``Any`` or a class that needs arguments have none, and such a channel starts absent."""
    while get_origin(base) is not None and isinstance(get_origin(base), type):
        base = get_origin(base)
    base = _ABSTRACT_ZEROS.get(base, base)
    if not isinstance(base, type):
        return None
    try:
        base()
    except Exception:
        return None
    factory: Callable[[], Any] = base
    return factory


def _first_write_as_is(reducer: Reducer) -> Reducer:
    """A channel with no zero value takes its first write as it is, as LangGraph's does; the reducer is
    not asked to merge into the ``None`` that stands for "absent" (``operator.add`` would fail)."""

    @functools.wraps(reducer)
    def merge(current: Any, new: Any) -> Any:
        return new if current is None else reducer(current, new)

    return merge


def _dataclass_default(schema: Any, name: str) -> tuple[Any, Callable[[], Any] | None]:
    """A dataclass field's own default, kept so that the stored model agrees with the dataclass."""
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        for f in dataclasses.fields(schema):
            if f.name == name and f.default is not dataclasses.MISSING:
                return f.default, None
            if f.name == name and f.default_factory is not dataclasses.MISSING:
                return None, f.default_factory
    return None, None


def _channel(name: str, annotation: Any, schema: Any) -> _Channel:
    if name.startswith("_"):
        raise ValueError(
            f"channel {name!r} of {getattr(schema, '__name__', schema)!r} starts with '_': statehitl stores "
            "state as a pydantic model, which cannot have such a field; rename the key"
        )
    base, meta = _split(_unrequire(annotation))
    reducer = _reducer(name, meta)
    if reducer is None:
        default, factory = _dataclass_default(schema, name)
        return _Channel(name, _typed(base, meta), default, factory)
    zero = list if reducer is append else _zero_factory(base)
    if zero is None:
        wrapped = _first_write_as_is(reducer)
        return _Channel(name, _typed(base, (*meta[:-1], wrapped)))
    return _Channel(name, _typed(base, meta), factory=zero, starts_present=True)


def _typed(base: Any, meta: tuple[Any, ...]) -> Any:
    """The field's annotation; a type pydantic cannot validate becomes ``Any`` (the reducer stays)."""
    annotation: Any = Annotated[(base, *meta)] if meta else base
    try:
        TypeAdapter(annotation)
    except Exception:
        return Annotated[(Any, meta[-1])] if meta and callable(meta[-1]) else Any
    return annotation


def _channels(schema: Any) -> dict[str, _Channel]:
    return {name: _channel(name, hint, schema) for name, hint in _hints(schema).items()}


# -- the stored model ---------------------------------------------------------------------------------


def _absent_aware_base(tracked: frozenset[str]) -> type[BaseModel]:
    """A base whose serializer leaves absent channels out of a dump, so that loading a checkpoint does
    not turn "never written" into "written ``None``" (``model_validate`` marks every key it gets as set)."""

    class Channels(BaseModel):
        @model_serializer(mode="wrap")
        def _present_only(self, handler: SerializerFunctionWrapHandler) -> Any:
            dumped = handler(self)
            if not isinstance(dumped, dict):
                return dumped
            written = self.model_fields_set
            return {k: v for k, v in dumped.items() if k not in tracked or k in written}

    return Channels


def _field_definition(channel: _Channel) -> tuple[Any, Any]:
    if channel.factory is not None:
        return channel.annotation, Field(default_factory=channel.factory)
    return channel.annotation, channel.default


def _build_model(name: str, channels: Iterable[_Channel], base: Any) -> type[BaseModel]:
    fields: dict[str, Any] = {c.name: _field_definition(c) for c in channels}
    with warnings.catch_warnings():  # a key like "json" or "schema" shadows a BaseModel method; it still works
        warnings.simplefilter("ignore")
        model: type[BaseModel] = create_model(name, __base__=base, **fields)
    return model


# -- the kind -----------------------------------------------------------------------------------------


View = Callable[[BaseModel], Any]


class StateKind:
    """What a user's state schema is, and the pydantic model the engine stores it as.

    ``node_input`` and ``values`` turn a stored state into what LangGraph code expects; ``update_of`` and
    ``input_of`` turn what it gives back into the ``{field: value}`` updates ``StateSchema`` applies.
    """

    def __init__(self, kind: Kind, schema: Any, model: type[BaseModel], channels: dict[str, _Channel],
                 own: Sequence[str], tracked: frozenset[str]) -> None:
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
        self._views: dict[Any, View] = {}
        self._own_view = self._view_for(schema, own)

    def __repr__(self) -> str:
        return f"StateKind({self.kind!r}, {getattr(self.schema, '__name__', self.schema)!r})"

    # -- what nodes and callers see ---------------------------------------------------------------

    def node_input(self, state: BaseModel, wants: Any = None) -> Any:
        """What a node gets: the state schema's view, or the view of the schema its first parameter is
        annotated with (only that schema's channels)."""
        if wants is None or wants is self.schema:
            return state if self._native else self._own_view(state)
        return self._view(wants)(state)

    def values(self, state: BaseModel, only: Any = None) -> Any:
        """LangGraph's ``values`` of a result or snapshot: the channels present, as a dict (a root
        state's value itself); ``only`` (an output schema) keeps that schema's channels."""
        if only is not None and only is not self.schema:
            return self._present(state, self._keys_of(only))
        if self.kind == "root":
            return getattr(state, ROOT)
        if self.kind == "pydantic":
            stored = state.__dict__  # (a state before any input may lack required fields)
            return {k: stored[k] for k in self._own if k in stored}
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
        return self._known_only(fields, self._known, f"{_writer(who)} wrote")

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
        return self._known_only(fields, self._own_input if keys is None else keys, "the input has")

    # -- helpers --------------------------------------------------------------------------------------

    def _known_only(self, fields: dict[str, Any], keys: frozenset[str], who: str) -> dict[str, Any]:
        """``fields`` without the keys not in ``keys``; a state that forbids extras refuses them instead."""
        for key in fields:
            if key not in keys:
                break
        else:
            return fields
        if self.forbids_extra:
            raise InvalidUpdateError(
                f"{who} unknown channel(s) {[k for k in fields if k not in keys]}; {_name(self.schema)} forbids "
                f"extra fields and has {sorted(keys)}"
            )
        return {k: v for k, v in fields.items() if k in keys}

    def _present(self, state: BaseModel, keys: Iterable[str]) -> dict[str, Any]:
        """The channels among ``keys`` that exist: written, or present from the start."""
        written, stored, always = state.model_fields_set, state.__dict__, self._always
        return {k: stored[k] for k in keys if k in written or k in always}

    def _keys_of(self, schema: Any) -> tuple[str, ...]:
        if not _is_field_schema(schema):
            raise TypeError(f"{schema!r} is not a state schema (a TypedDict, dataclass or pydantic model)")
        keys = tuple(_hints(schema))
        missing = [k for k in keys if k not in self.channels]
        if missing:
            raise ValueError(
                f"{_name(schema)} has key(s) {missing} that are not channels of the state; pass it in "
                "state_kind(..., extra=[...])"
            )
        return keys

    def _view(self, schema: Any) -> View:
        view = self._views.get(schema)
        if view is None:
            view = self._views[schema] = self._view_for(schema, self._keys_of(schema))
        return view

    def _view_for(self, schema: Any, keys: Sequence[str]) -> View:
        """How to build one schema's view from a state, decided once per schema rather than per call."""
        keys = tuple(keys)
        kind = _kind_of(schema)
        if kind == "root":
            return lambda state: getattr(state, ROOT)
        if kind == "typeddict":
            return lambda state: self._present(state, keys)
        if kind == "dataclass":
            init = tuple(f.name for f in dataclasses.fields(schema) if f.init)
            return lambda state: schema(**self._present(state, init))
        if schema is self.schema:  # the user's own model, stored as a subclass with the private channels
            return lambda state: schema.model_construct(
                state.model_fields_set & set(keys), **{k: getattr(state, k) for k in keys}
            )
        return lambda state: schema.model_validate(self._present(state, keys))


def _aliases(model: type[BaseModel]) -> frozenset[str]:
    """A pydantic state takes its input under a field's alias too (``StateSchema.initial`` does)."""
    return frozenset(info.alias for info in model.model_fields.values() if info.alias)


def _fields_of(obj: Any) -> dict[str, Any] | None:
    """A model's set fields (its defaults would overwrite what others wrote), a dataclass's every field."""
    if isinstance(obj, BaseModel):
        return {name: getattr(obj, name) for name in obj.model_fields_set}
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
    kind = _kind_of(schema)
    if kind == "root":
        return _root_kind(schema, others)
    own = _channels(schema)
    private: dict[str, _Channel] = {}
    for other in others:
        if not _is_field_schema(other):
            raise TypeError(f"{other!r} is not a state schema (a TypedDict, dataclass or pydantic model)")
        for name, channel in _channels(other).items():
            if name not in own and name not in private:
                private[name] = channel
    if kind == "pydantic":
        return _pydantic_kind(schema, own, private)
    channels = {**own, **private}
    tracked = frozenset(n for n, c in channels.items() if not c.starts_present)
    model = _build_model(f"{_name(schema)}Channels", channels.values(), _absent_aware_base(tracked))
    return StateKind(kind, schema, model, channels, list(own), tracked)


def _pydantic_kind(schema: type[BaseModel], own: dict[str, _Channel], private: dict[str, _Channel]) -> StateKind:
    """The user's model is the stored model when it has every channel: the engine's native, zero-cost
    path. Private channels make it a subclass, so validators and reducers of the user's fields still hold."""
    if not private:
        return StateKind("pydantic", schema, schema, own, list(own), frozenset())
    tracked = frozenset(n for n, c in private.items() if not c.starts_present)
    base = (_absent_aware_base(tracked), schema)
    model = _build_model(f"{schema.__name__}Channels", private.values(), base)
    return StateKind("pydantic", schema, model, {**own, **private}, list(own), tracked)


def _root_kind(schema: Any, others: Sequence[Any]) -> StateKind:
    if any(_is_field_schema(other) for other in others):
        raise TypeError(
            f"a root-value state ({schema!r}) has one channel and cannot take the channels of "
            f"{[_name(o) for o in others if _is_field_schema(o)]}"
        )
    channel = _channel(ROOT, schema, None)
    tracked = frozenset() if channel.starts_present else frozenset({ROOT})
    model = _build_model("RootChannels", [channel], _absent_aware_base(tracked))
    return StateKind("root", schema, model, {ROOT: channel}, [ROOT], tracked)


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
    return annotation if _is_field_schema(annotation) and isinstance(annotation, type) else None


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
