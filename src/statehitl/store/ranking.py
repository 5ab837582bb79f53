"""Which found items a search returns, in what order: the pure half of ``search`` (no storage, no clock).

Without a query (or without an index) the matches come in namespace-then-key order, paged by ``offset`` and
``limit``. With one, as LangGraph's in-memory store ranks them: an item scores the best cosine similarity of
any of its vectors to the query's, the best first, paged over the items that have vectors; items without
vectors fill what is left of ``limit`` after them, unscored.
"""

from __future__ import annotations

from collections.abc import Sequence

from statehitl.store.embed import cosine
from statehitl.store.records import StoredItem


def page(found: Sequence[StoredItem], offset: int, limit: int) -> list[tuple[StoredItem, float | None]]:
    """The unranked page: ``limit`` items after ``offset``, none scored."""
    return [(record, None) for record in found[offset:offset + limit]]


def ranked(found: Sequence[StoredItem], query: Sequence[float], offset: int, limit: int
           ) -> list[tuple[StoredItem, float | None]]:
    """The page of ``found`` closest to the ``query`` vector, with their scores."""
    scored: list[tuple[float, int, StoredItem]] = []
    unscored: list[StoredItem] = []
    for order, record in enumerate(found):
        if record.vectors:
            best = max(cosine(query, vector) for vector in record.vectors.values())
            scored.append((best, order, record))
        else:
            unscored.append(record)
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    kept: list[tuple[StoredItem, float | None]] = [(record, score) for score, _, record in
                                                   scored[offset:offset + limit]]
    if len(kept) < limit:
        kept.extend((record, None) for record in unscored[:limit - len(kept)])
    return kept
