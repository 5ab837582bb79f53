"""File storage: each key "directory" is one append-only record log, written durably with one fdatasync.

Key ``threads/t1/000000000042`` is the record ``000000000042`` in the log file ``threads/t1~log``
(``~`` never appears in a key, so a log cannot shadow a directory of longer keys). The format and why
it is a log are in ``file_log``.

Writers take the log's ``flock``, check the key's current version against the write's ``expect``,
append one frame and, for a durable write, ``fdatasync`` it; the first durable write to a new log
also makes its name durable (``file_names``: where the file's sync does not, by an fsync of the
directory). Readers take no lock: frames are only ever appended, a
half-written one is recognised and skipped, and compaction swaps in a new file with ``rename()``. A
writer that waited on a log's lock re-checks that the name still denotes the file it locked, since a
compaction or a delete may have replaced it meanwhile; the process keeps recently written logs open
(``file_handles``), and caches what readers parsed of a log (``file_views``), for all its stores.

Durable writes wait for the disk, so they run in aiofiles' worker threads and the event loop keeps
serving other threads meanwhile — except under a sync call (``invoke``, ``agent(...)``), whose
private loop has nothing else to serve, so the thread hop would be pure cost. Reads,
listings and non-durable writes work on cached pages and run inline.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from statehitl._sync import on_private_loop
from statehitl.checkpoint.file_handles import LockedLog, OpenLogs, size_of
from statehitl.checkpoint.file_io import (
    clear_tail,
    cut_short,
    fdatasync,
    fsync_dir,
    make_dirs,
    pwrite_all,
    storage_error,
    unwrite,
)
from statehitl.checkpoint.file_log import (
    HEADER_LEN,
    SYNCED_FLAG_OFFSET,
    SYNCED_TO_OFFSET,
    LogView,
    Member,
    Stop,
    check_digest,
    delete_frame,
    frame,
    intact,
    new_header,
    parse,
    read_header,
    slack,
    synced_to_field,
)
from statehitl.checkpoint.file_names import fsync_covers_new_name
from statehitl.checkpoint.file_views import PARSED_LOGS
from statehitl.checkpoint.storage import ABSENT, CLEANUP_MAX_AGE, NamedRecords, validate_key, validate_prefix
from statehitl.errors import (
    CheckpointConflict,
    InvalidThreadIdError,
    StorageError,
)

T = TypeVar("T")

LOG_SUFFIX = "~log"
_FIRST_READ = 4096
"""Bytes a view reads first when it takes in new frames; more only if a frame runs past them."""
_COMPACT_AT = 64 * 1024
"""A log over this size is rewritten once most of it is replaced or deleted records (index entries)."""


async def _in_thread(func: Callable[..., T], *args: Any) -> T:
    """Run one blocking file operation in aiofiles' executor (imported on first use, not by every program)."""
    from aiofiles.os import wrap

    result: T = await wrap(func)(*args)
    return result


_WRITERS = OpenLogs(lambda path: make_dirs(Path(path).parent), capacity=64)
"""The logs kept open for writing, for every store of the process: a server that builds a session
manager (so a store) per request, as the seed's examples do, would otherwise open each log again on
every request. Kept by path, so stores on the same directory share a log's descriptor and its lock."""


def _within(prefix: str, directory: str) -> tuple[str, str]:
    """For the log of ``directory``: what its keys start with, and what its names must start with to
    match ``prefix`` (a log found deeper than the prefix reaches matches whole)."""
    lead = f"{directory}/" if directory else ""
    return lead, prefix[len(lead) :] if prefix.startswith(lead) else ""


def _split(key: str) -> tuple[str, str]:
    """``a/b/c`` -> (``a/b``, ``c``): the log a key lives in, and its name there."""
    directory, _, name = validate_key(key).rpartition("/")
    return directory, name


class FileStorage:
    """Keys map to records in log files below ``root``; names starting with ``.`` are internal."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self._root = str(self.root)  # hot paths join strings: pathlib costs more than the syscalls

    @property
    def cache_scope(self) -> str:
        """Where the data lives, for the process-wide cache of warm threads (``checkpoint/warm.py``)."""
        return f"file:{self._root}"

    @classmethod
    def from_url(cls, url: str) -> FileStorage:
        """``file://relative/dir``, ``file:///absolute/dir`` or a plain path."""
        path = url.removeprefix("file://") if url.startswith("file://") else url
        return cls(path or ".")

    def log_path(self, directory: str) -> str:
        """The file holding the keys directly under ``directory`` (``""`` for top-level keys)."""
        parent, _, last = directory.rpartition("/")
        parents = parent.split("/") if parent else []
        return os.path.join(self._root, *parents, last + LOG_SUFFIX)

    # -- parsed logs, cached per file for the whole process and extended as it grows ---------------

    def _view(self, path: str, fd: int, file_size: int | None = None) -> LogView:
        """The parsed log open at ``fd``, complete up to its last whole frame (``file_size``: if known).

        The cached view is extended in place with what was appended since it was last read; two
        threads reading the same new bytes both parse them, and the first to finish applies them.
        Reads start small (the bytes after the data are mostly the zeros left for later frames).
        """
        # The header before the size: a writer appends, syncs, then moves synced-to, so a size read
        # after the mark is at least the mark, unless the file was cut short (checked below).
        header = read_header(path, os.pread(fd, HEADER_LEN, 0))
        if file_size is None:
            file_size = size_of(fd)  # not fstat: see file_handles
        if header is None:  # a log whose first line never finished: the next writer redoes it
            return LogView(b"", 0)
        with PARSED_LOGS.lock:
            view = PARSED_LOGS.current(path, header.ident, file_size)
            view.name_synced = view.name_synced or header.synced
            at = view.end
        size = _FIRST_READ
        while at < file_size:
            chunk = os.pread(fd, min(file_size - at, size), at)
            end, changes, stop = parse(path, chunk, at, header.synced_to)
            partial = stop is Stop.CUT and at + len(chunk) < file_size  # the chunk ended, not the log
            with PARSED_LOGS.lock:
                if view.end == at:
                    view.apply(end, changes)
                    if not partial and stop is not Stop.ZEROS and end < file_size:
                        view.tail_clear = False  # something after the end that is not zeros
                    if not partial:
                        break
                at = view.end  # ours to go on from, or another thread took in these frames first
            size *= 8
        if view.end < header.synced_to:
            raise cut_short(path, view.end, header.synced_to)
        return view

    def _applied(self, view: LogView, at: int, end: int, changes: dict[str, Member | None]) -> None:
        """Apply this process's own append (``at`` to ``end``) unless a reader already took it in."""
        with PARSED_LOGS.lock:
            if view.end == at:
                view.apply(end, changes)

    # -- sync implementations ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self, path: str) -> Iterator[tuple[int, LogView] | None]:
        """The log at ``path`` open for reading, with its view (None if there is no such log)."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            yield None
            return
        try:
            yield fd, self._view(path, fd)
        finally:
            os.close(fd)

    def _read(self, key: str) -> tuple[bytes, str] | None:
        directory, name = _split(key)
        path = self.log_path(directory)
        with self._reading(path) as opened:
            if opened is None:
                return None
            fd, view = opened
            member = view.members.get(name)
            if member is None:
                return None
            return check_digest(path, name, member, os.pread(fd, member.length, member.offset)), member.version

    def _version(self, key: str) -> str | None:
        """A record's token is its digest, which the log's frame line holds: no value is read."""
        directory, name = _split(key)
        with self._reading(self.log_path(directory)) as opened:
            if opened is None:
                return None
            member = opened[1].members.get(name)
            return None if member is None else member.version

    def _write(self, key: str, data: bytes, expect: str, durable: bool) -> str:
        directory, name = _split(key)
        path = self.log_path(directory)
        record, version = frame(name, data)
        with _WRITERS.locked(path, create=True) as opened:
            assert opened is not None
            fd, log = opened
            view = self._view(path, fd, log.size)
            current = view.members.get(name)
            if expect == ABSENT and current is not None:
                raise CheckpointConflict(f"key {key!r} already exists")
            if expect != ABSENT and (current is None or current.version != expect):
                if log.size == 0:
                    os.unlink(path)  # the empty log this call created: a refused write leaves nothing behind
                raise CheckpointConflict(f"key {key!r} changed since version {expect!r} was read")
            if view.end < HEADER_LEN:  # a new log (or one whose first line a crash cut short)
                # The header covers all a cut-short line left. No ftruncate: ext4 would then start
                # writing the log back at every close of a descriptor on it (auto_da_alloc).
                header = new_header(synced=False)
                pwrite_all(fd, header, 0)
                log = log._replace(size=len(header))
                written = read_header(path, header)
                assert written is not None
                fresh = LogView(written.ident, HEADER_LEN, tail_clear=True)
                with PARSED_LOGS.lock:
                    view = PARSED_LOGS.keep(path, fresh)
            member = Member(view.end + len(record) - len(data) - 1, len(data), version)
            self._append(path, fd, log, view, record, changes={name: member}, durable=durable)
        return version

    def _append(self, path: str, fd: int, log: LockedLog, view: LogView, frames: bytes, *,
                changes: dict[str, Member | None], durable: bool) -> None:
        """Write ``frames`` where the log's data ends (the log is locked and ``log.size`` bytes long)."""
        size = log.size
        clear_tail(fd, size, view)
        at = view.end  # fixed now: once the frames are in, a reader in another thread may take them in
        end = at + len(frames)
        try:
            # A durable write past the end leaves zeros for the next ones: their fdatasync then has no
            # new file size to commit. Other writes grow the file only as needed (index logs stay small).
            # Past the frames, fewer zeros than asked for only mean the file grew less.
            written = os.pwrite(fd, frames + bytes(slack(end)) if durable and end > size else frames, at)
            if written < len(frames):
                pwrite_all(fd, frames[written:], at + written)
            if durable:
                self._sync(fd, path, log.device, view, end)
        except OSError:
            unwrite(fd, view, at, end)
            raise
        self._applied(view, at, end, changes)
        if view.end > _COMPACT_AT:
            with contextlib.suppress(OSError):  # the write is done; a full disk only postpones the compaction
                self._compact_if_mostly_garbage(path, fd, view)

    @staticmethod
    def _sync(fd: int, path: str, device: int, view: LogView, end: int) -> None:
        """Make the log's bytes up to ``end`` durable, and its name too the first time (the header's
        flag saves later syncs); then note ``end`` as synced, for readers after a crash (it reaches
        the disk with the next sync, so it never claims more than is there)."""
        if not view.name_synced:
            if not fsync_covers_new_name(device):
                fsync_dir(os.path.dirname(path))
            pwrite_all(fd, b"1", SYNCED_FLAG_OFFSET)  # durable with the data: the name is then too
            view.name_synced = True
        fdatasync(fd)
        # The frames are durable; should the mark fail to move, more of the log only stays lenient. (Not
        # contextlib.suppress: a context manager on every durable write costs more than the write.)
        try:  # noqa: SIM105
            pwrite_all(fd, synced_to_field(end), SYNCED_TO_OFFSET)
        except OSError:
            pass

    def _compact_if_mostly_garbage(self, path: str, fd: int, view: LogView) -> None:
        """Rewrite a log whose live records are under half of it (held under the log's lock)."""
        if view.live * 2 + 128 * len(view.members) > view.end:
            return
        parts = []
        for name in view.names():
            member = view.members[name]
            data = os.pread(fd, member.length, member.offset)
            if not intact(name, member, data):
                return  # never launder a damaged record into a fresh frame: reading it must still fail
            parts.append(frame(name, data)[0])
        body = b"".join(parts)
        temp = os.path.join(os.path.dirname(path), f".tmp-{os.urandom(16).hex()}")
        try:
            with open(temp, "wb") as out:
                out.write(new_header(synced=True, synced_to=HEADER_LEN + len(body)) + body
                          + bytes(slack(HEADER_LEN + len(body))))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, path)
            fsync_dir(os.path.dirname(path))
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            PARSED_LOGS.forget(path)  # whether or not the new file took the name: the next read looks

    def _logs(self, prefix: str) -> Iterator[tuple[str, str]]:
        """(directory, log path) of every log that may hold keys starting with ``prefix``."""
        directory, _, rest = validate_prefix(prefix).rpartition("/")
        yield directory, self.log_path(directory)
        start = os.path.join(self._root, *directory.split("/")) if directory else self._root
        for dirpath, dirnames, filenames in os.walk(start):
            top = dirpath == start
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and (not top or d.startswith(rest))]
            rel = os.path.relpath(dirpath, self._root).replace(os.sep, "/")
            for filename in filenames:
                seg = filename.removesuffix(LOG_SUFFIX)
                if seg != filename and seg and (not top or seg.startswith(rest)):
                    yield (seg if rel == "." else f"{rel}/{seg}"), os.path.join(dirpath, filename)

    def _names(self, path: str, starting: str, limit: int | None) -> list[tuple[str, str]]:
        """The log's names starting with ``starting``, in order, each with its version (its frame's digest)."""
        with self._reading(path) as opened:
            if opened is None:
                return []
            view = opened[1]
            with PARSED_LOGS.lock:  # another thread may be taking in new frames
                return [(name, view.members[name].version) for name in view.names(starting, limit)]

    def _list(self, prefix: str, limit: int | None) -> list[tuple[str, str]]:
        """Keys with their versions. Each log keeps its names sorted: one log (a thread's records) needs
        no sort, and with a ``limit`` (a thread's head) no more keys are made than asked for."""
        groups = []
        for directory, path in self._logs(prefix):
            lead, starting = _within(prefix, directory)
            names = self._names(path, starting, limit)
            if names:
                groups.append([(lead + name, version) for name, version in names])
        if len(groups) == 1:
            return groups[0]
        return sorted(itertools.chain.from_iterable(groups))[:limit]

    def _read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """Each log's matching records in one read of the span they occupy: a thread's records are
        one log, so loading a thread is one ``pread``."""
        found: dict[str, tuple[bytes, str]] = {}
        for directory, path in self._logs(prefix):
            lead, starting = _within(prefix, directory)
            with self._reading(path) as opened:
                if opened is None:
                    continue
                fd, view = opened
                with PARSED_LOGS.lock:  # another thread may be taking in new frames
                    members = [(name, view.members[name]) for name in view.names(starting, None)]
                if not members:
                    continue
                low = min(m.offset for _, m in members)
                span = os.pread(fd, max(m.offset + m.length for _, m in members) - low, low)
            for name, m in members:
                data = span[m.offset - low : m.offset - low + m.length]
                found[lead + name] = check_digest(path, name, m, data), m.version
        return found

    def _read_named_page(self, prefix: str, name: str, limit: int, after: str | None) -> list[tuple[str, bytes, str]]:
        """Records ``<dir>/name`` of the logs under ``prefix``, in key order after ``after``: the walk names
        every log (one directory listing per directory), and only the page's logs are opened."""
        keys = sorted(key for directory, _ in self._logs(prefix)
                      if (key := f"{directory}/{name}").startswith(prefix) and (after is None or key > after))
        found: list[tuple[str, bytes, str]] = []
        for key in keys:
            if len(found) >= limit:
                break
            with contextlib.suppress(InvalidThreadIdError):  # a file put there by hand: not one of ours
                if (value := self._read(key)) is not None:
                    found.append((key, *value))
        return found

    def _delete(self, prefix: str) -> int:
        removed = 0
        for directory, path in list(self._logs(prefix)):
            with _WRITERS.locked(path, create=False) as opened:
                if opened is None:
                    continue
                fd, log = opened
                view = self._view(path, fd, log.size)
                doomed = view.names(_within(prefix, directory)[1])
                if len(doomed) == len(view.members):
                    os.unlink(path)  # under the lock: a waiting writer sees the name gone and starts anew
                    PARSED_LOGS.forget(path)
                elif doomed:
                    tombstones = b"".join(delete_frame(n) for n in doomed)
                    self._append(path, fd, log, view, tombstones, changes=dict.fromkeys(doomed), durable=False)
                removed += len(doomed)
        return removed

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

    def _failed(self, exc: OSError, operation: str, key: str) -> StorageError:
        return storage_error(exc, self._root, operation, key)

    async def cleanup(self, max_age: float = CLEANUP_MAX_AGE) -> int:
        """Remove temp files a crashed compaction left behind (older than ``max_age`` seconds, so one in
        progress elsewhere is never touched); returns how many were removed. ``SupportsCleanup``."""
        try:
            return await _in_thread(self._cleanup, max_age)
        except OSError as exc:
            raise self._failed(exc, "clean up", self._root) from exc

    # -- the Storage protocol: file system errors become StorageErrors that say what to do ---------

    async def read(self, key: str) -> tuple[bytes, str] | None:
        try:
            return self._read(key)
        except OSError as exc:
            raise self._failed(exc, "read", key) from exc

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        try:
            if durable and not on_private_loop():
                return await _in_thread(self._write, key, data, expect, durable)
            return self._write(key, data, expect, durable)
        except OSError as exc:
            raise self._failed(exc, "write", key) from exc

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """The listed keys with their version tokens, from the logs' frame lines (``SupportsListVersions``)."""
        try:
            return self._list(prefix, limit)
        except OSError as exc:
            raise self._failed(exc, "list", prefix) from exc

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        try:
            return [key for key, _ in self._list(prefix, limit)]
        except OSError as exc:
            raise self._failed(exc, "list", prefix) from exc

    async def read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """Every key under ``prefix`` with its value (``SupportsReadAll``)."""
        try:
            return self._read_all(prefix)
        except OSError as exc:
            raise self._failed(exc, "read", prefix) from exc

    async def read_named_page(self, prefix: str, name: str, *, limit: int,
                              after: str | None = None) -> NamedRecords:
        """The next ``limit`` records named ``name`` under ``prefix`` after the key ``after``, in key order
        (``SupportsReadNamedPage``): the directories are listed, and only the page's logs read."""
        try:
            return self._read_named_page(validate_prefix(prefix), name, limit, after)
        except OSError as exc:
            raise self._failed(exc, "read", prefix) from exc

    async def version(self, key: str) -> str | None:
        """The key's version token (``SupportsVersion``)."""
        try:
            return self._version(key)
        except OSError as exc:
            raise self._failed(exc, "read", key) from exc

    async def delete(self, prefix: str) -> int:
        try:
            return await _in_thread(self._delete, prefix)
        except OSError as exc:
            raise self._failed(exc, "delete", prefix) from exc

    def __repr__(self) -> str:
        return f"FileStorage({str(self.root)!r})"
