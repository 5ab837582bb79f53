"""``dynamodb://TABLE?region=...&endpoint_url=...`` to constructor arguments, refusing what it cannot mean.

A typo in a deployment's URL (``?regoin=``) should fail at start-up with the list of known options,
not silently fall back to another region.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from statehitl._echo import echo
from statehitl_checkpoint_dynamodb.errors import DynamoDBConfigError

_TABLE = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")
_REGION = re.compile(r"^(?![0-9]+$)(?!-)[a-zA-Z0-9-]{1,63}(?<!-)$")
"""botocore's own rule for a region name, checked here so a typo fails when the store is built."""
_URL_ECHO = 200
"""A URL is quoted whole up to this length: the mistake may be anywhere in its query."""
_RESERVED_ATTRIBUTES = frozenset({"pk", "sk", "v", "d", "c", "at"})

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
            f"{echo(name)} is not a DynamoDB table name: use 3-255 letters, digits, '_', '-' or '.'",
            store=name if isinstance(name, str) else "", code="InvalidTableName",
        )
    return name


def check_options(table: str, *, region_name: str | None, endpoint_url: str | None, ttl_seconds: float | None,
                  ttl_attribute: str, max_attempts: int) -> None:
    """Refuse options no client or table could use, when the store is built rather than at its first
    request (where botocore would find a bad region or endpoint only once the client is built)."""

    def refuse(message: str) -> DynamoDBConfigError:
        return DynamoDBConfigError(message, store=table, code="InvalidOption")

    if region_name is not None and (not isinstance(region_name, str) or not _REGION.fullmatch(region_name)):
        raise refuse(f"region {echo(region_name)} is not an AWS region name: use one like eu-west-1")
    if endpoint_url is not None:
        parts = urlsplit(endpoint_url) if isinstance(endpoint_url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise refuse(
                f"endpoint_url {echo(endpoint_url, _URL_ECHO)} is not an http(s) URL: use one like "
                "http://127.0.0.1:8000 (DynamoDB Local) or https://dynamodb.eu-west-1.amazonaws.com"
            )
    if ttl_seconds is not None and (
        isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float)
        or not 0 < ttl_seconds < math.inf
    ):
        raise refuse(f"ttl_seconds must be positive (and finite) seconds or None, got {echo(ttl_seconds)}")
    if not isinstance(ttl_attribute, str) or not ttl_attribute or ttl_attribute in _RESERVED_ATTRIBUTES:
        raise refuse(f"ttl_attribute {echo(ttl_attribute)} is empty or used by statehitl itself")
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise refuse(f"max_attempts must be a whole number of attempts, at least 1, got {echo(max_attempts)}")


def parse_url(url: str) -> tuple[str, dict[str, Any]]:
    """``(table_name, keyword arguments)`` for ``DynamoDBStorage`` from a ``dynamodb://`` URL."""
    shown = echo(url, _URL_ECHO)
    parts = urlsplit(url)
    if parts.scheme != "dynamodb" or not url.startswith("dynamodb://"):
        raise DynamoDBConfigError(f"not a dynamodb:// URL: {shown}; use dynamodb://TABLE?region=eu-west-1")
    if parts.path not in ("", "/") or parts.fragment:
        raise DynamoDBConfigError(
            f"a dynamodb:// URL names only a table, e.g. dynamodb://my-table?region=eu-west-1 (got {shown})"
        )
    table = check_table_name(parts.netloc)
    options: dict[str, Any] = {}
    for name, values in parse_qs(parts.query, keep_blank_values=True, strict_parsing=False).items():
        if name not in _OPTIONS:
            known = ", ".join(sorted(_OPTIONS))
            raise DynamoDBConfigError(f"unknown option {echo(name)} in {shown}; known options: {known}", store=table)
        target, kind = _OPTIONS[name]
        if len(values) != 1 or target in options:
            raise DynamoDBConfigError(f"option {name!r} is given more than once in {shown}", store=table)
        try:
            options[target] = kind(values[0])
        except ValueError:
            raise DynamoDBConfigError(
                f"option {name!r} in {shown} must be a {kind.__name__}, got {echo(values[0])}", store=table
            ) from None
    return table, options
