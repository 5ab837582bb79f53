"""Whether the fsync of a new file also makes its name durable, told by the filesystem it is on.

POSIX promises a new file's directory entry on disk only after an fsync of the directory, and on a
journaling filesystem that sync is a journal commit of its own for each new log, a visible part of
an interrupt round trip (``benchmarks/`` measures it). On ext4, XFS and btrfs the sync of the file itself already
makes its name durable. ext4 and XFS record a file's creation and its directory entry in one journal
transaction, and a file's sync forces the journal at least that far (ext4 without a journal syncs
the parent directory of a new file explicitly, for this reason); btrfs logs a new inode's names with
it. There the file store leaves the directory alone; on any other filesystem, or where the type
cannot be told (no ``/proc``), it syncs the directory as POSIX asks.
"""

from __future__ import annotations

import os

__all__ = ["filesystem_type", "fsync_covers_new_name"]

_NAMED_BY_FILE_SYNC = frozenset({"ext4", "xfs", "btrfs"})
_covers: dict[int, bool] = {}


def fsync_covers_new_name(device: int) -> bool:
    """Whether a new file's fsync makes its name durable on ``device`` (an ``st_dev``); asked once each."""
    covers = _covers.get(device)
    if covers is None:
        covers = _covers[device] = filesystem_type(device) in _NAMED_BY_FILE_SYNC
    return covers


def filesystem_type(device: int, mountinfo: str | None = None) -> str | None:
    """The type of the filesystem on ``device``, from ``/proc/self/mountinfo`` (None if not found)."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as lines:
                mountinfo = lines.read()
        except OSError:
            return None
    wanted = f"{os.major(device)}:{os.minor(device)}"
    for line in mountinfo.splitlines():
        # ID PARENT MAJOR:MINOR ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS
        fields = line.split(" ")
        if len(fields) > 2 and fields[2] == wanted and "-" in fields[6:]:
            rest = fields[fields.index("-", 6) + 1 :]
            if rest:
                return rest[0]
    return None
