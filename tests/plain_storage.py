"""A store reduced to the four ``Storage`` primitives, for tests of what the engine does without the
optional ones (``read_all``, ``version``): as on S3, it then writes and reads a Fenwick chain."""

from __future__ import annotations

from statehitl.checkpoint.storage import Storage


class PrimitivesOnly:
    """``inner``'s ``read``, ``write``, ``list`` and ``delete``, and nothing else."""

    def __init__(self, inner: Storage) -> None:
        self.read, self.write, self.list, self.delete = inner.read, inner.write, inner.list, inner.delete
