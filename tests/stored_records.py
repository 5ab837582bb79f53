"""Reading and rewriting what a file store holds, by key, for tests that inspect or damage records.

The file store keeps a directory's keys in one log file, so tests go through ``FileStorage`` rather
than guessing paths. ``rewrite`` is what someone editing the store by hand does: the new bytes are a
well-formed record, so what the engine makes of them is what is tested.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from statehitl.checkpoint import FileStorage
from statehitl.checkpoint.codec import decode


def keys(root: Path, prefix: str) -> list[str]:
    return asyncio.run(FileStorage(root).list(prefix))


def names(root: Path, prefix: str) -> list[str]:
    """The last segments of the keys under ``prefix`` (a thread's record slots, say)."""
    return [key.rsplit("/", 1)[1] for key in keys(root, prefix)]


def read(root: Path, key: str) -> bytes:
    found = asyncio.run(FileStorage(root).read(key))
    assert found is not None, f"no record {key!r} under {root}"
    return found[0]


def read_json(root: Path, key: str) -> dict[str, Any]:
    """A record's fields as the engine reads them (inflated when stored compressed), not validated."""
    return decode(f"record {key!r}", read(root, key), None)


def rewrite_json(root: Path, key: str, record: dict[str, Any]) -> None:
    """Store ``record`` as plain JSON in place of ``key``'s: how an older statehitl, or a hand, wrote it."""
    rewrite(root, key, json.dumps(record).encode())


def rewrite(root: Path, key: str, data: bytes) -> None:
    storage = FileStorage(root)
    found = asyncio.run(storage.read(key))
    assert found is not None, f"no record {key!r} under {root}"
    asyncio.run(storage.write(key, data, expect=found[1]))
