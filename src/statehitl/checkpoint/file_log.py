"""The record log behind ``FileStorage``: every key of one "directory" lives in one append-only file.

Why a log and not a file per key: a durable write of a new file must make its new name survive too
(a journal commit, and on some filesystems an fsync of the directory; see ``file_names``), which
costs more than the data's own sync; appending to a file that exists costs a single ``fdatasync``. A thread's
checkpoints are exactly such a directory, so a step costs one append and a resume reads one file.

The format is text, so ``cat`` shows the JSON records::

    statehitl-log v2 name-synced:0 id:<random> synced-to:<offset>
    #rec <name> <length> <digest>
    <length bytes of value>
    #rec <name> <length> <digest>
    ...
    <zeros up to the file's size>

A later frame for a name replaces an earlier one; ``#del <name>`` removes it. The digest (BLAKE2b of
name and value) is also the value's version token, and is checked when the value is read.

Why the zeros: an ``fdatasync`` that must also record a bigger file size commits the filesystem's
journal, about twice the cost of one that only writes data blocks. So a durable write that runs past
the end of the file also writes zero bytes after its frame (``slack``), and the next durable writes
land inside them. The log's data ends at the first frame that starts with a zero byte.

``synced-to`` is where the data known to be on disk ends: rewritten, in place, after each durable
write. Everything before it was forced to disk, so anything there that is not a whole frame with the
right digest is damage: a frame line that does not parse is a ``CheckpointCorruptError`` at once, a
value that does not match its digest is one when that value is read, and the other records stay
readable. After it lie frames that were never forced to disk: after a crash, any of their pages may
be missing (zeros) or present, in any order. There a frame is only taken in whole and with the right
digest, and the log ends at the first one that is not: a torn write. The next writer zeroes whatever
is left after the end, durably, before it appends, so no old frame can reappear after a new one.
``name-synced`` records whether the file's own name is known to be durable in its directory, so only
the first durable write to a new file pays for that.
"""

from __future__ import annotations

import bisect
import enum
import hashlib
import itertools
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from statehitl.errors import CheckpointCorruptError

_MAGIC = b"statehitl-log v2 name-synced:"
_V1 = b"statehitl-log v1 "
SYNCED_FLAG_OFFSET = len(_MAGIC)
"""Where the ``0``/``1`` of ``name-synced`` sits; rewritten in place, under the file's lock."""
_ID_END = SYNCED_FLAG_OFFSET + len(b"0 id:") + 32
_SYNCED_TO = b" synced-to:"
SYNCED_TO_OFFSET = _ID_END + len(_SYNCED_TO)
"""Where the 12 digits of ``synced-to`` sit; rewritten in place after each durable write."""
HEADER_LEN = SYNCED_TO_OFFSET + 12 + 1
_MAX_SLACK = 32 * 1024
"""The most zero bytes a durable write that grows the file leaves after its frame, for the next ones."""


def slack(end: int) -> int:
    """Zeros to leave after a log's data ending at ``end``: a quarter of it, from 4 KiB up to 32 KiB.

    A new log (a thread that is interrupted once and resumed) gets one page, so its first sync flushes
    little; a long conversation grows its log in larger steps and commits a new size less often.
    """
    return min(_MAX_SLACK, max(4096, end // 4))


def new_header(synced: bool, synced_to: int = HEADER_LEN) -> bytes:
    """A new log's first line. The random id tells a log from a later one that reuses its inode."""
    return b"%s%d id:%s%s%s\n" % (_MAGIC, synced, os.urandom(16).hex().encode(), _SYNCED_TO, synced_to_field(synced_to))


def synced_to_field(end: int) -> bytes:
    return b"%012d" % end


class Header(NamedTuple):
    synced: bool
    """Whether the file's name is known to be durable in its directory."""
    ident: bytes
    """The random id of this log."""
    synced_to: int
    """Where the frames known to be on disk end."""


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


class Stop(enum.Enum):
    """Why ``parse`` stopped where it did."""

    ZEROS = "zeros"
    """At a zero byte where a frame would start: the end of the log's data."""
    CUT = "cut"
    """At the end of the bytes it was given, possibly inside a frame."""
    TORN = "torn"
    """At a frame past ``synced-to`` that is incomplete or does not match its digest."""


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

    ident: bytes
    """The header's random id: the file this view is of (a later file under the name, even on the
    same inode, has another)."""
    end: int
    members: dict[str, Member] = field(default_factory=dict)
    live: int = 0
    """Bytes of the live values, kept up to date so deciding on compaction costs nothing per write."""
    tail_clear: bool = False
    """Whether the bytes after ``end`` are known to be zeros, so a frame may be appended at ``end``."""
    name_synced: bool = False
    """Whether the file's name is known to be durable in its directory (the header's flag)."""
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


def parse(where: str, chunk: bytes, at: int, synced_to: int) -> tuple[int, dict[str, Member | None], Stop]:
    """The frames in ``chunk``, the file's bytes from offset ``at``: where the last whole one ends,
    each name's new place (None: deleted), and why it stopped there.

    Before ``synced_to`` only the frame lines are parsed, with one C regex match per frame: a fresh
    process reading a long thread pays for finding its records, not for hashing all of them (``read``
    checks the digest of what it returns), and anything that is not a frame there raises
    ``CheckpointCorruptError`` naming the log and the offset. From ``synced_to`` on, each value is
    hashed too, and the first frame that is not whole and intact ends the log (``Stop.TORN``).
    """
    changes: dict[str, Member | None] = {}
    pos = 0
    size = len(chunk)
    match = _FRAME.match
    while pos < size:
        lenient = at + pos >= synced_to
        if chunk[pos] == 0:
            if not lenient:
                raise _unreadable(where, at + pos)
            return at + pos, changes, Stop.ZEROS
        found = match(chunk, pos)
        if found is None:
            if b"\n" not in chunk[pos:]:
                return at + pos, changes, Stop.CUT  # a frame line cut short
            if lenient:
                return at + pos, changes, Stop.TORN
            raise _unreadable(where, at + pos)
        name, length, version, deleted = found.groups()
        if deleted is not None:
            changes[deleted.decode()] = None
            pos = found.end()
            continue
        start = found.end()
        end = start + int(length)
        if end >= size:
            return at + pos, changes, Stop.CUT  # the value cut short
        member = Member(at + start, end - start, version.decode())
        if chunk[end] != _NEWLINE or (lenient and not intact(name.decode(), member, chunk[start:end])):
            if lenient:
                return at + pos, changes, Stop.TORN
            raise _unreadable(where, at + pos)
        changes[name.decode()] = member
        pos = end + 1
    return at + pos, changes, Stop.CUT


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


def read_header(where: str, head: bytes) -> Header | None:
    """A log's first line, or None if the line was never fully written."""
    written = head.rstrip(b"\0")
    if len(head) < HEADER_LEN and (_MAGIC.startswith(written) or written.startswith(_MAGIC)):
        return None
    if head.startswith(_V1):
        raise CheckpointCorruptError(f"{where} is a record log of an earlier development version of statehitl "
                                     "(v1), which this version does not read")
    if (len(head) < HEADER_LEN or not head.startswith(_MAGIC) or head[HEADER_LEN - 1 : HEADER_LEN] != b"\n"
            or head[_ID_END:SYNCED_TO_OFFSET] != _SYNCED_TO):
        raise CheckpointCorruptError(f"{where} is not a statehitl record log (unknown first line)")
    digits = head[SYNCED_TO_OFFSET : HEADER_LEN - 1]
    return Header(
        head[SYNCED_FLAG_OFFSET : SYNCED_FLAG_OFFSET + 1] == b"1",
        head[SYNCED_FLAG_OFFSET + 1 : _ID_END],
        int(digits) if digits.isdigit() else HEADER_LEN,  # a garbled offset only makes more of the log lenient
    )
