"""A small JSON Schema checker for the schemas pydantic writes, so a typed answer is checked at resume.

An interrupt stores the JSON schema of the response it expects (``Interrupt.response_schema``). A
resume must refuse a wrong answer before it claims the thread, when the code that holds the
response's Python type has not run yet (it runs when the handler re-runs its ``interrupt(...)``). The
stored schema is all there is then, so this checks a value against it.

It covers what pydantic's ``TypeAdapter.json_schema()`` and a tool's ``inputSchema`` use: ``type``,
``enum``, ``const``, ``properties``/``required``/``additionalProperties``, ``items``/``prefixItems``,
``anyOf``/``oneOf``/``allOf``, local ``$ref``, and the numeric, length and pattern bounds. Keywords
it does not know are ignored rather than guessed at: the handler's own ``TypeAdapter`` validation on
re-run stays the authoritative check (a custom validator, a format), and refuses before anything is
committed. A dependency on ``jsonschema`` would buy the rarer keywords at the cost of one more package
for every install; the re-run check makes them unnecessary for correctness.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["schema_errors"]

_MAX_STEPS = 100_000
"""Schema nodes one check may visit: a response is small, so only a self-referencing or explosive schema
gets near it, and the check stops there rather than hang the resume."""


_MAX_NESTING = 100


@dataclass
class _Walk:
    """One check: the whole schema (what ``$ref`` resolves against) and the nodes visited so far."""

    schema: Any
    steps: int = 0
    nesting: int = 0
    """References being followed right now, one inside the other."""


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list, tuple),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_errors(value: Any, schema: Any, *, limit: int = 5) -> list[str]:
    """What is wrong with ``value`` under ``schema`` (a JSON schema dict), as ``"at <path>: ..."`` lines;
    empty when it conforms. At most ``limit`` lines, the first ones found."""
    errors: list[str] = []
    _check(value, schema, _Walk(schema), "$", errors)
    return errors[:limit]


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and not (
            isinstance(value, float) and not math.isfinite(value))
    kinds = _TYPES.get(name)
    return True if kinds is None else isinstance(value, kinds)


def _resolve(ref: str, root: _Walk) -> Any:
    if not ref.startswith("#/"):
        return {}  # a remote reference: not followed (the re-run check decides)
    node = root.schema
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    return node


def _check(value: Any, schema: Any, root: _Walk, path: str, errors: list[str]) -> None:
    root.steps += 1
    if schema is True or not isinstance(schema, dict) or root.steps > _MAX_STEPS:
        return  # past the work limit (a reference to itself, a huge union): left to the re-run check
    if "$ref" in schema and root.nesting < _MAX_NESTING:  # else a reference cycle: left to the re-run check
        root.nesting += 1
        _check(value, _resolve(schema["$ref"], root), root, path, errors)
        root.nesting -= 1
    kind = schema.get("type")
    if kind is not None:
        names = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(value, n) for n in names):
            errors.append(f"at {path}: expected {' or '.join(names)}, got {_describe(value)}")
            return
    if "const" in schema and not _same(value, schema["const"]):
        errors.append(f"at {path}: expected {schema['const']!r}, got {_describe(value)}")
    if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
        choices = ", ".join(repr(v) for v in schema["enum"])
        errors.append(f"at {path}: expected one of {choices}, got {_describe(value)}")
    tagged = _tagged_option(value, schema, root, path, errors)
    if tagged is not None:
        _check(value, tagged, root, path, errors)
    else:
        for word in ("anyOf", "oneOf"):
            if word in schema:
                errors.extend(_closest_problems(value, schema[word], root, path))
    for option in schema.get("allOf", ()):
        _check(value, option, root, path, errors)
    if isinstance(value, dict):
        _check_object(value, schema, root, path, errors)
    elif isinstance(value, list | tuple):
        _check_array(list(value), schema, root, path, errors)
    elif isinstance(value, str):
        _check_string(value, schema, path, errors)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(value, schema, path, errors)


def _closest_problems(value: Any, options: list[Any], root: _Walk, path: str) -> list[str]:
    """Nothing when ``value`` fits one of a union's ``options``; else the problems of the closest shape (of the
    value's JSON type, then with fewest problems), which is almost always the one meant."""
    closest: tuple[int, list[str]] | None = None
    for option in options:
        problems = _errors_in(value, option, root, path)
        if not problems:
            return []
        distance = (0 if _type_fits(value, option, root) else 1, len(problems))
        if closest is None or distance < (closest[0], len(closest[1])):
            closest = (distance[0], problems)
    return closest[1] if closest is not None else []


def _type_fits(value: Any, schema: Any, root: _Walk) -> bool:
    for _ in range(_MAX_STEPS):  # bounded: a reference may point at itself
        if not (isinstance(schema, dict) and "$ref" in schema and "type" not in schema):
            break
        schema = _resolve(schema["$ref"], root)
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind is None:
        return True
    return any(_is_type(value, n) for n in (kind if isinstance(kind, list) else [kind]))


def _tagged_option(value: Any, schema: dict[str, Any], root: _Walk, path: str, errors: list[str]) -> Any:
    """The one shape a discriminated union's tag picks (pydantic's ``discriminator``), else None: its
    problems are the ones to report, not the closest shape's."""
    tag = schema.get("discriminator")
    if not isinstance(tag, dict) or not isinstance(value, dict) or not isinstance(tag.get("mapping"), dict):
        return None
    name, mapping = tag.get("propertyName"), tag["mapping"]
    if name not in value:
        errors.append(f"at {path}: missing required field {name!r}")
        return True
    ref = mapping.get(value[name]) if isinstance(value[name], str) else None
    if not isinstance(ref, str):
        errors.append(f"at {path}.{name}: expected one of {', '.join(repr(k) for k in mapping)}, "
                      f"got {_describe(value[name])}")
        return True
    return _resolve(ref, root)


def _errors_in(value: Any, schema: Any, root: _Walk, path: str) -> list[str]:
    found: list[str] = []
    _check(value, schema, root, path, found)
    return found


def _check_object(value: dict[str, Any], schema: dict[str, Any], root: _Walk, path: str, errors: list[str]) -> None:
    properties = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            errors.append(f"at {path}: missing required field {name!r}")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}"
        if name in properties:
            _check(item, properties[name], root, where, errors)
        elif extra is False:
            errors.append(f"at {path}: unexpected field {name!r} (allowed: {', '.join(sorted(properties)) or 'none'})")
        else:
            _check(item, extra, root, where, errors)


def _check_array(value: list[Any], schema: dict[str, Any], root: _Walk, path: str, errors: list[str]) -> None:
    prefix = schema.get("prefixItems", [])
    for index, item in enumerate(value):
        option = prefix[index] if index < len(prefix) else schema.get("items", True)
        _check(item, option, root, f"{path}[{index}]", errors)
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"at {path}: expected at least {schema['minItems']} items, got {len(value)}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"at {path}: expected at most {schema['maxItems']} items, got {len(value)}")


def _check_string(value: str, schema: dict[str, Any], path: str, errors: list[str]) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"at {path}: expected at least {schema['minLength']} characters, got {len(value)}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"at {path}: expected at most {schema['maxLength']} characters, got {len(value)}")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # a pattern Python cannot compile: left to the re-run check
        if not matched:
            errors.append(f"at {path}: {value!r} does not match the pattern {pattern!r}")


_BOUNDS: tuple[tuple[str, str, Callable[[float, float], bool]], ...] = (
    ("minimum", ">=", operator.ge), ("maximum", "<=", operator.le),
    ("exclusiveMinimum", ">", operator.gt), ("exclusiveMaximum", "<", operator.lt),
)


def _check_number(value: float, schema: dict[str, Any], path: str, errors: list[str]) -> None:
    for word, sign, holds in _BOUNDS:
        bound = schema.get(word)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and not holds(value, bound):
            errors.append(f"at {path}: expected a number {sign} {bound}, got {value!r}")
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step and not math.isclose(value / step, round(value / step)):
        errors.append(f"at {path}: expected a multiple of {step}, got {value!r}")


def _same(value: Any, expected: Any) -> bool:
    """JSON equality: ``True`` is not ``1``, as JSON Schema reads them."""
    if isinstance(value, bool) or isinstance(expected, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value == expected
    return bool(value == expected)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
