"""File storage: one file per key under a root directory, written atomically and durably.

A write goes to a hidden temp file, is fsynced, then published: create-once writes use ``link()``
(atomic and exclusive: of two writers exactly one wins), replacing writes take a per-key ``flock``,
compare the current version and ``rename()`` over it. A durable write fsyncs the file before
publishing it, then its directory, so the new name survives a power cut; new directories are synced
into their parents when they are created. A crash leaves at worst a hidden temp file, which listing
ignores and ``cleanup()`` removes.

Durable writes wait for the disk (about a millisecond here), so they run in aiofiles' worker threads
and the event loop keeps serving other threads meanwhile — except under a sync call (``invoke``,
``agent(...)``), whose private loop has nothing else to serve, so the hop would be pure cost. Reads,
listings and non-durable writes are metadata operations on cached pages, cheaper than the thread hop
itself (about 140 us on these machines), so they run inline.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from statehitl._sync import on_private_loop
from statehitl.checkpoint.storage import ABSENT, validate_key, validate_prefix
from statehitl.errors import CheckpointConflict

__all__ = ["FileStorage"]

T = TypeVar("T")


async def _in_thread(func: Callable[..., T], *args: Any) -> T:
    """Run one blocking file operation in aiofiles' executor (imported on first use: 30 ms)."""
    from aiofiles.os import wrap

    result: T = await wrap(func)(*args)
    return result


def _version(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def _fsync_dir(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)






def _make_dirs(directory: Path) -> None:
    """Create missing directories one level at a time, fsyncing each new entry into its parent.

    Done whatever the write's ``durable`` says, once per new directory (a new thread): later durable
    writes then only sync their own directory, in this process or any other.
    """
    missing: list[Path] = []
    while not directory.is_dir():
        missing.append(directory)
        directory = directory.parent
    for new in reversed(missing):
        with contextlib.suppress(FileExistsError):
            new.mkdir()
        _fsync_dir(new.parent)


class FileStorage:
    """Keys map to paths below ``root``; names starting with ``.`` are internal and never listed."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self._root = str(self.root)  # hot paths join strings: pathlib costs more than the syscalls

    @classmethod
    def from_url(cls, url: str) -> FileStorage:
        """``file://relative/dir``, ``file:///absolute/dir`` or a plain path."""
        path = url.removeprefix("file://") if url.startswith("file://") else url
        return cls(path or ".")

    def _path(self, key: str) -> str:
        return os.path.join(self._root, *validate_key(key).split("/"))

    # -- sync implementations ---------------------------------------------------------------------

    def _read(self, key: str) -> tuple[bytes, str] | None:
        try:
            with open(self._path(key), "rb") as file:
                data = file.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None  # IsADirectoryError: the key is only a "directory" of longer keys
        return data, _version(data)

    def _write_temp(self, directory: str, data: bytes, durable: bool) -> str:
        temp = os.path.join(directory, f".tmp-{os.urandom(16).hex()}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileNotFoundError:  # the first record of a new thread: create its directories
            _make_dirs(Path(directory))
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:  # os.write may write less than asked
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        return temp

    def _write(self, key: str, data: bytes, expect: str, durable: bool) -> str:
        path = self._path(key)
        parent, name = os.path.split(path)
        temp = self._write_temp(parent, data, durable)
        try:
            if expect == ABSENT:
                try:
                    os.link(temp, path)
                except FileExistsError:
                    raise CheckpointConflict(f"key {key!r} already exists") from None
            else:
                lock_fd = os.open(os.path.join(parent, f".lock-{name}"), os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(lock_fd, fcntl.LOCK_EX)
                    current = self._read(key)
                    if current is None or current[1] != expect:
                        raise CheckpointConflict(f"key {key!r} changed since version {expect!r} was read")
                    os.replace(temp, path)
                finally:
                    os.close(lock_fd)
            if durable:
                _fsync_dir(parent)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
        return _version(data)

    def _list(self, prefix: str) -> list[str]:
        base, _, _ = validate_prefix(prefix).rpartition("/")
        start = self.root.joinpath(*base.split("/")) if base else self.root
        if not start.is_dir():
            return []
        keys = []
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in filenames:
                if name.startswith("."):
                    continue
                key = name if rel == "." else f"{rel}/{name}"
                if key.startswith(prefix):
                    keys.append(key)
        keys.sort()
        return keys

    def _delete(self, prefix: str) -> int:
        keys = self._list(prefix)
        for key in keys:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path(key))
        return len(keys)

    def _cleanup(self, max_age: float) -> int:
        cutoff = time.time() - max_age
        removed = 0
        for dirpath, _, filenames in os.walk(self.root):
            for name in filenames:
                if name.startswith(".tmp-"):
                    path = Path(dirpath) / name
                    with contextlib.suppress(FileNotFoundError):
                        if path.stat().st_mtime < cutoff:
                            path.unlink()
                            removed += 1
        return removed

    async def cleanup(self, max_age: float = 3600.0) -> int:
        """Remove temp files a crashed writer left behind (older than ``max_age`` seconds, so a write in
        progress elsewhere is never touched); returns how many were removed."""
        return await _in_thread(self._cleanup, max_age)

    # -- the Storage protocol ---------------------------------------------------------------------

    async def read(self, key: str) -> tuple[bytes, str] | None:
        return self._read(key)

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        if durable and not on_private_loop():
            return await _in_thread(self._write, key, data, expect, durable)
        return self._write(key, data, expect, durable)

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        return self._list(prefix)[:limit]

    async def delete(self, prefix: str) -> int:
        return await _in_thread(self._delete, prefix)

    def __repr__(self) -> str:
        return f"FileStorage({str(self.root)!r})"
