"""A LangGraph state schema's channels, read from its annotations, and the pydantic model that stores them.

Each field of a TypedDict, dataclass or pydantic schema is a channel: its type, its reducer (the last
``Annotated`` item that merges two writes), how it starts (a reducer channel at its type's zero value,
any other absent), or a managed key (``statehitl.managed``), which the run fills in and nothing stores.
``build_model`` makes the model one field per channel, whose dump leaves absent channels out
(``state_kinds`` explains why that matters).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any, Literal, NotRequired, Required, get_args, get_origin, get_type_hints

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, TypeAdapter, create_model, model_serializer
from typing_extensions import is_typeddict

from statehitl.channels import append
from statehitl.channels.base import BaseChannel
from statehitl.managed import ManagedValue, managed_value

Kind = Literal["pydantic", "typeddict", "dataclass", "root"]
Reducer = Callable[[Any, Any], Any]

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
class Channel:
    """One channel as a model field: its annotation (reducer in the metadata) and how it starts."""

    name: str
    annotation: Any
    default: Any = None
    factory: Callable[[], Any] | None = None
    starts_present: bool = False
    """A reducer channel with a zero value exists from the start (LangGraph shows ``n: 0``); any other
    channel, even a dataclass field with a default, is absent until written."""


# -- reading a schema ---------------------------------------------------------------------------------


def kind_of(schema: Any) -> Kind:
    """LangGraph decides by shape too: anything that is not a class of fields is a single root value."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return "pydantic"
    if is_typeddict(schema):
        return "root" if list(getattr(schema, "__annotations__", {})) == [LEGACY_ROOT] else "typeddict"
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        return "dataclass"
    return "root"


LEGACY_ROOT = "__root__"
"""A TypedDict whose one key is ``__root__`` is LangGraph's older spelling of a root-value state."""


def root_value_type(schema: Any) -> Any:
    """What a root-value state holds: the schema itself (``Annotated[list, operator.add]``), or the annotation
    of a ``__root__``-only TypedDict's key."""
    if is_typeddict(schema):
        return get_type_hints(schema, include_extras=True)[LEGACY_ROOT]
    return schema


def is_field_schema(schema: Any) -> bool:
    return kind_of(schema) != "root"


def unrequire(annotation: Any) -> Any:
    """``NotRequired[T]`` -> ``T``, also inside ``Annotated``: presence is tracked, not declared, here."""
    if get_origin(annotation) in _REQUIRED_WRAPPERS:
        return unrequire(get_args(annotation)[0])
    if get_origin(annotation) is Annotated:
        base, *meta = get_args(annotation)
        inner = unrequire(base)
        return annotation if inner is base else Annotated[(inner, *meta)]
    return annotation


def hints_of(schema: Any) -> dict[str, Any]:
    """The annotated fields of a field schema, in declaration order, with their ``Annotated`` extras."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return {name: _with_metadata(info.annotation, info.metadata) for name, info in schema.model_fields.items()}
    hints = get_type_hints(schema, include_extras=True)
    if dataclasses.is_dataclass(schema):
        return {f.name: unrequire(hints.get(f.name, Any)) for f in dataclasses.fields(schema)}
    return {name: unrequire(hint) for name, hint in hints.items()}


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
            f"Invalid reducer for channel {name!r}: {getattr(reducer, '__name__', reducer)!r} takes "
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


def is_messages_reducer(reducer: Callable[..., Any] | None) -> bool:
    """Whether a channel's reducer is ``add_messages`` (or one of its ``format=`` variants), which marks itself."""
    return bool(getattr(reducer, "merges_messages", False))


def channel_of(name: str, annotation: Any, schema: Any) -> Channel:
    """The channel a field of ``schema`` annotated ``annotation`` is (``schema`` None for a root value)."""
    if name.startswith("_"):
        raise ValueError(
            f"channel {name!r} of {getattr(schema, '__name__', schema)!r} starts with '_': statehitl stores "
            "state as a pydantic model, which cannot have such a field; rename the key"
        )
    base, meta = _split(unrequire(annotation))
    base, meta = _channel_marker(base, meta)
    reducer = _reducer(name, meta)
    if reducer is None:
        default, factory = _dataclass_default(schema, name)
        return Channel(name, _typed(base, meta), default, factory)
    if is_messages_reducer(reducer):  # held and stored in the message forms, whatever the list's item type says
        from statehitl.graph.message_forms import MessageList  # loaded by the graphs that have messages

        return Channel(name, Annotated[(MessageList, *meta)], factory=list, starts_present=True)
    zero = list if reducer is append else _zero_factory(base)
    if zero is None:
        wrapped = _first_write_as_is(reducer)
        return Channel(name, _typed(base, (*meta[:-1], wrapped)))
    return Channel(name, _typed(base, meta), factory=zero, starts_present=True)


def _channel_marker(base: Any, meta: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """LangGraph's ``Annotated[T, UntrackedValue]`` (a channel class, or an instance) names the channel itself:
    its annotation replaces the marker (``UntrackedValue``: never stored; ``EphemeralValue``: one step's
    write). A channel that turns a write into something else (``Topic``) is not read so, nor one whose class
    needs more than the value type to be made."""
    if not meta or not (isinstance(meta[-1], BaseChannel) or
                        (isinstance(meta[-1], type) and issubclass(meta[-1], BaseChannel))):
        return base, meta
    marker = meta[-1]
    try:
        channel = marker if isinstance(marker, BaseChannel) else marker(base)
    except TypeError:
        return base, meta
    if type(channel).stored is not BaseChannel.stored:
        return base, meta
    channel_base, channel_meta = _split(channel.annotation())
    return channel_base, (*meta[:-1], *channel_meta)


def _typed(base: Any, meta: tuple[Any, ...]) -> Any:
    """The field's annotation; a type pydantic cannot validate becomes ``Any`` (the reducer stays)."""
    annotation: Any = Annotated[(base, *meta)] if meta else base
    try:
        TypeAdapter(annotation)
    except Exception:
        return Annotated[(Any, meta[-1])] if meta and callable(meta[-1]) else Any
    return annotation


def channels_of(schema: Any) -> dict[str, Channel]:
    """A field schema's channels, in declaration order: every field but its managed keys."""
    return {name: channel_of(name, hint, schema) for name, hint in hints_of(schema).items()
            if managed_value(unrequire(hint)) is None}


def managed_of(schema: Any) -> dict[str, type[ManagedValue]]:
    """The keys the run fills in (``RemainingSteps``...): not channels, never stored."""
    found = {name: managed_value(unrequire(hint)) for name, hint in hints_of(schema).items()}
    return {name: manager for name, manager in found.items() if manager is not None}


# -- the stored model ---------------------------------------------------------------------------------


def absent_aware_base(tracked: frozenset[str]) -> type[BaseModel]:
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


def _field_definition(channel: Channel) -> tuple[Any, Any]:
    if channel.factory is not None:
        return channel.annotation, Field(default_factory=channel.factory)
    return channel.annotation, channel.default


def build_model(name: str, channels: Iterable[Channel], base: Any) -> type[BaseModel]:
    """The model that stores ``channels``, one field each, on ``base`` (``absent_aware_base``, and the user's
    model when it is a pydantic state)."""
    fields: dict[str, Any] = {c.name: _field_definition(c) for c in channels}
    with warnings.catch_warnings():  # a key like "json" or "schema" shadows a BaseModel method; it still works
        warnings.simplefilter("ignore")
        model: type[BaseModel] = create_model(name, __base__=base, **fields)
    return model


def kept_state_channel(node: str) -> str:
    """The parent's private channel where node ``node`` keeps the state of the subgraph compiled with
    ``checkpointer=True`` that it is (the state itself), or that it invokes (``{call order: state}``)."""
    return "subgraph_state_" + re.sub(r"\W", "_", node)
