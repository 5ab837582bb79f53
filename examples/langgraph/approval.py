"""Approve an action before it runs: ``interrupt()`` in a node, ``Command(resume=...)`` to answer, and
``Command(goto=...)`` to route on the answer (LangGraph's "human-in-the-loop: approve or reject" pattern).

A LangGraph program with only its imports pointing at statehitl. Two ways to run it:

- ``python examples/langgraph/approval.py`` runs ``main()``: one process on ``InMemorySaver``, asking
  and answering "yes" in the same process.
- ``python examples/langgraph/approval.py start --store DIR --thread T`` runs until the graph asks and exits;
  then, from a new process, ``python examples/langgraph/approval.py resume --store DIR --thread T --answer yes``
  resumes the thread from ``FileCheckpointer(DIR)``. The approved action appends a line to ``DIR/ledger.txt``
  (so it can be seen to run once); the last stdout line is the final values as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Literal, TypedDict

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.config import get_config
from statehitl.graph import END, START, StateGraph
from statehitl.types import Command, interrupt


class State(TypedDict, total=False):
    request: str
    action: dict
    decision: str
    outcome: str


def plan(state: State) -> dict:
    """A fake planner: turns the request into the action it would take."""
    amount = int("".join(c for c in state["request"] if c.isdigit()) or 0)
    return {"action": {"tool": "refund", "amount": amount, "reason": state["request"]}}


def human_approval(state: State) -> Command[Literal["execute", "cancel"]]:
    decision = interrupt({"question": "Approve this action?", "action": state["action"]})
    return Command(goto="execute" if decision == "yes" else "cancel", update={"decision": decision})


def execute(state: State) -> dict:
    action = state["action"]
    ledger = get_config()["configurable"].get("ledger")
    if ledger:  # the side effect that must happen once: a line in the ledger
        with open(ledger, "a") as f:
            f.write(json.dumps(action) + "\n")
    print(f"executed: {action['tool']} ${action['amount']}")
    return {"outcome": f"refunded ${action['amount']}"}


def cancel(state: State) -> dict:
    print("cancelled")
    return {"outcome": "cancelled"}


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("human_approval", human_approval)
builder.add_node("execute", execute)
builder.add_node("cancel", cancel)
builder.add_edge(START, "plan")
builder.add_edge("plan", "human_approval")
builder.add_edge("execute", END)
builder.add_edge("cancel", END)


def main(answer: str = "yes") -> dict:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "approval-demo"}}
    result = graph.invoke({"request": "refund order 42"}, config)
    question = result["__interrupt__"][0].value
    print(f"asked: {question['question']} {question['action']}")
    print(f"answer: {answer}")
    result = graph.invoke(Command(resume=answer), config)
    print(f"final: {result}")
    return result


def durable(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--answer", default="yes")
    parser.add_argument("--request", default="refund order 42")
    args = parser.parse_args(argv)
    graph = builder.compile(checkpointer=FileCheckpointer(args.store))
    ledger = os.path.join(args.store, "ledger.txt")
    config = {"configurable": {"thread_id": args.thread, "ledger": ledger}}
    if args.mode == "start":
        result = graph.invoke({"request": args.request}, config)
        waiting = [i.value for i in result.pop("__interrupt__", [])]
        print(f"waiting on {graph.get_state(config).next}: {waiting}")
        result = {**result, "waiting": waiting}
    else:
        result = graph.invoke(Command(resume=args.answer), config)
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
