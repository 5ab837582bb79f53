"""Build storage from a URL, so a deployment picks its backend by configuration, not code.

``memory://`` and ``file://`` are built in; other schemes come from installed distributions that
register a ``Storage`` class (with a ``from_url`` classmethod) in the ``statehitl.checkpointers``
entry-point group, e.g. ``statehitl-checkpoint-s3`` for ``s3://``.
"""

from __future__ import annotations

from typing import Any

from statehitl.checkpoint.file import FileStorage
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.checkpoint.storage import Storage
from statehitl.errors import CheckpointerNotFoundError

__all__ = ["storage_from_url"]

_BUILTIN: dict[str, Any] = {"memory": MemoryStorage, "file": FileStorage}
_EXTRAS = {"s3": "statehitl[s3]", "dynamodb": "statehitl[dynamodb]"}


def storage_from_url(url: str) -> Storage:
    """The storage a URL names. A plain path (no scheme) means a directory on the file store."""
    scheme, sep, _ = url.partition("://")
    if not sep:
        return FileStorage(url)
    factory = _BUILTIN.get(scheme)
    if factory is None:
        from importlib.metadata import entry_points  # slow; only plugin schemes need it

        matches = [ep for ep in entry_points(group="statehitl.checkpointers") if ep.name == scheme]
        if not matches:
            raise CheckpointerNotFoundError(
                f"no checkpoint backend is installed for {scheme}:// URLs ({url!r}); {install_hint(scheme)}"
            )
        factory = matches[0].load()
    storage: Storage = factory.from_url(url)
    return storage


def install_hint(scheme: str) -> str:
    """What to install for a scheme's backend; every "backend missing" message asks for the same extra."""
    return f"pip install '{_EXTRAS[scheme]}'" if scheme in _EXTRAS else "install a package providing it"
