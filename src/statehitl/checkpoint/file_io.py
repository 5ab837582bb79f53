"""The file store's low-level I/O: writes that are all or nothing, syncs, and what an ``OSError`` means.

Apart from ``file.py`` because these are the rules every byte the file store writes follows, whatever
log it goes to: a ``pwrite`` that comes back short is a failure and what reached the file is undone,
a new directory is synced into its parent, a log cut below its synced-to mark is damage, and a file
system's errors become statehitl's ``StorageError``s that say what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statehitl.checkpoint.file_handles import size_of
from statehitl.checkpoint.file_log import LogView
from statehitl.errors import (
    CheckpointCorruptError,
    StorageAccessError,
    StorageError,
    StorageFullError,
    StorageUnavailableError,
)

fdatasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)

def fsync_dir(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(directory: Path) -> None:
    """Create missing directories one level at a time, fsyncing each new entry into its parent.

    Directories are only the fixed structure (``threads/``, ``index/``), created once per store, so
    this is always done durably: later writes then only ever sync their own log's name.
    """
    missing: list[Path] = []
    while not directory.is_dir():
        missing.append(directory)
        directory = directory.parent
    for new in reversed(missing):
        with contextlib.suppress(FileExistsError):
            new.mkdir()
        fsync_dir(new.parent)


def pwrite_all(fd: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` at ``offset``, or raise.

    ``pwrite`` may write less than it was given (a disk that fills part-way, a file-size limit) and
    say so only by its count: a short write taken for a whole one is a record reported stored that
    is not, and then an approved action that runs again.
    """
    written = os.pwrite(fd, data, offset)
    if written == len(data):  # nearly always: the loop below is for a disk that filled part-way
        return
    rest = memoryview(data)[written:]
    offset += written
    while rest:
        written = os.pwrite(fd, rest, offset)
        if written <= 0:  # a regular file raises rather than write nothing, but the loop must end
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        rest, offset = rest[written:], offset + written


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
_DENIED = frozenset({errno.EACCES, errno.EPERM})
_AGAIN = frozenset({errno.EAGAIN, errno.EINTR, errno.EBUSY, errno.ETIMEDOUT})


def storage_error(exc: OSError, root: str, operation: str, path: str) -> StorageError:
    """The statehitl error for an ``OSError`` of the file system, naming the file and what to do."""
    code = errno.errorcode.get(exc.errno or 0, "")
    fields: dict[str, Any] = {"store": root, "operation": operation, "code": code}
    reason = exc.strerror or str(exc)
    if exc.errno in _FULL:
        return StorageFullError(
            f"the file store could not {operation} {path!r}: {reason} ({code}); nothing was recorded as done, "
            "and the thread's previous checkpoint stays as it was: free space (or raise the limit, or remount "
            "read-write) and try again", **fields)
    if exc.errno in _DENIED:
        return StorageAccessError(f"the file store may not {operation} {path!r}: {reason} ({code}); check the "
                                  "directory's owner and permissions", **fields)
    return StorageUnavailableError(f"the file store could not {operation} {path!r}: {reason} ({code})",
                                   transient=exc.errno in _AGAIN, **fields)


def clear_tail(fd: int, size: int, view: LogView) -> None:
    """Zero what a writer that died left after the log's last good frame, so the next frame can be
    appended right there (called under the log's lock: no live writer is mid-append).

    Durably: if the zeros were lost in a crash while a new frame landed, old bytes after it could
    read as a frame again.
    """
    if not view.tail_clear and view.end < size:
        rest = os.pread(fd, size - view.end, view.end)
        dirty = len(rest.rstrip(b"\0"))
        if dirty:
            pwrite_all(fd, bytes(dirty), view.end)
            fdatasync(fd)
    view.tail_clear = True


def unwrite(fd: int, view: LogView, at: int, end: int) -> None:
    """After a write that failed part-way (or whose sync failed): zero what of it reached the file, so
    no reader takes a frame the caller was told failed for a record, and have the next writer clear the
    tail durably before it appends (``clear_tail``). Best effort: the disk that refused the write may
    refuse this too, and what is left past ``synced-to`` is then a torn frame, which readers skip."""
    view.tail_clear = False
    with contextlib.suppress(OSError):
        reached = min(end, size_of(fd))
        if reached > at:
            pwrite_all(fd, bytes(reached - at), at)


def cut_short(path: str, end: int, synced_to: int) -> CheckpointCorruptError:
    """A log whose records end before its own synced-to mark lost records that were on disk: read as it
    is, it would show an older state of the thread (an interrupt pending again that was answered)."""
    return CheckpointCorruptError(
        f"{path}: its records end at byte {end}, before its synced-to mark at byte {synced_to}: records that "
        "were on disk are gone (the file was cut short, restored from an older copy, or the disk lost writes "
        "it had acknowledged). It is not read as the older state it now looks like; restore it from a backup "
        "taken after the newest run, or delete the thread"
    )
