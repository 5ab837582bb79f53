"""How deep a record's bytes nest (``json_depth.nesting_of``): brackets inside strings never count.

The check runs on every large record a checkpointer writes; it has a fast way for records whose
strings hold no bracket (most) and a slower one for the rest. Both must agree with a parser.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from statehitl.errors import NestingTooDeepError
from statehitl.json_depth import check_nesting, nesting_of


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


_PIECES = ["[", "]", "{", "}", '"', "\\", "a", '"[', ']"', '\\"', "\\\\", "é", "\n"]


def _value(rnd: random.Random, depth: int) -> Any:
    roll = rnd.random()
    if depth > 10 or roll < 0.3:
        return "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 5)))
    if roll < 0.6:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {"".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 3))): _value(rnd, depth + 1)
            for _ in range(rnd.randint(0, 3))}


@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_depth_of_json_is_its_lists_and_objects_whatever_its_strings_hold(ascii_only: bool) -> None:
    rnd = random.Random(34)
    for _ in range(3000):
        value = _value(rnd, 0)
        data = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only).encode()
        assert nesting_of(data) == _depth(value), data


def test_strings_without_brackets_and_with_them() -> None:
    assert nesting_of(b'{"a":[1,{"b":"c"}],"d":"e"}') == 3
    assert nesting_of(b'{"a":"[[[[","b":["]]"]}') == 2
    assert nesting_of(b'["\\"[",["\\\\"]]') == 2
    assert nesting_of(b'"x"') == 0


def test_a_record_nested_too_deep_is_refused_even_beside_strings_of_brackets() -> None:
    deep = "[" * 120 + '"]]]]"' + "]" * 120
    with pytest.raises(NestingTooDeepError, match="nests 121 levels"):
        check_nesting(f'{{"a":"{"[" * 200}","b":{deep}}}'.encode(), "a record")
    check_nesting(f'{{"a":"{"[" * 200}","b":[[1]]}}'.encode(), "a record")  # its brackets are all text
