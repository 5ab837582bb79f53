"""Map-reduce with ``Send``: a conditional edge sends one task per subject to the same node, their results
are gathered by an ``Annotated[list, operator.add]`` reducer, and a last node picks the best
(LangGraph's "map-reduce" how-to, with a deterministic fake model instead of an LLM).

A LangGraph program with only its imports pointing at statehitl. Two ways to run it:

- ``python examples/langgraph/map_reduce.py`` runs ``main()``: the graph compiled without a checkpointer,
  invoked once.
- ``python examples/langgraph/map_reduce.py start --store DIR --thread T`` compiles it with
  ``FileCheckpointer(DIR)`` and ``interrupt_before=["best_joke"]``: the map and the reduce run and the
  process exits at the breakpoint. A new process, ``python examples/langgraph/map_reduce.py resume
  --store DIR --thread T``, reads the stored jokes with ``get_state`` and continues with
  ``invoke(None, config)``. The last stdout line is the values as JSON.
"""

from __future__ import annotations

import argparse
import json
import operator
from typing import Annotated, TypedDict

from statehitl.checkpoint import FileCheckpointer
from statehitl.graph import END, START, StateGraph
from statehitl.types import Send


def fake_model(prompt: str) -> str:
    """A stand-in for an LLM: plain string operations, the same answer every time."""
    if prompt.startswith("subjects:"):
        topic = prompt.removeprefix("subjects:").strip()
        return {"animals": "penguins, sloths, octopuses"}.get(topic, f"{topic}, more {topic}")
    subject = prompt.removeprefix("joke:").strip()
    return f"Why do {subject} never lose at cards? Because {subject[::-1]} is their poker face."


class OverallState(TypedDict):
    topic: str
    subjects: list
    jokes: Annotated[list, operator.add]
    best_selected_joke: str


class JokeState(TypedDict):
    subject: str


def generate_topics(state: OverallState) -> dict:
    return {"subjects": [s.strip() for s in fake_model(f"subjects: {state['topic']}").split(",")]}


def continue_to_jokes(state: OverallState) -> list[Send]:
    return [Send("generate_joke", {"subject": s}) for s in state["subjects"]]


def generate_joke(state: JokeState) -> dict:
    return {"jokes": [fake_model(f"joke: {state['subject']}")]}


def best_joke(state: OverallState) -> dict:
    def score(joke: str) -> tuple[int, str]:  # the "judge": most vowels wins
        return sum(c in "aeiou" for c in joke.lower()), joke

    return {"best_selected_joke": max(state["jokes"], key=score)}


builder = StateGraph(OverallState)
builder.add_node("generate_topics", generate_topics)
builder.add_node("generate_joke", generate_joke)
builder.add_node("best_joke", best_joke)
builder.add_edge(START, "generate_topics")
builder.add_conditional_edges("generate_topics", continue_to_jokes, ["generate_joke"])
builder.add_edge("generate_joke", "best_joke")
builder.add_edge("best_joke", END)


def main() -> dict:
    graph = builder.compile()
    result = graph.invoke({"topic": "animals"})
    for joke in result["jokes"]:
        print(f"joke: {joke}")
    print(f"best: {result['best_selected_joke']}")
    return result


def durable(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--topic", default="animals")
    args = parser.parse_args(argv)
    graph = builder.compile(checkpointer=FileCheckpointer(args.store), interrupt_before=["best_joke"])
    config = {"configurable": {"thread_id": args.thread}}
    if args.mode == "start":
        result = graph.invoke({"topic": args.topic}, config)
    else:
        stored = graph.get_state(config)
        print(f"stored: {len(stored.values['jokes'])} jokes, next: {stored.next}")
        result = graph.invoke(None, config)
    print(json.dumps({**result, "next": list(graph.get_state(config).next)}, sort_keys=True))
    return result


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
