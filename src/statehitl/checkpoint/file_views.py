"""Parsed logs, one cache for every ``FileStorage`` of the process.

A server that builds a ``FileSessionManager`` or ``FileCheckpointer`` for each request gets a new
``FileStorage`` each time. With a cache per storage, every request parsed its thread's whole log again,
so the requests of a conversation grew slower with its length (a new Agent on a long session spent
most of its restore parsing). With one cache per process, a log is
parsed once and later readers, whichever storage object they come through, only take in what was
appended since.

Sharing is as safe as reusing one storage: a view is checked against the file on every use (the
header's random id, new for every file a log name is given, and a size at least its end), and frames
are only ever appended.
Another process keeps its own cache, so it sees nothing of this one.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from statehitl.checkpoint.file_log import HEADER_LEN, LogView


class ParsedLogs:
    """Up to ``capacity`` parsed logs by path, least recently used dropped first.

    ``lock`` also guards changes to the views themselves: threads taking in new frames of one log
    apply them under it.
    """

    def __init__(self, capacity: int) -> None:
        self.lock = threading.Lock()
        self._capacity = capacity
        self._views: OrderedDict[str, LogView] = OrderedDict()

    def current(self, path: str, ident: bytes, size: int) -> LogView:
        """The view of the log ``path`` whose identity is ``ident`` and size ``size`` (caller holds lock).

        A cached view of another file under that name (replaced by a compaction, or deleted and made
        again), or one that claims more than the file holds, is dropped for a new, empty one.
        """
        view = self._views.get(path)
        if view is None or view.ident != ident or view.end > size:
            return self.keep(path, LogView(ident, HEADER_LEN))
        self._views.move_to_end(path)
        return view

    def keep(self, path: str, view: LogView) -> LogView:
        """Cache ``view`` as the one of ``path`` (caller holds lock)."""
        self._views[path] = view
        if len(self._views) > self._capacity:
            self._views.popitem(last=False)
        return view

    def forget(self, path: str) -> None:
        with self.lock:
            self._views.pop(path, None)

    def clear(self) -> None:
        """Drop every view: the next read of each log parses it from the start, as a new process would."""
        with self.lock:
            self._views.clear()

    def _after_fork_in_child(self) -> None:
        # The lock may have been held by a thread that does not exist in the child.
        self.lock = threading.Lock()


PARSED_LOGS = ParsedLogs(capacity=256)
os.register_at_fork(after_in_child=PARSED_LOGS._after_fork_in_child)
