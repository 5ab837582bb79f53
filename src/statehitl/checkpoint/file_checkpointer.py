"""The file store's checkpointer: ``FileCheckpointer(dir)``."""

from __future__ import annotations

import os
from typing import Any

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.file import FileStorage


class FileCheckpointer(Checkpointer):
    """Checkpoints in append-only record logs under ``directory``; a call returns once its checkpoint is fsynced."""

    def __init__(self, directory: str | os.PathLike[str] = ".statehitl", **options: Any) -> None:
        super().__init__(FileStorage(directory), **options)
