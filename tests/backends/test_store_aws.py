"""The store contract (tests/store_contract.py) on the real local S3 (moto_server) and DynamoDB (DynamoDB Local)
servers, reached over HTTP by URL, as a deployment opens them; and a graph whose nodes remember on them."""

from __future__ import annotations

import operator
import subprocess
import sys
from typing import Annotated, Any, TypedDict

import pytest

from statehitl.checkpoint import Checkpointer
from statehitl.graph import START, StateGraph
from statehitl.store import StorageStore
from statehitl.store.base import BaseStore
from store_contract import Clock, StoreContract


class TestCloudStore(StoreContract):
    @pytest.fixture
    def make_store(self, cloud_store_url: str) -> Any:
        def make(index: Any = None, ttl: Any = None, clock: Clock | None = None) -> StorageStore:
            return StorageStore.from_url(cloud_store_url, index=index, ttl=ttl, clock=clock or Clock())

        return make


class Chat(TypedDict):
    user: str
    said: Annotated[list[str], operator.add]


def remember(state: Chat, *, store: BaseStore) -> dict[str, Any]:
    known = store.get(("memories", state["user"]), "facts")
    facts = [*(known.value["facts"] if known else []), state["said"][-1]]
    store.put(("memories", state["user"]), "facts", {"facts": facts})
    return {"said": [f"I know {len(facts)} thing(s) about you"]}


def test_a_graph_remembers_across_threads_and_processes_on_the_cloud_store(cloud_store_url: str) -> None:
    builder = StateGraph(Chat)
    builder.add_node(remember)
    builder.add_edge(START, "remember")
    graph = builder.compile(checkpointer=Checkpointer.from_url(cloud_store_url),
                            store=StorageStore.from_url(cloud_store_url))
    graph.invoke({"user": "ann", "said": ["I like tea"]}, {"configurable": {"thread_id": "t1"}})
    code = (
        "import sys; from statehitl.store import StorageStore; "
        "print(StorageStore.from_url(sys.argv[1]).get(('memories', 'ann'), 'facts').value)"
    )
    done = subprocess.run([sys.executable, "-c", code, cloud_store_url], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'facts': ['I like tea']}"
    result = graph.invoke({"user": "ann", "said": ["I walk"]}, {"configurable": {"thread_id": "t2"}})
    assert result["said"] == ["I walk", "I know 2 thing(s) about you"]
