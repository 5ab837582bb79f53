"""``Bm25SearchStrategy``: Strands' ranked full-text search, a BM25 index in SQLite's FTS5 (standard library).

Every value a store writes is handed to ``index`` (a key whose last segment starts with ``.`` is skipped,
and an unchanged value is not indexed again); ``search`` asks the index, never the store, so it costs the
same however many entries there are. A query keeps its words of two letters or more that are not common
English words, each matched as a word prefix, all of them required; results come best first, scored
``bm25 / (1 + bm25)`` (between 0 and 1), without their values. Only what was written through a store with
this strategy is found: entries already there are not indexed, and a deleted entry stays in the index
until written again (as in Strands). The same writes and query rank the same keys, with the same scores,
as Strands' strategy.

Where the index lives: one SQLite file per ``LocalFileStorage`` directory, beside it, named as Strands names
it (``.__strands_<dir>-fts5.sqlite``), or ``Bm25SearchStrategyConfig(db_path=...)``. Each namespace view
of a store has an index of its own (a table of that file), as each of Strands' namespace directories has
its own: a view finds what was written through it. Stores with no directory (memory, S3, DynamoDB) can
use the strategy with an explicit ``db_path``, a file on this machine, which then indexes that one store.
The index is derived data, rebuilt by writing the values again; the values themselves stay in the store.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any, Final

from statehitl.storage.search.keyword import STOP_WORDS, tokenize
from statehitl.storage.search.types import StorageSearchResult

__all__ = ["Bm25SearchStrategy", "Bm25SearchStrategyConfig"]


def _match_expression(query: str) -> str | None:
    """The FTS5 match expression of a natural-language query: its words of two letters or more that are not
    stop words, sorted, each a prefix (``word*``), all required; None when no word is left."""
    terms = sorted(term for term in tokenize(query) if len(term) > 1 and term not in STOP_WORDS)
    return " ".join(f"{term}*" for term in terms) if terms else None


@dataclass
class Bm25SearchStrategyConfig:
    """``db_path``: the SQLite file of the index. Default: beside the ``LocalFileStorage`` directory, one
    per directory. A ``db_path`` given holds one store's index: using the strategy with a second store (a
    second directory) is a ``ValueError``."""

    db_path: str | None = field(default=None)


@dataclass(frozen=True)
class _Where:
    """One view's index: the SQLite file, and the tables of the view in it."""

    db_path: str
    documents: str
    hashes: str


class Bm25SearchStrategy:
    """BM25 ranking over what a store wrote, for ``LocalFileStorage(search_strategy=Bm25SearchStrategy())``.

    One strategy may serve a store and its namespace views, each with its own index; ``close()`` closes
    every index file it opened (a search or write afterwards opens it again).
    """

    requires_host_fs: Final = True
    """The index is a file on this machine (Strands' flag for strategies a sandbox cannot run)."""

    def __init__(self, config: Bm25SearchStrategyConfig | None = None) -> None:
        self._config = config or Bm25SearchStrategyConfig()
        self._connections: dict[str, sqlite3.Connection] = {}
        self._tables: set[tuple[str, str]] = set()
        self._store: Any = None
        """With an explicit ``db_path``: the store it indexes (its directory, or its compare-and-set backend)."""
        self._lock = threading.Lock()  # SQLite work runs in worker threads, one at a time

    async def index(self, storage: Any, key: str, data: bytes, **kwargs: Any) -> None:
        """Index the value ``storage`` just wrote under ``key`` (relative to it)."""
        if key.rsplit("/", 1)[-1].startswith("."):
            return
        where = self._where(storage)
        digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
        await asyncio.to_thread(self._upsert, where, key, data.decode("utf-8", errors="replace"), digest)

    async def search(self, storage: Any, query: str, **kwargs: Any) -> builtins.list[StorageSearchResult]:
        """The keys of ``storage`` whose indexed values match ``query``, best first (values not read)."""
        expression = _match_expression(query)
        if expression is None:
            return []
        where = self._where(storage)
        return await asyncio.to_thread(self._query, where, expression)

    async def close(self) -> None:
        """Close every index file this strategy opened."""
        await asyncio.to_thread(self._close)

    # -- where a view's index is ----------------------------------------------------------------------

    def _where(self, storage: Any) -> _Where:
        view = str(getattr(storage, "namespace_path", ""))
        base_dir = getattr(storage, "base_dir", None)
        configured = self._config.db_path
        if base_dir is None and configured is None:
            raise TypeError(
                f"Bm25SearchStrategy keeps its index in a SQLite file beside a LocalFileStorage's directory, and "
                f"{type(storage).__name__} has none: give it a file, Bm25SearchStrategy(Bm25SearchStrategyConfig("
                "db_path=...)), or search with KeywordSearchStrategy"
            )
        store: Any = os.path.abspath(base_dir) if base_dir is not None else storage.backend
        if configured is not None:
            if self._store is None:
                self._store = store
            elif self._store is not store and self._store != store:
                raise ValueError(
                    f"Bm25SearchStrategy db_path {configured!r} already indexes {self._store!r} and cannot also index "
                    f"{store!r}. Omit db_path to keep one index per directory, or use one strategy per storage."
                )
            db_path = configured
        else:
            db_path = os.path.join(os.path.dirname(store), f".__strands_{os.path.basename(store)}-fts5.sqlite")
        suffix = "" if not view else "_" + hashlib.sha256(view.encode()).hexdigest()[:16]
        return _Where(db_path, f"documents{suffix}", f"doc_hashes{suffix}")

    # -- SQLite (in worker threads) -----------------------------------------------------------------

    def _open(self, where: _Where) -> sqlite3.Connection:
        connection = self._connections.get(where.db_path)
        if connection is None:
            if where.db_path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(where.db_path)), exist_ok=True)
            connection = sqlite3.connect(where.db_path, check_same_thread=False)
            self._connections[where.db_path] = connection
        if (where.db_path, where.documents) not in self._tables:
            try:
                connection.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {where.documents} USING fts5(key, content)")
            except sqlite3.OperationalError as error:
                raise RuntimeError("SQLite build lacks FTS5 support") from error
            connection.execute(f"CREATE TABLE IF NOT EXISTS {where.hashes} (key TEXT PRIMARY KEY, hash TEXT NOT NULL)")
            connection.commit()
            self._tables.add((where.db_path, where.documents))
        return connection

    def _upsert(self, where: _Where, key: str, content: str, digest: str) -> None:
        with self._lock:
            connection = self._open(where)
            row = connection.execute(f"SELECT hash FROM {where.hashes} WHERE key = ?", (key,)).fetchone()
            if row is not None and row[0] == digest:
                return
            with connection:  # one transaction: the entry is replaced whole or not at all
                connection.execute(f"DELETE FROM {where.documents} WHERE key = ?", (key,))
                connection.execute(f"INSERT INTO {where.documents} (key, content) VALUES (?, ?)", (key, content))
                connection.execute(f"INSERT OR REPLACE INTO {where.hashes} (key, hash) VALUES (?, ?)", (key, digest))

    def _query(self, where: _Where, expression: str) -> builtins.list[StorageSearchResult]:
        with self._lock:
            rows = self._open(where).execute(
                f"SELECT key, rank FROM {where.documents} WHERE {where.documents} MATCH ? ORDER BY rank",
                (expression,),
            ).fetchall()
        results = []
        for key, rank in rows:
            score = abs(rank)
            results.append(StorageSearchResult(key=key, score=score / (1.0 + score)))
        return results

    def _close(self) -> None:
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
            self._tables.clear()
            for connection in connections:
                connection.close()

    def __repr__(self) -> str:
        return f"Bm25SearchStrategy(db_path={self._config.db_path!r})"
