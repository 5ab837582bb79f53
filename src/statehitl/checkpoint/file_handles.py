"""The file store's writer descriptors, kept open from one write of a log to the next.

Opening and closing a log around every write cost about a tenth of an agent turn (``open`` walks the
path, and on ext4 ``close`` of a written file does bookkeeping too). The file store keeps one set
for the whole process (``file._WRITERS``), by path, so a request that builds a new store on the same
directory finds its logs still open; a log stays open until it is among the least recently used
beyond the capacity, or the process ends, whether or not a store still refers to it. A kept
descriptor is only used after checking, under the log's ``flock``, that the log's name still denotes
the file it has open: a compaction or a delete, in any process, replaces or removes the name, and
the descriptor is then closed and the name opened afresh.

That check, and the log's size, are found without asking the file system for the file's attributes
(``stat``, ``fstat``): on Linux 6.18 and ext4, a file whose attributes were read between two of its
``fdatasync``s makes the second one commit the inode as well, about 60 µs more (0.135 ms to 0.195
here), on every durable write. Its name comes from ``/proc/self/fd`` (which shows a replaced or
removed file as such), its size from seeking to its end; where there is no ``/proc``, from ``stat``.

``flock`` excludes open file descriptions, not the threads sharing one, so each kept descriptor also
has a thread lock. A forked child closes the descriptors it inherited: they share the parent's open
file descriptions, and with them its locks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import NamedTuple


class LockedLog(NamedTuple):
    """What the store needs to know of a log it holds locked, found without reading its attributes."""

    size: int
    """Found by seeking to the end (see the module's docstring for why not by ``fstat``)."""
    device: int
    """The file system the log is on, from when its descriptor was opened."""


def size_of(fd: int) -> int:
    """The size of the file open at ``fd``, without reading its attributes."""
    return os.lseek(fd, 0, os.SEEK_END)


_REMOVED = " (deleted)"
"""What ``/proc`` adds to the name of a file no name denotes any more (removed, or replaced by a rename)."""


def _proc_name(fd: int) -> str | None:
    """What ``/proc`` shows the descriptor's file as (its path; marked once replaced or removed), or
    None where there is no ``/proc``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


class _Handle:
    """One kept descriptor (``-1`` once closed), the lock its users in this process take, and what
    tells whether the log's name still denotes its file."""

    __slots__ = ("device", "fd", "inode", "lock", "proc_name")

    def __init__(self, fd: int) -> None:
        st = os.fstat(fd)  # once per open: before the log's first write through this descriptor
        self.fd = fd
        self.lock = threading.Lock()
        self.device, self.inode = st.st_dev, st.st_ino
        self.proc_name = _proc_name(fd)

    def names(self, path: str) -> bool:
        """Whether ``path`` still denotes this descriptor's file (the caller holds the log's lock)."""
        if self.proc_name is not None:
            now = _proc_name(self.fd)
            return now == self.proc_name and not now.endswith(_REMOVED)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            return False
        return (current.st_dev, current.st_ino) == (self.device, self.inode)

    def close(self) -> None:
        """Close after any thread using the descriptor is done with it."""
        with self.lock:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1


class OpenLogs:
    """Up to ``capacity`` logs open for writing, least recently used closed first."""

    def __init__(self, make_parent: Callable[[str], None], capacity: int = 32) -> None:
        self._make_parent = make_parent
        self._capacity = capacity
        self._handles: OrderedDict[str, _Handle] = OrderedDict()
        self._lock = threading.Lock()
        _LIVE.add(self)
        weakref.finalize(self, _close_all, self._handles)

    @contextlib.contextmanager
    def locked(self, path: str, create: bool) -> Iterator[tuple[int, LockedLog] | None]:
        """The log at ``path`` open and exclusively locked, with its size and device (None if absent,
        not ``create``)."""
        while True:
            handle = self._handle(path, create)
            if handle is None:
                yield None
                return
            with handle.lock:
                fd = handle.fd
                if fd < 0:
                    continue  # evicted while we waited for it
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    if not handle.names(path):
                        self._discard(path, handle)  # replaced (compacted) or deleted: open the name anew
                        continue
                    yield fd, LockedLog(size_of(fd), handle.device)
                    return
                finally:
                    if handle.fd >= 0:
                        fcntl.flock(fd, fcntl.LOCK_UN)

    def _handle(self, path: str, create: bool) -> _Handle | None:
        with self._lock:
            handle = self._handles.get(path)
            if handle is not None:
                self._handles.move_to_end(path)
                return handle
        while True:
            try:
                fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
                break
            except FileNotFoundError:
                if not create:
                    return None
                self._make_parent(path)
        evicted = None
        with self._lock:
            handle = self._handles.get(path)
            if handle is not None:  # another thread opened it meanwhile: keep one descriptor
                os.close(fd)
                self._handles.move_to_end(path)
                return handle
            handle = self._handles[path] = _Handle(fd)
            if len(self._handles) > self._capacity:
                _, evicted = self._handles.popitem(last=False)
        if evicted is not None:
            evicted.close()  # outside our lock: its user may be waiting for our lock to open another log
        return handle

    def clear(self) -> None:
        """Close every kept descriptor, each once no thread is using it: the next write of each log
        opens it afresh, as a new process would."""
        with self._lock:
            handles = list(self._handles.values())
            self._handles.clear()
        for handle in handles:
            handle.close()

    def _discard(self, path: str, handle: _Handle) -> None:
        """Close ``handle`` (its lock is held by the caller) and forget it."""
        os.close(handle.fd)
        handle.fd = -1
        with self._lock:
            if self._handles.get(path) is handle:
                del self._handles[path]

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        _close_all(self._handles)


def _close_all(handles: OrderedDict[str, _Handle]) -> None:
    """Close every descriptor without waiting for locks: nobody can be using them (garbage, or a
    forked child, where no other thread survived)."""
    for handle in handles.values():
        if handle.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(handle.fd)
            handle.fd = -1
    handles.clear()


_LIVE: weakref.WeakSet[OpenLogs] = weakref.WeakSet()


def _after_fork() -> None:
    for logs in list(_LIVE):
        logs._after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork)
