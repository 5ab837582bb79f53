"""A compiled subgraph as a node, with an ``interrupt()`` inside it: the parent stops when the subgraph's
node asks, and ``Command(resume=...)`` given to the parent continues inside the subgraph, at the node
that asked (LangGraph's "subgraphs" how-to: interrupts in a subgraph, shared state keys).

A LangGraph program with only its imports pointing at statehitl. Two ways to run it:

- ``python examples/langgraph/subgraph.py`` runs ``main()``: one process on ``InMemorySaver``.
- ``python examples/langgraph/subgraph.py start --store DIR --thread T`` runs until the editor is asked
  and exits; a new process, ``python examples/langgraph/subgraph.py resume --store DIR --thread T
  --answer "ship it"``, resumes the parent from ``FileCheckpointer(DIR)``. Every node appends its name
  to ``DIR/calls.txt``, so a run shows which nodes ran in which process (``research``, before the
  interrupt, runs once; ``ask_editor`` runs again on resume, as LangGraph re-runs the node that asked).
  The last stdout line is the final values as JSON. Every node also prints ``ran: <node>``.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TypedDict

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.config import get_config
from statehitl.graph import END, START, StateGraph
from statehitl.types import Command, interrupt


class State(TypedDict, total=False):
    topic: str
    draft: str
    verdict: str
    published: str


def ran(name: str) -> None:
    """Note that a node ran: on stdout, and in the calls file the run is configured with."""
    print(f"ran: {name}")
    path = get_config()["configurable"].get("calls_file")
    if path:
        with open(path, "a") as f:
            f.write(name + "\n")


# The subgraph: research, then ask the editor, then revise.
def research(state: State) -> dict:
    ran("research")
    return {"draft": f"{state['topic'].title()}: three facts, two quotes."}


def ask_editor(state: State) -> dict:
    ran("ask_editor")  # before the interrupt: it runs again when resumed
    verdict = interrupt({"question": "Publish this draft?", "draft": state["draft"]})
    return {"verdict": verdict}


def revise(state: State) -> dict:
    ran("revise")
    return {"draft": f"{state['draft']} (editor: {state['verdict']})"}


review = StateGraph(State)
review.add_node("research", research)
review.add_node("ask_editor", ask_editor)
review.add_node("revise", revise)
review.add_edge(START, "research")
review.add_edge("research", "ask_editor")
review.add_edge("ask_editor", "revise")
review.add_edge("revise", END)


# The parent: intake, the review subgraph as one node, publish.
def intake(state: State) -> dict:
    ran("intake")
    return {"topic": state["topic"].strip().lower()}


def publish(state: State) -> dict:
    ran("publish")
    return {"published": f"PUBLISHED {state['draft']}"}


builder = StateGraph(State)
builder.add_node("intake", intake)
builder.add_node("review", review.compile())
builder.add_node("publish", publish)
builder.add_edge(START, "intake")
builder.add_edge("intake", "review")
builder.add_edge("review", "publish")
builder.add_edge("publish", END)


def main(answer: str = "ship it") -> dict:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "subgraph-demo"}}
    result = graph.invoke({"topic": "  Tide Pools "}, config)
    print(f"asked: {result['__interrupt__'][0].value}, parent next: {graph.get_state(config).next}")
    result = graph.invoke(Command(resume=answer), config)
    print(f"final: {result['published']}")
    return result


def durable(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--answer", default="ship it")
    parser.add_argument("--topic", default="  Tide Pools ")
    args = parser.parse_args(argv)
    graph = builder.compile(checkpointer=FileCheckpointer(args.store))
    calls_file = os.path.join(args.store, "calls.txt")
    config = {"configurable": {"thread_id": args.thread, "calls_file": calls_file}}
    if args.mode == "start":
        result = graph.invoke({"topic": args.topic}, config)
        result["waiting"] = [i.value for i in result.pop("__interrupt__", [])]
        result["next"] = list(graph.get_state(config).next)
    else:
        result = graph.invoke(Command(resume=args.answer), config)
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
