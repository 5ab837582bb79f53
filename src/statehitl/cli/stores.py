"""Opening the store a command reads, with a clear word when a file store's directory is not there.

A file store is a directory, and a mistyped one (``--store file://./typo``) is just an empty store to the
engine: listing it finds nothing, which a command that reads would report as "nothing waiting" or "no
threads", and a user would believe. The commands that only read (``threads list|show|audit``, ``inbox``
and its ``show``/``answer``) open the store through here instead, and say the directory does not exist.
Commands that may meet a store before anything was written to it (a worker, a sweep) do not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from statehitl.cli._console import CliError

if TYPE_CHECKING:  # the checkpoint modules load pydantic: only when a command runs, not for --help
    from statehitl.checkpoint.engine import Checkpointer


def open_existing(url: str) -> Checkpointer:
    """The checkpointer for ``url``; ``CliError`` (exit 2) when it is a file store whose directory is missing."""
    from statehitl.checkpoint.engine import Checkpointer
    from statehitl.checkpoint.storage import directory_of

    checkpointer = Checkpointer.from_url(url)
    root = directory_of(checkpointer.storage)
    if root is not None and not root.is_dir():
        what = "is not a directory" if root.exists() else "does not exist"
        raise CliError(f"no store at {url}: the directory {root} {what} (is the path mistyped? nothing has been "
                       "stored there yet?)")
    return checkpointer
