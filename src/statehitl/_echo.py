"""How an error message quotes what a user gave it: whole when short, its start and length when long.

A message that echoes its input is how a user finds the typo, but a 10 KB thread id or URL echoed
whole buries the sentence around it (and fills a log line per failure). Imports nothing of
statehitl's, so every layer, the backends included, can use it.
"""

from __future__ import annotations

ECHO_LIMIT = 60
"""Characters of a value a message quotes before it shortens it."""


def echo(value: object, limit: int = ECHO_LIMIT, *, quoted: bool = True) -> str:
    """``repr(value)`` for a short value; for a longer one, its first ``limit`` characters, quoted, then
    how long it is: ``'aaaa'… (10000 characters)``. A non-string is shown by its ``repr``, shortened alike.
    ``quoted=False`` shows a string as it is, for a message that puts it inside a URL or a command.
    """
    if isinstance(value, str):
        shown = repr(value) if quoted else value
        if len(value) <= limit:
            return shown
        start = repr(value[:limit]) if quoted else value[:limit]
        return f"{start}… ({len(value)} characters)"
    shown = repr(value)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}… ({len(shown)} characters)"
