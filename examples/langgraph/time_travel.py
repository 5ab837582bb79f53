"""Time travel: run a graph to the end, walk its checkpoints with ``get_state_history``, pick the one
before ``write_joke``, fork it with ``update_state`` and replay from the fork with ``invoke(None, fork_config)``
(LangGraph's "time travel" how-to, with a deterministic fake model instead of an LLM).

A LangGraph program with only its imports pointing at statehitl. Two ways to run it:

- ``python examples/langgraph/time_travel.py`` runs ``main()``: one process on ``InMemorySaver``.
- ``python examples/langgraph/time_travel.py run --store DIR --thread T`` runs the graph to the end on
  ``FileCheckpointer(DIR)`` and exits; a new process, ``python examples/langgraph/time_travel.py fork
  --store DIR --thread T --topic chickens``, lists the stored history, forks the checkpoint before
  ``write_joke`` with the new topic and runs the fork. The last stdout line is the result as JSON.
"""

from __future__ import annotations

import argparse
import json
from typing import TypedDict

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.graph import END, START, StateGraph


class State(TypedDict, total=False):
    topic: str
    joke: str


def generate_topic(state: State) -> dict:
    return {"topic": "socks"}  # the fake model always suggests socks


def write_joke(state: State) -> dict:
    topic = state["topic"]
    return {"joke": f"I bought {topic} with holes in them. The {topic} were {len(topic)}/10, holey approved."}


builder = StateGraph(State)
builder.add_node("generate_topic", generate_topic)
builder.add_node("write_joke", write_joke)
builder.add_edge(START, "generate_topic")
builder.add_edge("generate_topic", "write_joke")
builder.add_edge("write_joke", END)


def show_history(graph, config: dict) -> list[dict]:
    history = []
    for snapshot in graph.get_state_history(config):  # newest first
        row = {"step": snapshot.metadata["step"], "source": snapshot.metadata["source"],
               "next": list(snapshot.next), "values": snapshot.values}
        print(f"  step {row['step']:>2} {row['source']:<6} next={row['next']} values={row['values']}")
        history.append(row)
    return history


def fork(graph, config: dict, topic: str) -> dict:
    original = graph.get_state(config).values
    print("history:")
    history = list(graph.get_state_history(config))
    show_history(graph, config)
    selected = next(s for s in history if s.next == ("write_joke",))
    print(f"forking step {selected.metadata['step']} with topic={topic!r}")
    fork_config = graph.update_state(selected.config, values={"topic": topic})
    forked = graph.invoke(None, fork_config)
    print(f"original: {original['joke']}")
    print(f"fork:     {forked['joke']}")
    print("history after the fork:")
    return {"original": original, "fork": forked, "history": show_history(graph, config)}


def main(topic: str = "chickens") -> dict:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "time-travel-demo"}}
    graph.invoke({}, config)
    return fork(graph, config, topic)


def durable(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["run", "fork"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--topic", default="chickens")
    args = parser.parse_args(argv)
    graph = builder.compile(checkpointer=FileCheckpointer(args.store))
    config = {"configurable": {"thread_id": args.thread}}
    result = graph.invoke({}, config) if args.mode == "run" else fork(graph, config, args.topic)
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
