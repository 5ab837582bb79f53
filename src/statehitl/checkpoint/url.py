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

What is not a URL is a directory path (``dir``, ``./dir``, ``/abs/dir``, ``~/dir``), so a URL with a
mangled separator would silently become a local directory: ``s3:/bucket`` a directory ``s3:`` with a
``bucket`` in it, where ``statehitl inbox`` then finds "nothing waiting". ``storage_from_url`` refuses
what only looks like a URL instead (``StorageConfigError``, naming the string and the URL it probably
meant): a scheme-like word and a colon before the first ``/`` (``s3:/x``, ``dynamodb:x``, ``file:/x``,
whose RFC 8089 meaning, ``/x``, is not what ``file://x``, relative here, means), a known scheme followed
by ``//`` (``s3//x``), an empty ``file://``, an empty string. A directory whose name really is like that
is written ``./s3:``. A well-formed URL whose scheme no installed backend registers is
``UnknownSchemeError``: both ``CheckpointerNotFoundError`` and ``StorageConfigError``.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from statehitl._echo import echo
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.checkpoint.storage import Storage, StorageFactory
from statehitl.errors import CheckpointerNotFoundError, StorageConfigError

if TYPE_CHECKING:
    from statehitl.checkpoint.file import FileStorage

__all__ = ["UnknownSchemeError", "checkpointer_options_of", "storage_from_url"]

_BUILTIN = ("memory", "file")
_EXTRAS = {"s3", "dynamodb"}
_GROUP = "statehitl.checkpointers"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
"""RFC 3986's scheme: a letter, then letters, digits, ``+``, ``-`` or ``.``."""
_MANGLED = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)(?P<sep>:/*|//+)(?P<rest>.*)", re.DOTALL)
"""A scheme-like word and a separator that is not ``://``: ``s3:/x``, ``s3:x``, ``s3//x``."""
_URL_ECHO = 200
"""A URL is quoted whole up to this length: the mistake may be anywhere in it."""
_EXAMPLES = "file://DIR, a directory path, s3://BUCKET/PREFIX, dynamodb://TABLE or memory://NAME"


class UnknownSchemeError(CheckpointerNotFoundError, StorageConfigError):
    """A well-formed store URL whose scheme no installed backend registers: a backend that is not
    installed (``CheckpointerNotFoundError``, a ``LookupError``) or a typo in the URL
    (``StorageConfigError``, a ``ValueError``), which this process cannot tell apart; the message names
    the scheme it probably meant, or what to install."""


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
    """The storage a URL names; a plain path (no scheme) means a directory on the file store.

    Refuses, before building anything, what only looks like a URL (see the module docstring): a
    mistyped store must fail where it is configured, not read as an empty directory.
    """
    shown = echo(url, _URL_ECHO)
    if not isinstance(url, str) or not url.strip():
        raise StorageConfigError(f"the store URL {shown} is empty: use {_EXAMPLES}", code="InvalidURL")
    if url != url.strip():
        raise StorageConfigError(
            f"the store URL {shown} has spaces or line breaks around it: remove them (a trailing newline from a "
            "file or an environment variable is the usual cause)", code="InvalidURL",
        )
    scheme, sep, rest = url.partition("://")
    if not sep:
        _refuse_mangled(url, shown)
        return _file_storage()(url)
    if not _SCHEME.fullmatch(scheme):
        raise StorageConfigError(
            f"the store URL {shown} does not start with a scheme ({echo(scheme)} is not one): use {_EXAMPLES}; "
            "a directory whose name has '://' in it is written ./NAME", code="InvalidURL",
        )
    if scheme == "file":
        path = rest
        if not path.strip():
            raise StorageConfigError(
                f"the store URL {shown} names no directory: use file://DIR (relative to the current directory), "
                "file:///abs/dir, or the path itself (./.statehitl)", code="InvalidURL",
            )
        if "?" in path:
            raise StorageConfigError(
                f"the store URL {shown} has a query, and file:// takes no options besides compress=: a directory "
                "whose name has '?' in it is given as a plain path", code="InvalidURL",
            )
    factory = _builtin(scheme) or _plugin(scheme, url)
    storage = factory.from_url(url)
    if not isinstance(storage, Storage):
        raise TypeError(
            f"{_name(factory)}.from_url({url!r}) returned {type(storage).__name__}, which is not a Storage "
            "(async read, write, list and delete): the backend registered for "
            f"{scheme}:// is broken; see docs/backends.md, 'Write your own backend'"
        )
    return storage


def _refuse_mangled(url: str, shown: str) -> None:
    """Raise ``StorageConfigError`` for a string with no ``://`` that is a URL with a mangled separator
    (``s3:/x``, ``s3:x``, ``s3//x``), naming the URL it probably meant; return for a directory path.

    A colon in the first path segment after a scheme-like word is refused whatever the word (``run:1``
    could be a directory, but reads as a URL; ``./run:1`` says which); ``//`` only after a scheme a
    backend has, since ``dir//sub`` is an ordinary path.
    """
    found = _MANGLED.fullmatch(url)
    if found is None:
        return
    scheme, sep, rest = found["scheme"], found["sep"], found["rest"]
    lowered = scheme.lower()
    known = lowered in _BUILTIN or lowered in _EXTRAS or lowered in _installed_schemes()
    if sep.startswith("/") and not known:
        return
    tail = echo(rest.lstrip("/"), _URL_ECHO, quoted=False)
    if lowered == "file":
        meant = (f"file:///{tail} (the absolute directory /{tail}) or file://{tail} (relative to the current "
                 "directory)") if tail else "file://DIR"
    elif known:
        meant = f"{lowered}://{tail}"
    else:
        meant = ""
    guess = f"did you mean {meant}?" if meant else f"a store URL is SCHEME://..., e.g. {_EXAMPLES}."
    raise StorageConfigError(
        f"the store URL {shown} is not a well-formed URL ({echo(scheme)} is followed by {sep!r}, not '://'): "
        f"{guess} A directory whose name looks like this is written ./{echo(url, _URL_ECHO, quoted=False)}",
        code="InvalidURL",
    )


def _builtin(scheme: str) -> StorageFactory | None:
    """The core's own stores by scheme; the file store's modules load with its first URL."""
    if scheme == "memory":
        return MemoryStorage
    return _file_storage() if scheme == "file" else None


def _file_storage() -> type[FileStorage]:
    from statehitl.checkpoint.file import FileStorage

    return FileStorage


def _installed_schemes() -> set[str]:
    """Schemes registered by installed backends (an entry-point scan: only for the rare string that needs it)."""
    from importlib.metadata import entry_points

    return {ep.name.lower() for ep in entry_points(group=_GROUP)}


def _plugin(scheme: str, url: str) -> StorageFactory:
    """The factory an installed distribution registered for ``scheme``, checked to be one."""
    from importlib.metadata import entry_points  # slow; only plugin schemes need it

    registered = list(entry_points(group=_GROUP))
    matches = [ep for ep in registered if ep.name == scheme]
    if not matches:
        shown = echo(url, _URL_ECHO)
        names = sorted({*_BUILTIN, *_EXTRAS, *(ep.name for ep in registered)})
        if scheme != scheme.lower() and scheme.lower() in names:
            hint = f"scheme names are lowercase: {echo(scheme.lower() + url[len(scheme):], _URL_ECHO, quoted=False)}"
        elif scheme in _EXTRAS:
            hint = install_hint(scheme)
        else:
            close = difflib.get_close_matches(scheme.lower(), names, n=1)
            rest = echo(url.partition("://")[2], _URL_ECHO, quoted=False)
            hint = (f"did you mean {close[0]}://{rest}? (A third-party backend for {scheme}:// must be installed "
                    "first.)" if close else f"{install_hint(scheme)}; store URLs look like {_EXAMPLES}")
        raise UnknownSchemeError(
            f"no checkpoint backend is installed for {echo(scheme, quoted=False)}:// URLs ({shown}); {hint}",
            code="UnknownScheme",
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
