"""``Bm25SearchStrategy`` beside Strands 1.62's ``strands.storage.search.bm25``: the same writes and queries
on a ``LocalFileStorage`` of each framework give the same keys in the same order with the same scores, and
the index file lands where Strands puts it. statehitl's stores without a directory use it with ``db_path``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
import strands.storage as strands_storage
import strands.storage.search.bm25 as strands_bm25

import statehitl.storage as statehitl_storage
import statehitl.storage.search.bm25 as statehitl_bm25
from statehitl.errors import StorageError

DOCS = {
    "guides/auth.md": b"OAuth2 authentication flow: the client asks for a token, then the authentication server",
    "guides/setup.md": b"Setup: install, configure the authentication provider, run the server",
    "notes/today.md": b"Dark mode toggle moved to Settings > Display. Authentication page unchanged.",
    "notes/.draft.md": b"authentication authentication authentication",  # hidden: never indexed
    "notes/binary.bin": bytes([0xFF, 0xFE]) + b" authentication \xff",
    "flows/token-refresh.md": b"Refreshing a token: the client sends its refresh token to the server",
}
QUERIES = ["authentication", "authentication server", "the token", "auth", "toggle display", "server client token",
           "of the", "a", "nothing-matches-this", "Authentication", "refresh*", "flow"]


async def _scenario(storage: Any, strategy: Any) -> dict[str, Any]:
    observed: dict[str, Any] = {}
    for key, value in DOCS.items():
        await storage.write(key, value)
    await storage.write("guides/setup.md", DOCS["guides/setup.md"])  # unchanged: not indexed again
    await storage.write("guides/auth.md", b"Authentication with passkeys; tokens retired")  # replaced
    for query in QUERIES:
        observed[f"search {query}"] = [(r.key, r.score, r.data) for r in await storage.search(query)]
    await storage.delete("notes/today.md")  # the index keeps it until it is written again, as Strands' does
    observed["after delete"] = [r.key for r in await storage.search("toggle")]
    notes = storage.namespace("notes")
    await notes.write("later.md", b"authentication reminder for the server move")
    observed["namespace search"] = [(r.key, r.score) for r in await notes.search("authentication server")]
    observed["parent search"] = [r.key for r in await storage.search("reminder")]
    await strategy.close()
    observed["reopened"] = [(r.key, r.score) for r in await storage.search("authentication")]
    await strategy.close()
    return observed


def run_on(framework: str, directory: Path) -> dict[str, Any]:
    storage_module = strands_storage if framework == "strands" else statehitl_storage
    bm25 = strands_bm25 if framework == "strands" else statehitl_bm25
    strategy = bm25.Bm25SearchStrategy()
    storage = storage_module.LocalFileStorage(str(directory), search_strategy=strategy)
    return asyncio.run(_scenario(storage, strategy))


def test_the_same_writes_and_queries_rank_the_same_keys_with_the_same_scores(tmp_path: Path) -> None:
    theirs = run_on("strands", tmp_path / "strands" / "memory")
    ours = run_on("statehitl", tmp_path / "statehitl" / "memory")
    assert ours == theirs
    # the comparison compared something: ranked results, prefixes, stop words, the hidden key left out
    assert {key for key, _, _ in ours["search authentication"]} == {
        "guides/auth.md", "guides/setup.md", "notes/today.md", "notes/binary.bin"}
    assert {key for key, _, _ in ours["search auth"]} == {key for key, _, _ in ours["search authentication"]}
    assert ours["search of the"] == ours["search a"] == ours["search nothing-matches-this"] == []
    assert all(0 < score < 1 and data is None for _, score, data in ours["search authentication server"])
    assert ours["after delete"] == ["notes/today.md"]
    assert ours["namespace search"] == [("later.md", ours["namespace search"][0][1])]
    assert ours["parent search"] == []  # each view has its own index, as each Strands directory has
    assert len(ours["reopened"]) == 4


def test_the_index_file_lands_where_strands_puts_it(tmp_path: Path) -> None:
    for framework in ("strands", "statehitl"):
        run_on(framework, tmp_path / framework / "memory")
    assert ".__strands_memory-fts5.sqlite" in os.listdir(tmp_path / "strands")
    assert ".__strands_memory-fts5.sqlite" in os.listdir(tmp_path / "statehitl")


def test_an_explicit_db_path_indexes_one_directory_only(tmp_path: Path) -> None:
    def program(framework: str) -> str:
        storage_module = strands_storage if framework == "strands" else statehitl_storage
        bm25 = strands_bm25 if framework == "strands" else statehitl_bm25
        strategy = bm25.Bm25SearchStrategy(bm25.Bm25SearchStrategyConfig(db_path=str(tmp_path / f"{framework}.db")))
        first = storage_module.LocalFileStorage(str(tmp_path / framework / "a"), search_strategy=strategy)
        second = storage_module.LocalFileStorage(str(tmp_path / framework / "b"), search_strategy=strategy)

        async def scenario() -> list[str]:
            await first.write("k.md", b"alpha beta")
            try:
                await second.search("alpha")
            except ValueError as error:
                return [str(error).split(" already indexes ")[0], str(error).split("'. ", 1)[1]]
            finally:
                await strategy.close()
            return []

        return asyncio.run(scenario())

    theirs, ours = program("strands"), program("statehitl")
    assert ours[0].replace("statehitl", "") == theirs[0].replace("strands", "")
    assert (ours[1], theirs[1]) == ("Omit db_path to keep one index per directory, or use one strategy per storage.",
                                    "Omit db_path to keep one index per directory (e.g. per FileMemoryStore), or use "
                                    "one strategy per storage.")


def test_a_store_without_a_directory_needs_a_db_path_and_then_ranks_as_a_file_store(tmp_path: Path) -> None:
    async def ranked(storage: Any, strategy: Any) -> list[tuple[str, float]]:
        for key, value in DOCS.items():
            await storage.write(key, value)
        found = [(r.key, r.score) for r in await storage.search("authentication server")]
        await strategy.close()
        return found

    with pytest.raises(StorageError, match="indexing failed") as refused:
        asyncio.run(statehitl_storage.InMemoryStorage(
            search_strategy=statehitl_bm25.Bm25SearchStrategy()).write("k", b"v"))
    assert "db_path=" in str(refused.value.__cause__)
    with pytest.raises(TypeError, match="InMemoryStorage has none"):
        asyncio.run(statehitl_storage.InMemoryStorage(search_strategy=statehitl_bm25.Bm25SearchStrategy()).search(
            "some words"))

    in_memory = statehitl_bm25.Bm25SearchStrategy(statehitl_bm25.Bm25SearchStrategyConfig(db_path=str(tmp_path / "m")))
    on_disk = statehitl_bm25.Bm25SearchStrategy()
    assert asyncio.run(ranked(statehitl_storage.InMemoryStorage(search_strategy=in_memory), in_memory)) == asyncio.run(
        ranked(statehitl_storage.LocalFileStorage(tmp_path / "files", search_strategy=on_disk), on_disk))
