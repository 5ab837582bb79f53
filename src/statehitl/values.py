"""Values JSON cannot hold, stored as tagged JSON and given back as they were; anything else refused.

LangGraph users keep datetimes, UUIDs, sets, Decimals and bytes in state, in ``Send`` arguments and in
answers (``Command(resume=...)``). JSON holds none of them, and pydantic's JSON turns each into
something else without a word (NaN into ``null``, bytes and datetimes into ``str``, a set into a list).
Records stay JSON: such a value is stored as a small tagged object, ``{"$t": TAG, "v": ...}``, from a
fixed set of tags, and read back into the value it was:

==============  =============================================  ===============================
tag             what                                           ``v``
==============  =============================================  ===============================
``float``       NaN, inf, -inf                                 ``"nan"``, ``"inf"``, ``"-inf"``
``bytes``       ``bytes`` (``bytearray``: ``bytearray``)       base64
``datetime``    ``datetime`` (naive or aware)                  ISO 8601, microseconds kept
``date``        ``date``                                       ISO 8601
``time``        ``time``                                       ISO 8601
``timedelta``   ``timedelta``                                  ``[days, seconds, microseconds]``
``uuid``        ``UUID``                                       its text
``decimal``     ``Decimal`` (NaN, infinities, -0 too)          its text
``complex``     ``complex``                                    ``[real, imag]``
``path``        a ``pathlib`` path: ``Path`` (this system's),  ``{"flavour": ..., "path": ...}``
                ``PurePosixPath``, ``PureWindowsPath``
``ip``          an ``ipaddress`` address, network or           ``{"kind": ..., "text": ...}``
                interface (v4 or v6)
``tuple``       ``tuple``                                      its items
``set``         ``set``, ``frozenset`` (``frozenset``)         its items, in a stable order
``dict``        a dict with keys other than ``str``, or with   ``[[key, value], ...]``
                a key ``"$t"`` of its own
``enum``        an ``Enum`` member of a known class            ``{"type": name, "value": ...}``
``model``       a pydantic model or dataclass of a known class ``{"type": name, "fields": ...}``
==============  =============================================  ===============================

Never is a class constructed because the data names it: a ``model`` or ``enum`` tag is read back only
into a class of a closed table the code made (``ValueTypes``): the classes the state's schema names (its
fields' annotations, through the models they name), and those registered with ``register``. A name
the table lacks is a ``CheckpointCorruptError``, never an import. Anything else that is not JSON (an
open file, an object of an unregistered class) is refused where it is written, with
``ValueNotStorableError`` naming where and what (the node and channel, the Send, the answer). A
``str``/``int`` enum of no known class is stored as its value, which it equals.

What a value costs: a channel whose type pydantic gives back faithfully on its own (``str``, ``int``,
``list[str]``, ``datetime``, a model of such fields: ``needs_tags`` says) is stored by pydantic's JSON
as before, with no walk of its value. Only a channel that may hold what pydantic's JSON would change
(``Any``, ``float``, ``bytes``, a bare ``list``...) is walked as it is written and read.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import ipaddress
import json
import math
import pathlib
import types
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter

from statehitl.errors import CheckpointCorruptError, NestingTooDeepError, NotJSONError, ValueNotStorableError
from statehitl.json_depth import MAX_NESTING, too_deep

__all__ = ["TAG", "ValueTypes", "as_json", "decode_value", "encode_value", "needs_tags", "register"]

TAG = "$t"
"""The key that marks a tagged value: ``{"$t": tag, "v": payload}``, exactly those two keys."""

C = TypeVar("C", bound=type)

_REGISTERED: dict[str, type] = {}


def register(cls: C, *, name: str | None = None) -> C:
    """Let instances of ``cls`` (a pydantic model, a dataclass or an ``Enum``) be stored anywhere a value
    may be (an ``Any`` channel, a ``Send`` argument, an answer) and be read back as ``cls``, under ``name``
    (default ``module.QualName``). Usable as a class decorator. Every process that reads them must
    register the same name: the data names the class, the registration decides what that name may be."""
    if not (isinstance(cls, type) and (issubclass(cls, BaseModel | enum.Enum) or dataclasses.is_dataclass(cls))):
        raise TypeError(f"register takes a pydantic model, a dataclass or an Enum class, not {cls!r}")
    key = name or _name(cls)
    if _REGISTERED.get(key, cls) is not cls:
        raise ValueError(f"{key!r} is registered already, for {_REGISTERED[key]!r}")
    _REGISTERED[key] = cls
    return cls


class ValueTypes:
    """The closed table of classes a tagged value may be read back into: ``classes`` (those a schema names)
    and every registered one. Names are ``module.QualName`` unless registered under another."""

    def __init__(self, classes: Iterable[type] = ()) -> None:
        self._own = {_name(cls): cls for cls in classes}

    def name_of(self, cls: type) -> str | None:
        for name, known in self._own.items():
            if known is cls:
                return name
        return next((name for name, known in _REGISTERED.items() if known is cls), None)

    def class_of(self, name: str) -> type | None:
        return self._own.get(name) or _REGISTERED.get(name)

    @classmethod
    def of_annotations(cls, annotations: Iterable[Any]) -> ValueTypes:
        """The table of the models, dataclasses and enums ``annotations`` name, through their fields."""
        found: dict[type, None] = {}
        for annotation in annotations:
            _collect(annotation, found)
        return cls(found)


_NO_TYPES = ValueTypes()


def encode_value(value: Any, where: str, known: ValueTypes = _NO_TYPES, *,
                 error: type[NotJSONError] = ValueNotStorableError) -> Any:
    """``value`` as JSON data: plain JSON as it is, the standard types above tagged. ``error`` (by default
    ``ValueNotStorableError``) naming ``where`` (and the path inside the value) for anything else;
    ``NestingTooDeepError`` past ``MAX_NESTING`` levels."""
    try:
        return _Encoder(where, known).encode(value, "$", 0)
    except ValueNotStorableError as refused:
        if error is ValueNotStorableError:
            raise
        raise error(str(refused)) from None


def decode_value(data: Any, known: ValueTypes = _NO_TYPES) -> Any:
    """What ``encode_value`` was given, from what it returned (data without tags comes back as it is)."""
    kind = type(data)
    if kind is list:
        return [decode_value(item, known) for item in data]
    if kind is not dict:
        return data
    if TAG in data:
        return _decode_tagged(data, known)
    return {key: decode_value(item, known) for key, item in data.items()}


def as_json(value: Any) -> Any:
    """A value (as given, or as stored with tags) in the JSON form a JSON schema describes it by: a datetime
    as its ISO text, a set as a list, as pydantic's JSON writes them (what a typed answer is checked as)."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(decode_value(value), inf_nan_mode="constants")


class _Encoder:
    def __init__(self, where: str, known: ValueTypes) -> None:
        self.where = where
        self.known = known

    def encode(self, value: Any, path: str, depth: int) -> Any:
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            return value
        if kind is float:
            return value if math.isfinite(value) else {TAG: "float", "v": str(value)}
        if depth >= MAX_NESTING:
            raise NestingTooDeepError(f"{self.where}: {too_deep(path)}")
        if kind is list:
            return [self.encode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if kind is dict:
            return self.mapping(value, path, depth)
        encode = _ENCODERS.get(kind)
        if encode is not None:
            return encode(self, value, path, depth)
        return self.other(value, path, depth)

    def mapping(self, value: Mapping[Any, Any], path: str, depth: int) -> Any:
        if all(type(key) is str for key in value) and TAG not in value:
            return {key: self.encode(item, f"{path}.{key}", depth + 1) for key, item in value.items()}
        return {TAG: "dict", "v": [[self.encode(key, f"{path} key {key!r}", depth + 2),
                                    self.encode(item, f"{path}[{key!r}]", depth + 2)] for key, item in value.items()]}

    def items(self, tag: str, value: Iterable[Any], path: str, depth: int) -> Any:
        return {TAG: tag, "v": [self.encode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]}

    def unordered(self, tag: str, value: Iterable[Any], path: str, depth: int) -> Any:
        items = [self.encode(item, f"{path} item", depth + 1) for item in value]
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))  # a set's order is no property of it
        return {TAG: tag, "v": items}

    def other(self, value: Any, path: str, depth: int) -> Any:
        """Subclasses of the types above, enums, models, dataclasses; else the refusal."""
        if isinstance(value, enum.Enum):
            return self.member(value, path, depth)
        if isinstance(value, BaseModel) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            return self.instance(value, path, depth)
        for base in _BASES:
            if isinstance(value, base):  # an OrderedDict, a NamedTuple, a str subclass: stored as the base type
                as_base: Any = base
                return self.encode(as_base(value), path, depth)
        if isinstance(value, datetime.datetime):  # a subclass (a pandas Timestamp): as a datetime
            return {TAG: "datetime", "v": value.isoformat()}
        if isinstance(value, datetime.date):
            return {TAG: "date", "v": value.isoformat()}
        raise self.refused(value, path)

    def member(self, value: enum.Enum, path: str, depth: int) -> Any:
        name = self.known.name_of(type(value))
        if name is not None:
            return {TAG: "enum", "v": {"type": name, "value": self.encode(value.value, path, depth + 1)}}
        if isinstance(value, str | int):  # a StrEnum/IntEnum of no known class: its value, which it equals
            return self.encode(str(value.value) if isinstance(value, str) else int(value.value), path, depth)
        raise self.refused(value, path)

    def instance(self, value: Any, path: str, depth: int) -> Any:
        name = self.known.name_of(type(value))
        if name is None:
            raise self.refused(value, path)
        if isinstance(value, BaseModel):
            fields = {key: getattr(value, key) for key in type(value).model_fields}
            fields.update(value.model_extra or {})
        else:
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {TAG: "model", "v": {"type": name, "fields": self.mapping(fields, path, depth + 1)}}

    def refused(self, value: Any, path: str) -> ValueNotStorableError:
        kind = type(value)
        detail = "" if path == "$" else f" at {path}"
        named = ("annotate the channel with its type (a model or dataclass the state's schema names is stored "
                 "as such) or register it with statehitl.values.register(...)"
                 if isinstance(value, BaseModel | enum.Enum) or dataclasses.is_dataclass(value)
                 else "store JSON (str, int, float, bool, None, lists, dicts), a standard type (datetime, date, "
                      "time, timedelta, UUID, Decimal, bytes, set, frozenset, tuple, complex), or a model, "
                      "dataclass or Enum the schema names or statehitl.values.register(...) names")
        return ValueNotStorableError(f"{self.where} cannot be stored:{detail} it holds a {kind.__module__}."
                                     f"{kind.__qualname__} ({_short(value)}); {named}. Nothing was stored")


_BASES: tuple[type, ...] = (dict, list, tuple, set, frozenset, str, int, float, bytes)


def _encode_bytes(encoder: _Encoder, value: Any, path: str, depth: int) -> Any:
    tag = "bytearray" if isinstance(value, bytearray) else "bytes"
    return {TAG: tag, "v": base64.b64encode(bytes(value)).decode("ascii")}


_ENCODERS: dict[type, Callable[[_Encoder, Any, str, int], Any]] = {
    tuple: lambda e, v, p, d: e.items("tuple", v, p, d),
    set: lambda e, v, p, d: e.unordered("set", v, p, d),
    frozenset: lambda e, v, p, d: e.unordered("frozenset", v, p, d),
    bytes: _encode_bytes,
    bytearray: _encode_bytes,
    datetime.datetime: lambda e, v, p, d: {TAG: "datetime", "v": v.isoformat()},
    datetime.date: lambda e, v, p, d: {TAG: "date", "v": v.isoformat()},
    datetime.time: lambda e, v, p, d: {TAG: "time", "v": v.isoformat()},
    datetime.timedelta: lambda e, v, p, d: {TAG: "timedelta", "v": [v.days, v.seconds, v.microseconds]},
    uuid.UUID: lambda e, v, p, d: {TAG: "uuid", "v": str(v)},
    decimal.Decimal: lambda e, v, p, d: {TAG: "decimal", "v": str(v)},
    complex: lambda e, v, p, d: {TAG: "complex", "v": [_float(v.real), _float(v.imag)]},
}


_PATHS: dict[str, type[pathlib.PurePath]] = {
    "native": pathlib.Path, "posix": pathlib.PurePosixPath, "windows": pathlib.PureWindowsPath}
"""A path's flavour as stored, and the one class it is read back as: a concrete path (``PosixPath`` or
``WindowsPath``) is this system's ``Path`` when read, a pure path stays the pure path it was."""
_IPS: dict[str, Callable[[str], Any]] = {
    "address": ipaddress.ip_address, "network": ipaddress.ip_network, "interface": ipaddress.ip_interface}
"""How an ``ipaddress`` value is stored and parsed back: the text says v4 or v6, so no class is named."""


def _encode_path(encoder: _Encoder, value: Any, path: str, depth: int) -> Any:
    flavour = "native" if isinstance(value, pathlib.Path) else (
        "windows" if isinstance(value, pathlib.PureWindowsPath) else "posix")
    return {TAG: "path", "v": {"flavour": flavour, "path": str(value)}}


def _encode_ip(encoder: _Encoder, value: Any, path: str, depth: int) -> Any:
    kind = "interface" if isinstance(value, ipaddress.IPv4Interface | ipaddress.IPv6Interface) else (
        "network" if isinstance(value, ipaddress.IPv4Network | ipaddress.IPv6Network) else "address")
    return {TAG: "ip", "v": {"kind": kind, "text": str(value)}}


_ENCODERS.update({kind: _encode_path for kind in (pathlib.PosixPath, pathlib.WindowsPath, pathlib.PurePosixPath,
                                                   pathlib.PureWindowsPath)})
_ENCODERS.update({kind: _encode_ip for kind in (ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network,
                                                ipaddress.IPv6Network, ipaddress.IPv4Interface,
                                                ipaddress.IPv6Interface)})


def _float(number: float) -> Any:
    return number if math.isfinite(number) else str(number)


def _unfloat(number: Any) -> float:
    return float(number)


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "float": lambda v: float(v) if v in ("nan", "inf", "-inf") else _bad(v),
    "bytes": lambda v: base64.b64decode(v, validate=True),
    "bytearray": lambda v: bytearray(base64.b64decode(v, validate=True)),
    "datetime": datetime.datetime.fromisoformat,
    "date": datetime.date.fromisoformat,
    "time": datetime.time.fromisoformat,
    "timedelta": lambda v: datetime.timedelta(days=v[0], seconds=v[1], microseconds=v[2]),
    "uuid": uuid.UUID,
    "decimal": decimal.Decimal,
    "complex": lambda v: complex(_unfloat(v[0]), _unfloat(v[1])),
    "path": lambda v: _PATHS[v["flavour"]](v["path"]),
    "ip": lambda v: _IPS[v["kind"]](v["text"]),
}

_CONTAINERS: dict[str, Callable[[list[Any]], Any]] = {"tuple": tuple, "set": set, "frozenset": frozenset}


def _decode_tagged(data: dict[str, Any], known: ValueTypes) -> Any:
    tag = data[TAG]
    if set(data) != {TAG, "v"} or not isinstance(tag, str):
        return {key: decode_value(item, known) for key, item in data.items()}  # a dict of a time before tags
    payload = data["v"]
    try:
        if tag in _DECODERS:
            return _DECODERS[tag](payload)
        if tag in _CONTAINERS:
            return _CONTAINERS[tag]([decode_value(item, known) for item in payload])
        if tag == "dict":
            return {decode_value(key, known): decode_value(item, known) for key, item in payload}
        if tag in ("enum", "model"):
            return _decode_class(tag, payload, known)
    except CheckpointCorruptError:
        raise
    except Exception as exc:
        raise CheckpointCorruptError(f"a stored {tag!r} value is malformed ({type(exc).__name__}: {exc})") from None
    return {key: decode_value(item, known) for key, item in data.items()}  # a tag of no statehitl: a plain dict


def _decode_class(tag: str, payload: dict[str, Any], known: ValueTypes) -> Any:
    cls = known.class_of(payload["type"])
    if cls is None:
        raise CheckpointCorruptError(
            f"a stored value is an instance of {payload['type']!r}, which neither the state's schema names nor "
            "statehitl.values.register(...) registered in this process: register it here too")
    if tag == "enum":
        return cls(decode_value(payload["value"], known))
    fields = {key: decode_value(item, known) for key, item in _as_dict(payload["fields"], known).items()}
    return _adapter(cls).validate_python(fields)


def _as_dict(fields: Any, known: ValueTypes) -> dict[str, Any]:
    found = decode_value(fields, known) if isinstance(fields, dict) and TAG in fields else fields
    if not isinstance(found, dict):
        raise CheckpointCorruptError("a stored model's fields are not an object")
    return found


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def _bad(value: Any) -> Any:
    raise ValueError(f"{value!r} is not nan, inf or -inf")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


# -- what a channel's type asks for ---------------------------------------------------------------------

_FAITHFUL: frozenset[Any] = frozenset({
    str, int, bool, type(None), None, datetime.datetime, datetime.date, datetime.time, datetime.timedelta,
    uuid.UUID, decimal.Decimal, pathlib.Path, pathlib.PurePosixPath, pathlib.PureWindowsPath,
    ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network, ipaddress.IPv6Network,
    ipaddress.IPv4Interface, ipaddress.IPv6Interface,
})
"""Types pydantic's JSON gives back as they were, when the channel's type says which they are."""


def needs_tags(annotation: Any, _seen: frozenset[Any] = frozenset()) -> bool:
    """Whether values of a channel of type ``annotation`` may hold what pydantic's JSON would change (NaN,
    bytes, anything in an ``Any``): such a channel is walked as it is written (``encode_value``)."""
    if _hashable_in(annotation, _FAITHFUL) or _hashable_in(annotation, _seen):
        return False
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return needs_tags(typing.get_args(annotation)[0], _seen)
    if origin is typing.Literal:
        return False
    if origin is not None:
        args = typing.get_args(annotation)
        return not args or any(needs_tags(arg, _seen) for arg in args if arg is not Ellipsis)
    if isinstance(annotation, types.UnionType):
        return any(needs_tags(arg, _seen) for arg in typing.get_args(annotation))
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return False
        fields = _field_types(annotation)
        if fields is not None:
            return any(needs_tags(field, _seen | {annotation}) for field in fields)
    return True  # Any, object, float, bytes, bare containers, classes pydantic takes as they are


def _hashable_in(annotation: Any, found: frozenset[Any]) -> bool:
    try:
        return annotation in found
    except TypeError:  # an annotation with unhashable metadata
        return False


def _field_types(cls: type) -> list[Any] | None:
    """The field annotations of a model, dataclass or TypedDict class (None for other classes)."""
    if issubclass(cls, BaseModel):
        return [Any if info.annotation is None else info.annotation for info in cls.model_fields.values()]
    if dataclasses.is_dataclass(cls) or typing.is_typeddict(cls):
        try:
            return list(typing.get_type_hints(cls, include_extras=True).values())
        except (NameError, TypeError):
            return [Any]
    return None


def _collect(annotation: Any, found: dict[type, None]) -> None:
    """Add the models, dataclasses and enums ``annotation`` names (and their fields name) to ``found``."""
    if isinstance(annotation, type):
        if annotation in found:
            return
        if issubclass(annotation, enum.Enum) or issubclass(annotation, BaseModel) or dataclasses.is_dataclass(
                annotation):
            found[annotation] = None
        for field in _field_types(annotation) or ():
            _collect(field, found)
        return
    for arg in typing.get_args(annotation):
        _collect(arg, found)
