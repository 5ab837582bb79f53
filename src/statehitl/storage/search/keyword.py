"""``KeywordSearchStrategy``: Strands' default search, a scan that counts the query's words in each entry.

An entry's text is its key without the file extension, then its value (read as UTF-8, bad bytes
replaced). Its score is how many distinct words of the query (lower-cased, split on anything that is
not a letter, digit or ``_``, common English words dropped) it contains; entries scoring 0 are left
out, the rest come best first, and ties keep the store's key order. Values are read a few at a time,
and one that cannot be read is skipped rather than failing the search. The same query on the same
entries ranks them as Strands does.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Final

from statehitl.errors import StorageError
from statehitl.storage.search.types import Searchable, StorageSearchResult

__all__ = ["STOP_WORDS", "KeywordSearchStrategy", "token_overlap_score", "tokenize"]

logger = logging.getLogger(__name__)

STOP_WORDS: Final = frozenset({
    "a", "about", "above", "after", "again", "all", "although", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "dare", "did",
    "do", "does", "during", "each", "either", "every", "few", "for", "from", "further", "had", "has", "have", "he",
    "her", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "may", "me", "might", "more",
    "most", "my", "need", "neither", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "ought",
    "our", "out", "over", "own", "same", "shall", "she", "should", "since", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "these", "they", "this", "those", "though", "through", "to", "too", "under",
    "unless", "until", "up", "us", "used", "very", "was", "we", "were", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "would", "yet", "you", "your",
})
"""Words a query's match ignores (the same ones Strands ignores)."""

_READ_BATCH: Final = 8
"""Values read at once during a scan: enough to overlap round trips, few enough not to be throttled."""
_WORD_SPLIT = re.compile(r"\W+")
_EXTENSION = re.compile(r"(?<=[^/])\.[^./]*$")


def tokenize(text: str) -> set[str]:
    """The distinct lower-cased words of ``text``."""
    return {token for token in _WORD_SPLIT.split(text.lower()) if token}


def token_overlap_score(query_tokens: set[str], content: str) -> int:
    """How many of ``query_tokens`` occur in ``content``."""
    return len(query_tokens & tokenize(content))


class KeywordSearchStrategy:
    """Token-overlap scoring over every entry of a store; needs no index, so ``index`` does nothing."""

    requires_host_fs: Final = False

    async def index(self, storage: Any, key: str, data: bytes, **kwargs: Any) -> None:
        """Nothing to do: every search reads the entries as they are."""
        return None

    async def search(self, storage: Searchable, query: str, **kwargs: Any) -> list[StorageSearchResult]:
        wanted = tokenize(query) - STOP_WORDS
        if not wanted:
            return []
        keys = await storage.list("")
        found: list[StorageSearchResult] = []
        for start in range(0, len(keys), _READ_BATCH):
            batch = keys[start:start + _READ_BATCH]
            values = await asyncio.gather(*(_read_or_skip(storage, key) for key in batch))
            for key, data in zip(batch, values, strict=True):
                if data is None:
                    continue
                score = token_overlap_score(wanted, f"{_EXTENSION.sub('', key)} {data.decode('utf-8', 'replace')}")
                if score > 0:
                    found.append(StorageSearchResult(key=key, score=score, data=data))
        found.sort(key=lambda result: result.score, reverse=True)
        return found


async def _read_or_skip(storage: Searchable, key: str) -> bytes | None:
    """The value under ``key``, or None when it cannot be read (one bad entry does not fail a search)."""
    try:
        return await storage.read(key)
    except StorageError as error:
        logger.debug("key=<%s>, error=<%s> | skipped unreadable entry", key, error)
        return None
