"""``dynamodb://TABLE?region=...&endpoint_url=...`` to constructor arguments, refusing what it cannot mean.

A typo in a deployment's URL (``?regoin=``) should fail at start-up with the list of known options,
not silently fall back to another region.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError

__all__ = ["check_table_name", "parse_url"]

_TABLE = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")

_OPTIONS: dict[str, tuple[str, type]] = {
    "region": ("region_name", str),
    "region_name": ("region_name", str),
    "endpoint_url": ("endpoint_url", str),
    "endpoint": ("endpoint_url", str),
    "profile": ("profile_name", str),
    "ttl_seconds": ("ttl_seconds", float),
    "ttl_attribute": ("ttl_attribute", str),
    "max_attempts": ("max_attempts", int),
}


def check_table_name(name: str) -> str:
    """DynamoDB's own rule for table names, checked before any request is made."""
    if not isinstance(name, str) or not _TABLE.fullmatch(name):
        raise DynamoDBConfigError(
            f"{name!r} is not a DynamoDB table name: use 3-255 letters, digits, '_', '-' or '.'"
        )
    return name


def parse_url(url: str) -> tuple[str, dict[str, Any]]:
    """``(table_name, keyword arguments)`` for ``DynamoDBStorage`` from a ``dynamodb://`` URL."""
    parts = urlsplit(url)
    if parts.scheme != "dynamodb":
        raise DynamoDBConfigError(f"not a dynamodb:// URL: {url!r}")
    if parts.path not in ("", "/") or parts.fragment:
        raise DynamoDBConfigError(
            f"a dynamodb:// URL names only a table, e.g. dynamodb://my-table?region=eu-west-1 (got {url!r})"
        )
    table = check_table_name(parts.netloc)
    options: dict[str, Any] = {}
    for name, values in parse_qs(parts.query, keep_blank_values=True, strict_parsing=False).items():
        if name not in _OPTIONS:
            known = ", ".join(sorted(_OPTIONS))
            raise DynamoDBConfigError(f"unknown option {name!r} in {url!r}; known options: {known}")
        target, kind = _OPTIONS[name]
        if len(values) != 1 or target in options:
            raise DynamoDBConfigError(f"option {name!r} is given more than once in {url!r}")
        try:
            options[target] = kind(values[0])
        except ValueError:
            raise DynamoDBConfigError(f"option {name!r} in {url!r} must be a {kind.__name__}") from None
    return table, options
