"""The record log behind ``FileStorage``: every key of one "directory" lives in one append-only file.

Why a log and not a file per key: a durable write of a new file costs an fsync of the file *and* one
of its directory (the new name must survive too), about 0.55 ms on these disks; appending to a file
that exists costs a single ``fdatasync`` (about 0.2 ms). A thread's checkpoints are exactly such a
directory, so a step costs one append and a resume reads one file.

The format is text, so ``cat`` shows the JSON records::

    statehitl-log v1 name-synced:0 id:<random>
    #rec <name> <length> <digest>
    <length bytes of value>
    #rec <name> <length> <digest>
    ...

A later frame for a name replaces an earlier one; ``#del <name>`` removes it. The digest (BLAKE2b of
name and value) is also the value's version token, and is checked when the value is read. A frame
cut short at the end of the file is a write that never finished (the writer died before it
returned): it is ignored, and the next writer cuts it off. A whole frame whose value does not match
its digest was changed after it was written: reading that value is a ``CheckpointCorruptError``, the
other records stay readable, and nothing is cut off. ``name-synced`` records whether the file's own
name has been fsynced into its directory, so only the first durable write to a new file pays for that.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from statehitl.errors import CheckpointCorruptError

__all__ = ["HEADER_LEN", "SYNCED_FLAG_OFFSET", "LogView", "Member", "check_digest", "delete_frame", "digest",
           "frame", "intact", "new_header", "parse", "read_header"]

_MAGIC = b"statehitl-log v1 name-synced:"
SYNCED_FLAG_OFFSET = len(_MAGIC)
"""Where the ``0``/``1`` of ``name-synced`` sits; rewritten in place, under the file's lock."""
HEADER_LEN = len(_MAGIC) + len(b"0 id:") + 32 + 1


def new_header(synced: bool) -> bytes:
    """A new log's first line. The random id tells a log from a later one that reuses its inode."""
    return b"%s%d id:%s\n" % (_MAGIC, synced, os.urandom(16).hex().encode())


_RECORD = b"#rec "
_DELETE = b"#del "
_NAME = rb"[A-Za-z0-9_][A-Za-z0-9_.:@=+-]*"
_FRAME = re.compile(rb"#rec (%s) (\d{1,15}) ([0-9a-f]{24})\n|#del (%s)\n" % (_NAME, _NAME))
_NEWLINE = ord("\n")


def digest(name: str, data: bytes) -> str:
    return hashlib.blake2b(name.encode() + b"\0" + data, digest_size=12).hexdigest()


def frame(name: str, data: bytes) -> tuple[bytes, str]:
    """The bytes that append ``name = data`` to a log, and the value's version token."""
    version = digest(name, data)
    return b"%s%s %d %s\n%s\n" % (_RECORD, name.encode(), len(data), version.encode(), data), version


def delete_frame(name: str) -> bytes:
    return b"%s%s\n" % (_DELETE, name.encode())


class Member(NamedTuple):
    """Where one name's current value sits in the log file (a tuple: a long log makes thousands)."""

    offset: int
    length: int
    version: str


@dataclass
class LogView:
    """What a log file held up to ``end``: its live names, where their values are, in name order.

    Updated in place, so an append costs the same in a log of ten records or of ten thousand; the
    ``FileStorage`` that caches a view applies every change under its lock.
    """

    ident: tuple[int, int, bytes]
    """Device, inode and the header's id: the file this view is of."""
    end: int
    members: dict[str, Member] = field(default_factory=dict)
    live: int = 0
    """Bytes of the live values, kept up to date so deciding on compaction costs nothing per write."""
    _names: list[str] = field(default_factory=list, repr=False)

    def names(self, starting: str = "", limit: int | None = None) -> list[str]:
        """The live names in order that start with ``starting``, at most ``limit`` of them.

        A new list, found by bisection: the view may grow while the caller iterates, and a thread's
        head (``limit=1``) must not cost a copy of all its names.
        """
        found: list[str] = []
        for name in itertools.islice(self._names, bisect.bisect_left(self._names, starting), None):
            if not name.startswith(starting) or len(found) == limit:
                break
            found.append(name)
        return found

    def apply(self, end: int, changes: dict[str, Member | None]) -> None:
        """Take in the frames up to ``end``: each name's new place, or None for a deleted name."""
        bulk = len(changes) > 32  # a log read afresh: sort once rather than insert one by one
        for name, member in changes.items():
            old = self.members.pop(name, None)
            if old is not None:
                self.live -= old.length
                if member is None and not bulk:
                    del self._names[bisect.bisect_left(self._names, name)]
            elif member is not None and not bulk:
                bisect.insort(self._names, name)  # slots count down: usually the front, a memmove
            if member is not None:
                self.members[name] = member
                self.live += member.length
        if bulk:
            self._names = sorted(self.members)
        self.end = end


def _unreadable(where: str, offset: int) -> CheckpointCorruptError:
    return CheckpointCorruptError(f"{where}: unreadable bytes at byte {offset} (not a record frame)")


def parse(where: str, chunk: bytes, at: int) -> tuple[int, dict[str, Member | None]]:
    """The frames in ``chunk``, the file's bytes from offset ``at``: where the last whole one ends, and
    each name's new place (None: deleted).

    Only the frame lines are parsed here, with one C regex match per frame: a fresh process reading a
    long thread pays for finding its records, not for hashing all of them (``read`` checks the digest
    of what it returns). Stops at a torn tail; raises ``CheckpointCorruptError`` naming the log and
    the offset for anything else that is not a frame.
    """
    changes: dict[str, Member | None] = {}
    pos = 0
    size = len(chunk)
    match = _FRAME.match
    while pos < size:
        found = match(chunk, pos)
        if found is None:
            rest = chunk[pos:]
            if b"\n" not in rest or not rest.strip(b"\0"):
                break  # a frame line cut short (or zeros: the file grew, the data never landed)
            raise _unreadable(where, at + pos)
        name, length, version, deleted = found.groups()
        if deleted is not None:
            changes[deleted.decode()] = None
            pos = found.end()
            continue
        start = found.end()
        end = start + int(length)
        if end >= size or chunk[end] != _NEWLINE:
            if end >= size or not chunk[end:].strip(b"\0"):
                break  # the value cut short
            raise _unreadable(where, at + pos)
        changes[name.decode()] = Member(at + start, end - start, version.decode())
        pos = end + 1
    return at + pos, changes


def intact(name: str, member: Member, data: bytes) -> bool:
    """Whether ``data``, read where ``member`` points, is the value that was written there."""
    return digest(name, data) == member.version


def check_digest(where: str, name: str, member: Member, data: bytes) -> bytes:
    """``data`` if it is intact; else ``CheckpointCorruptError`` naming the log, the record and its offset."""
    if not intact(name, member, data):
        raise CheckpointCorruptError(
            f"{where}: the record {name!r} at byte {member.offset} does not match its digest "
            "(it was changed after it was written)"
        )
    return data


def read_header(where: str, head: bytes) -> tuple[bool, bytes] | None:
    """(``name-synced``, id) from a log's first line, or None if the line was never fully written."""
    written = head.rstrip(b"\0")
    if len(head) < HEADER_LEN and (_MAGIC.startswith(written) or written.startswith(_MAGIC)):
        return None
    if len(head) < HEADER_LEN or not head.startswith(_MAGIC) or head[HEADER_LEN - 1 : HEADER_LEN] != b"\n":
        raise CheckpointCorruptError(f"{where} is not a statehitl record log (unknown first line)")
    return head[SYNCED_FLAG_OFFSET : SYNCED_FLAG_OFFSET + 1] == b"1", head[SYNCED_FLAG_OFFSET + 1 : HEADER_LEN]
