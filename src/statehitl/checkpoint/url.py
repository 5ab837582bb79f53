"""Build storage from a URL, so a deployment picks its backend by configuration, not code.

``memory://`` and ``file://`` are built in; other schemes come from installed distributions that
register a ``StorageFactory`` (in practice their storage class, with a ``from_url`` classmethod) in
the ``statehitl.checkpointers`` entry-point group, e.g. ``statehitl-checkpoint-s3`` for ``s3://``.

``memory://`` is a new, empty store on every call, and ``memory://NAME`` one store per name for the
whole process: neither outlives the process, so they serve tests and one-process programs, never a
CLI command or a resume in another process.

One query parameter belongs to the checkpointer, not the store, and works with every scheme:
``compress=true|false`` (``checkpointer_options``), so a deployment configured by
``STATEHITL_SESSION_URL`` alone can turn compression off while older readers remain.
``checkpointer_options_of`` takes it out before the store sees the URL.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from statehitl.checkpoint.file import FileStorage
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.checkpoint.storage import Storage, StorageFactory
from statehitl.errors import CheckpointerNotFoundError

__all__ = ["checkpointer_options_of", "storage_from_url"]

_BUILTIN: dict[str, StorageFactory] = {"memory": MemoryStorage, "file": FileStorage}
_EXTRAS = {"s3", "dynamodb"}
_GROUP = "statehitl.checkpointers"


_YES_NO = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def checkpointer_options_of(url: str) -> tuple[str, dict[str, Any]]:
    """The URL without the checkpointer's own query parameters, and those as ``Checkpointer`` options.

    Only ``compress`` is one. The rest of the query is kept byte for byte (a store's own parameters,
    an ``endpoint_url`` with its ``://``). A plain path has no query: a ``?`` in it is part of the path.
    """
    if "://" not in url or "?" not in url:
        return url, {}
    base, _, query = url.partition("?")
    parts = query.split("&")
    ours = [part for part in parts if unquote(part.partition("=")[0]) == "compress"]
    found = [unquote(part.partition("=")[2]) for part in ours]
    if not found:
        return url, {}
    if len(found) > 1:
        raise ValueError(f"compress is given {len(found)} times in {url!r}; give it once")
    compress = _YES_NO.get(found[0].lower())
    if compress is None:
        raise ValueError(f"compress={found[0]!r} in {url!r} is not a yes or no; use compress=true or compress=false")
    rest = "&".join(part for part in parts if part not in ours)
    return (f"{base}?{rest}" if rest else base), {"compress": compress}


def storage_from_url(url: str) -> Storage:
    """The storage a URL names. A plain path (no scheme) means a directory on the file store."""
    scheme, sep, _ = url.partition("://")
    if not sep:
        return FileStorage(url)
    factory = _BUILTIN.get(scheme)
    if factory is None:
        factory = _plugin(scheme, url)
    storage = factory.from_url(url)
    if not isinstance(storage, Storage):
        raise TypeError(
            f"{_name(factory)}.from_url({url!r}) returned {type(storage).__name__}, which is not a Storage "
            "(async read, write, list and delete): the backend registered for "
            f"{scheme}:// is broken; see docs/backends.md, 'Write your own backend'"
        )
    return storage


def _plugin(scheme: str, url: str) -> StorageFactory:
    """The factory an installed distribution registered for ``scheme``, checked to be one."""
    from importlib.metadata import entry_points  # slow; only plugin schemes need it

    matches = [ep for ep in entry_points(group=_GROUP) if ep.name == scheme]
    if not matches:
        raise CheckpointerNotFoundError(
            f"no checkpoint backend is installed for {scheme}:// URLs ({url!r}); {install_hint(scheme)}"
        )
    loaded = matches[0].load()
    if not isinstance(loaded, StorageFactory):
        raise CheckpointerNotFoundError(
            f"the backend registered for {scheme}:// URLs ({_GROUP} entry point {matches[0].value!r}) is "
            f"{_name(loaded)}, which has no from_url(url) classmethod, so it cannot be built from {url!r}; "
            "its package must provide one (see docs/backends.md, 'Write your own backend')"
        )
    return loaded


def _name(obj: object) -> str:
    """How a message names what an entry point pointed at: module and qualified name where it has them."""
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{getattr(obj, '__module__', '?')}.{qualname}"
    return f"a {type(obj).__qualname__} object"


def install_hint(scheme: str) -> str:
    """What to run for a scheme's backend; every "backend missing" message asks for the same extra, with
    the command that installs it where this process runs (``statehitl._install``)."""
    if scheme not in _EXTRAS:
        return "install a package providing it"
    from statehitl._install import install_command

    return f"install it with: {install_command(scheme)}"
