"""Remember a user across conversations: a node reads and writes the store (its ``store`` parameter), and finds
memories by meaning with the store's semantic search (LangGraph's "long-term memory" pattern).

A LangGraph program with only its imports pointing at statehitl. The "model" is a plain function and the
embedding a word count, so every run is offline and gives the same output. Two ways to run it:

- ``python examples/langgraph/memory.py`` runs ``main()``: one process on ``InMemorySaver`` and
  ``InMemoryStore``, a user telling facts in one thread and asking about them in others.
- ``python examples/langgraph/memory.py chat --store DIR --user U --conversation C --text TEXT`` runs one turn on
  ``FileCheckpointer(DIR)`` and ``FileStore(DIR)``: a turn in a new process and a new conversation finds what an
  earlier one stored. The last stdout line is the reply and what the store holds about U, as JSON.
"""

from __future__ import annotations

import argparse
import json
import re

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.config import get_config
from statehitl.graph import START, MessagesState, StateGraph
from statehitl.store import FileStore
from statehitl.store.base import BaseStore
from statehitl.store.memory import InMemoryStore

DIMS = 64


def embed(texts: list[str]) -> list[list[float]]:
    """A toy embedding: each word counted into one of ``DIMS`` buckets (a real one calls a model)."""
    vectors = []
    for text in texts:
        vector = [0.0] * DIMS
        for word in re.findall(r"[a-z]+", text.lower()):
            vector[sum(map(ord, word)) % DIMS] += 1.0
        vectors.append(vector)
    return vectors


INDEX = {"embed": embed, "dims": DIMS, "fields": ["fact"]}


def text_of(message) -> str:
    """A message's text: a LangChain message's ``content`` (a plain dict's, where langchain-core is missing)."""
    return message["content"] if isinstance(message, dict) else message.content


def chat(state: MessagesState, *, store: BaseStore) -> dict:
    namespace = ("memories", get_config()["configurable"]["user_id"])
    text = text_of(state["messages"][-1])
    if text.lower().startswith("remember:"):
        fact = text.split(":", 1)[1].strip()
        known = store.search(namespace, limit=100)
        store.put(namespace, f"fact-{len(known) + 1}", {"fact": fact})
        reply = f"Noted: {fact}"
    else:
        found = store.search(namespace, query=text, limit=1)
        reply = f"You told me: {found[0].value['fact']}" if found else "I know nothing about you yet."
    return {"messages": [{"role": "assistant", "content": reply}]}


builder = StateGraph(MessagesState)
builder.add_node("chat", chat)
builder.add_edge(START, "chat")

TURNS = [
    ("ann", "1", "remember: I like green tea"),
    ("ann", "1", "remember: my cat is called Miso"),
    ("ann", "2", "what tea do I like?"),
    ("bob", "3", "what tea do I like?"),
    ("ann", "2", "what is my cat called?"),
]


def main() -> dict:
    store = InMemoryStore(index=INDEX)
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    for user, conversation, text in TURNS:
        config = {"configurable": {"thread_id": f"conversation-{conversation}", "user_id": user}}
        result = graph.invoke({"messages": [{"role": "user", "content": text}]}, config)
        print(f"[{conversation}] {user}: {text}\n    {text_of(result['messages'][-1])}")
    return {user: [item.value["fact"] for item in store.search(("memories", user))] for user in ("ann", "bob")}


def durable(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["chat"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--conversation", default="1")
    parser.add_argument("--thread", default="conversation", help="the prefix of the conversations' thread ids")
    parser.add_argument("--text", required=True)
    args = parser.parse_args(argv)
    store = FileStore(args.store, index=INDEX)
    graph = builder.compile(checkpointer=FileCheckpointer(args.store), store=store)
    config = {"configurable": {"thread_id": f"{args.thread}-{args.conversation}", "user_id": args.user}}
    result = graph.invoke({"messages": [{"role": "user", "content": args.text}]}, config)
    reply = text_of(result["messages"][-1])
    print(f"{args.user}: {args.text}\n    {reply}")
    out = {"reply": reply, "turns": len(result["messages"]),
           "memories": [item.value["fact"] for item in store.search(("memories", args.user))]}
    print(json.dumps(out, sort_keys=True))
    return out


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
