"""What every statehitl store promises, whatever its storage: one test class, run on the in-memory and file
stores (tests/store/test_store.py) and on the real S3 and DynamoDB servers (tests/backends/test_store_aws.py).

A subclass gives the fixture ``make_store(index=None, ttl=None, clock=None)``, which builds a store on a
fresh storage the first time and, called again, another store object on the *same* storage (another
process would see what a second object sees)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from statehitl.errors import InvalidIndexError, InvalidNamespaceError, NotJSONError
from statehitl.store import GetOp, ListNamespacesOp, PutOp, SearchOp
from statehitl.store.base import MatchCondition


class Clock:
    """Seconds since the epoch that move only when a test says so."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def letters(texts: list[str]) -> list[list[float]]:
    """A fake embedding: how many a, b and c a text has."""
    return [[float(t.count("a")), float(t.count("b")), float(t.count("c"))] for t in texts]


class LikeLangChainEmbeddings:
    """An object with LangChain's Embeddings methods (sync only), counting its calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return letters(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls.append([text])
        return letters([text])[0]


def keys(found: list[Any]) -> list[tuple[tuple[str, ...], str]]:
    return [(item.namespace, item.key) for item in found]


class StoreContract:
    # -- put, get, delete ------------------------------------------------------------------------

    def test_put_then_get_gives_the_value_and_its_times(self, make_store: Any) -> None:
        clock = Clock()
        store = make_store(clock=clock)
        store.put(("users", "ann"), "prefs", {"theme": "dark", "size": 3})
        clock.now += 60
        store.put(("users", "ann"), "prefs", {"theme": "light"})
        item = store.get(("users", "ann"), "prefs")
        assert item.value == {"theme": "light"}
        assert (item.namespace, item.key) == (("users", "ann"), "prefs")
        assert item.updated_at.timestamp() - item.created_at.timestamp() == 60  # created_at kept by the update
        assert store.get(("users", "ann"), "missing") is None
        assert store.get(("users",), "prefs") is None  # another namespace

    def test_a_value_read_back_is_a_copy(self, make_store: Any) -> None:
        store = make_store()
        value = {"tags": ["a"]}
        store.put(("n",), "k", value)
        value["tags"].append("changed after the put")
        store.get(("n",), "k").value["tags"].append("changed after the get")
        assert store.get(("n",), "k").value == {"tags": ["a"]}

    def test_another_store_object_on_the_same_storage_sees_the_items(self, make_store: Any) -> None:
        make_store().put(("shared",), "k", {"v": 1})
        assert make_store().get(("shared",), "k").value == {"v": 1}

    def test_delete_removes_only_that_item(self, make_store: Any) -> None:
        store = make_store()
        for key in ("a", "a2", "a.b", "ab"):
            store.put(("n",), key, {"key": key})
        store.put(("n", "a"), "a", {"key": "deeper"})
        store.delete(("n",), "a")
        store.delete(("n",), "never-stored")
        assert store.get(("n",), "a") is None
        assert sorted(i.key for i in store.search(("n",))) == ["a", "a.b", "a2", "ab"]  # the deeper "a" stays
        assert store.get(("n", "a"), "a").value == {"key": "deeper"}

    def test_labels_and_keys_of_any_text_round_trip(self, make_store: Any) -> None:
        store = make_store()
        odd = [("ü ñ", "../etc/passwd"), ("a/b", "x y=z"), ("-lead", ""), ("用户", "k:@+%")]
        for label, key in odd:
            store.put((label, "x"), key, {"label": label, "key": key})
        for label, key in odd:
            assert store.get((label, "x"), key).value == {"label": label, "key": key}
        assert sorted(store.list_namespaces()) == sorted((label, "x") for label, _ in odd)

    @pytest.mark.parametrize(("namespace", "words"), [
        (("a.b",), "period"), (("",), "empty label"), ((1,), "type int"), ((), "cannot be empty"),
        ("users", "tuple of str"),
    ])
    def test_a_namespace_a_put_cannot_take_is_refused_and_nothing_is_stored(self, make_store: Any, namespace: Any,
                                                                           words: str) -> None:
        store = make_store()
        store.put(("ok",), "k", {"v": 1})
        with pytest.raises(InvalidNamespaceError, match=words):
            store.batch([PutOp(("ok",), "k", {"v": 2}), PutOp(namespace, "k", {"v": 3})])
        assert store.get(("ok",), "k").value == {"v": 1}
        assert store.list_namespaces() == [("ok",)]

    def test_the_langgraph_root_is_refused_to_put_and_left_to_batch(self, make_store: Any) -> None:
        """As in LangGraph: ``put`` keeps programs out of the library's own root; a ``PutOp`` handed to
        ``batch`` may use it (the library's own code keeps items there)."""
        store = make_store()
        with pytest.raises(InvalidNamespaceError, match="reserved"):
            store.put(("langgraph", "x"), "k", {"v": 1})
        assert store.list_namespaces() == []
        store.batch([PutOp(("langgraph", "x"), "k", {"v": 2})])
        assert store.get(("langgraph", "x"), "k").value == {"v": 2}

    def test_a_value_that_is_not_json_is_refused_before_anything_is_written(self, make_store: Any) -> None:
        store = make_store()
        with pytest.raises(NotJSONError, match=r"\$\.when"):
            store.batch([PutOp(("n",), "first", {"v": 1}), PutOp(("n",), "k", {"when": object()})])
        assert store.search(("n",)) == []

    def test_a_label_too_long_to_be_a_storage_key_is_refused(self, make_store: Any) -> None:
        with pytest.raises(InvalidNamespaceError, match="too long"):
            make_store().put(("x" * 300,), "k", {})

    # -- search ----------------------------------------------------------------------------------

    def test_search_finds_items_under_a_namespace_prefix_in_namespace_then_key_order(self, make_store: Any) -> None:
        store = make_store()
        for namespace, key in [(("docs", "b"), "1"), (("docs",), "z"), (("docs", "a"), "2"), (("docsx",), "1"),
                               (("docs", "a"), "1")]:
            store.put(namespace, key, {"n": key})
        assert keys(store.search(("docs",))) == [(("docs",), "z"), (("docs", "a"), "1"), (("docs", "a"), "2"),
                                                 (("docs", "b"), "1")]
        assert keys(store.search(("docs",), limit=2, offset=1)) == [(("docs", "a"), "1"), (("docs", "a"), "2")]
        assert len(store.search(())) == 5
        assert all(item.score is None for item in store.search(("docs",)))

    def test_search_filters_by_value(self, make_store: Any) -> None:
        store = make_store()
        rows = {"a": {"color": "red", "score": 4.5, "meta": {"lang": "en", "n": 1}, "tags": ["x", "y"]},
                "b": {"color": "blue", "score": 3, "meta": {"lang": "de"}},
                "c": {"color": "red", "score": "high"}}
        for key, value in rows.items():
            store.put(("items",), key, value)

        def found(**filter: Any) -> list[str]:
            return [i.key for i in store.search(("items",), filter=filter)]

        assert found(color="red") == ["a", "c"]
        assert found(score={"$gt": 3}) == ["a"]  # "high" is no number: no match, no error
        assert found(score={"$gte": 3, "$lt": 4.5}) == ["b"]
        assert found(color={"$ne": "red"}) == ["b"]
        assert found(meta={"lang": "en"}) == ["a"]
        assert found(tags=["x", "y"]) == ["a"]
        assert found(color="red", score={"$lte": 5}) == ["a"]
        assert found(missing={"$eq": None}) == ["a", "b", "c"]

    def test_an_unknown_filter_operator_is_refused(self, make_store: Any) -> None:
        with pytest.raises(ValueError, match=r"\$near"):
            make_store().search(("items",), filter={"score": {"$near": 3}})

    # -- list_namespaces -------------------------------------------------------------------------

    def test_list_namespaces_by_prefix_suffix_and_depth(self, make_store: Any) -> None:
        store = make_store()
        for namespace in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
                          ("a", "c", "f"), ("x",)]:
            store.put(namespace, "k", {})
        assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"),
                                                                          ("a", "b", "f")]
        assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
        assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
        assert store.list_namespaces(prefix=("a",), suffix=("*", "i")) == [("a", "b", "d", "i")]
        assert store.list_namespaces(max_depth=1) == [("a",), ("x",)]
        assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
        with pytest.raises(InvalidNamespaceError):
            store.list_namespaces(prefix=("a.b",))

    # -- batches ---------------------------------------------------------------------------------

    def test_a_batch_reads_the_store_as_it_was_before_its_puts(self, make_store: Any) -> None:
        store = make_store()
        store.put(("n",), "k", {"v": 0})
        results = store.batch([
            PutOp(("n",), "k", {"v": 1}), GetOp(("n",), "k"), SearchOp(("n",)), PutOp(("n",), "k", {"v": 2}),
            PutOp(("m",), "new", {"v": 3}), ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("n",)),)),
        ])
        assert results[0] is None
        assert results[1].value == {"v": 0}
        assert [i.value for i in results[2]] == [{"v": 0}]
        assert results[5] == [("n",)]
        assert store.get(("n",), "k").value == {"v": 2}  # the batch's last put of an item wins
        assert store.get(("m",), "new").value == {"v": 3}

    def test_the_async_twins(self, make_store: Any) -> None:
        store = make_store()

        async def program() -> list[Any]:
            await store.aput(("n", "1"), "k", {"v": 1})
            await store.aput(("n", "2"), "k", {"v": 2})
            got = await store.aget(("n", "1"), "k")
            found = await store.asearch(("n",), filter={"v": 2})
            listed = await store.alist_namespaces(prefix=("n",))
            await store.adelete(("n", "1"), "k")
            return [got.value, keys(found), listed, await store.aget(("n", "1"), "k"),
                    await store.abatch([GetOp(("n", "2"), "k")])]

        got, found, listed, deleted, batch = asyncio.run(program())
        assert (got, found, listed, deleted) == ({"v": 1}, [(("n", "2"), "k")], [("n", "1"), ("n", "2")], None)
        assert batch[0].value == {"v": 2}

    def test_concurrent_puts_of_one_item_each_land_whole(self, make_store: Any) -> None:
        clock = Clock()
        first, second = make_store(clock=clock), make_store(clock=clock)
        first.put(("n",), "k", {"writer": "none"})

        async def race() -> None:
            await asyncio.gather(*(store.aput(("n",), "k", {"writer": name, "pad": [name] * 50})
                                   for _ in range(5) for store, name in ((first, "first"), (second, "second"))))

        asyncio.run(race())
        value = first.get(("n",), "k").value
        assert value["writer"] in ("first", "second")
        assert value["pad"] == [value["writer"]] * 50

    # -- time to live ----------------------------------------------------------------------------

    def test_an_item_expires_ttl_minutes_after_its_last_put_or_read(self, make_store: Any) -> None:
        clock = Clock()
        store = make_store(clock=clock)
        store.put(("n",), "short", {"v": 1}, ttl=1)
        store.put(("n",), "forever", {"v": 2})
        clock.now += 50
        assert store.get(("n",), "short").value == {"v": 1}  # read at 50 s: it lives until 110 s
        clock.now += 50
        assert store.get(("n",), "short", refresh_ttl=False) is not None  # read at 100 s, without refreshing
        clock.now += 15
        assert store.get(("n",), "short") is None
        assert keys(store.search(("n",))) == [(("n",), "forever")]
        assert store.sweep_ttl() == 1
        assert store.list_namespaces() == [("n",)]
        assert store.get(("n",), "forever").value == {"v": 2}

    def test_a_search_refreshes_what_it_returns(self, make_store: Any) -> None:
        clock = Clock()
        store = make_store(clock=clock)
        store.put(("n",), "a", {"v": 1}, ttl=1)
        store.put(("n",), "b", {"v": 2}, ttl=1)
        clock.now += 50
        assert keys(store.search(("n",), filter={"v": 1})) == [(("n",), "a")]  # a now lives until 110 s
        clock.now += 5
        assert keys(store.search(("n",), refresh_ttl=False)) == [(("n",), "a"), (("n",), "b")]
        clock.now += 10
        assert keys(store.search(("n",))) == [(("n",), "a")]  # b expired at 60 s

    def test_ttl_defaults_come_from_the_ttl_config(self, make_store: Any) -> None:
        clock = Clock()
        store = make_store(clock=clock, ttl={"default_ttl": 2, "refresh_on_read": False})
        store.put(("n",), "k", {"v": 1})
        store.put(("n",), "kept", {"v": 1}, ttl=None)
        clock.now += 100
        assert store.get(("n",), "k") is not None  # not refreshed by this read
        clock.now += 30
        assert store.get(("n",), "k") is None
        assert store.get(("n",), "kept") is not None
        with pytest.raises(ValueError, match="ttl=-1"):
            store.put(("n",), "bad", {"v": 1}, ttl=-1)

    def test_putting_an_expired_item_again_starts_it_afresh(self, make_store: Any) -> None:
        clock = Clock()
        store = make_store(clock=clock)
        store.put(("n",), "k", {"v": 1}, ttl=1)
        clock.now += 120
        store.put(("n",), "k", {"v": 2})
        item = store.get(("n",), "k")
        assert item.value == {"v": 2}
        assert item.created_at == item.updated_at

    # -- semantic search -------------------------------------------------------------------------

    def test_search_with_a_query_ranks_by_similarity(self, make_store: Any) -> None:
        store = make_store(index={"embed": letters, "dims": 3, "fields": ["text"]})
        store.put(("docs",), "as", {"text": "aaaa", "kind": "x"})
        store.put(("docs",), "bs", {"text": "bbbb", "kind": "x"})
        store.put(("docs",), "mixed", {"text": "aabb", "kind": "y"})
        store.put(("docs",), "plain", {"other": "no text field"})
        found = store.search(("docs",), query="bbb")
        assert [i.key for i in found] == ["bs", "mixed", "as", "plain"]
        assert found[0].score == pytest.approx(1.0)
        assert found[-1].score is None
        assert [i.key for i in store.search(("docs",), query="a", filter={"kind": "x"})] == ["as", "bs"]
        assert [i.key for i in store.search(("docs",), query="a", limit=1, offset=1)] == ["mixed"]
        assert [i.key for i in store.search(("docs",))] == ["as", "bs", "mixed", "plain"]  # no query: key order

    def test_index_paths_and_index_false(self, make_store: Any) -> None:
        embeddings = LikeLangChainEmbeddings()
        store = make_store(index={"embed": embeddings, "dims": 3, "fields": ["title"]})
        store.put(("d",), "by-fields", {"title": "cc", "body": "aaaa"})
        store.put(("d",), "by-own-path", {"title": "cc", "notes": [{"t": "bb"}, {"t": "aaa"}]},
                  index=["notes[*].t"])
        store.put(("d",), "unindexed", {"title": "aaaa"}, index=False)
        assert embeddings.calls == [["cc"], ["bb", "aaa"]]
        found = store.search(("d",), query="aaa")
        assert [(i.key, i.score is not None) for i in found] == [("by-own-path", True), ("by-fields", True),
                                                                  ("unindexed", False)]

    def test_a_batch_embeds_a_text_once(self, make_store: Any) -> None:
        embeddings = LikeLangChainEmbeddings()
        store = make_store(index={"embed": embeddings, "dims": 3})
        store.batch([PutOp(("d",), "1", {"t": "ab"}), PutOp(("d",), "2", {"t": "ab"}), PutOp(("d",), "3", {"t": "c"})])
        assert embeddings.calls == [['{"t": "ab"}', '{"t": "c"}']]

    def test_an_async_embedding_function(self, make_store: Any) -> None:
        async def embed(texts: list[str]) -> list[list[float]]:
            await asyncio.sleep(0)
            return letters(texts)

        store = make_store(index={"embed": embed, "dims": 3, "fields": ["t"]})
        store.put(("d",), "b", {"t": "b"})
        store.put(("d",), "a", {"t": "a"})
        assert [i.key for i in store.search(("d",), query="aa")] == ["a", "b"]

    def test_vectors_of_the_wrong_size_are_refused_and_nothing_is_stored(self, make_store: Any) -> None:
        store = make_store(index={"embed": letters, "dims": 4})
        with pytest.raises(InvalidIndexError, match="dims=4"):
            store.put(("d",), "k", {"t": "a"})
        assert store.get(("d",), "k") is None

    def test_a_provider_name_is_not_an_embedding_function(self, make_store: Any) -> None:
        with pytest.raises(InvalidIndexError, match="init_embeddings"):
            make_store(index={"embed": "openai:text-embedding-3-small", "dims": 1536})

