"""How the inbox words things, the same in the terminal and on the page: ages, deadlines, typed answers."""

from __future__ import annotations

import json
from typing import Any


def age_text(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``: how long ago, to the unit that matters."""
    whole = int(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def expiry_text(expires_at: float | None, now: float) -> str:
    """``in 5m``, ``expired 2m ago``, or ``-`` for an interrupt that waits as long as it takes."""
    if expires_at is None:
        return "-"
    if expires_at > now:
        return f"in {age_text(expires_at - now)}"
    return f"expired {age_text(now - expires_at)} ago"


def parse_response(text: str) -> Any:
    """A response typed by a person: JSON when it parses as JSON, else the text itself as a string.

    So ``true``, ``42``, ``{"ok": true}`` and ``"y"`` are JSON, and a bare ``y`` or ``ship it`` is the
    string ``"y"`` or ``"ship it"`` (surrounding whitespace dropped).
    """
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        return stripped
