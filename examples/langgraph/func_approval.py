"""Approve a refund in a functional-API workflow: ``@task`` steps, ``interrupt()`` in the ``@entrypoint``,
``Command(resume=...)`` to answer, and ``previous`` to keep a running total across runs of the thread
(LangGraph's functional API, ``langgraph.func``).

A LangGraph program with only its imports pointing at statehitl. Two ways to run it:

- ``python examples/langgraph/func_approval.py`` runs ``main()``: one process on ``InMemorySaver``, asking
  and answering "yes" in the same process.
- ``python examples/langgraph/func_approval.py start --store DIR --thread T`` runs until the workflow asks and
  exits; then, from a new process, ``python examples/langgraph/func_approval.py resume --store DIR --thread T
  --answer yes`` resumes the thread from ``FileCheckpointer(DIR)``. The tasks log to ``DIR/calls.txt`` (so the
  lookup, finished before the interrupt, can be seen not to run again) and the refund appends a line to
  ``DIR/ledger.txt`` (so it can be seen to run once); the last stdout line is the result as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.config import get_config
from statehitl.func import entrypoint, task
from statehitl.types import Command, interrupt


def log(directory: str | None, line: str) -> None:
    print(f"ran: {line}")
    if directory:
        with open(os.path.join(directory, "calls.txt"), "a") as f:
            f.write(line + "\n")


@task
def look_up_order(order: str, directory: str | None) -> dict:
    """A fake order lookup: the amount is the order number's digits."""
    log(directory, "look_up_order")
    return {"order": order, "amount": int("".join(c for c in order if c.isdigit()) or 0)}


@task
def refund(order: dict, directory: str | None) -> str:
    """The side effect that must happen once: a line in the ledger."""
    log(directory, "refund")
    if directory:
        with open(os.path.join(directory, "ledger.txt"), "a") as f:
            f.write(json.dumps(order) + "\n")
    return f"refunded ${order['amount']}"


def make_workflow(checkpointer: Any) -> Any:
    @entrypoint(checkpointer=checkpointer)
    def refund_workflow(request: dict, *, previous: Any = None) -> Any:
        directory = get_config()["configurable"].get("directory")
        order = look_up_order(request["order"], directory).result()
        decision = interrupt({"question": "Refund this order?", "order": order})
        outcome = refund(order, directory).result() if decision == "yes" else "declined"
        refunded = (previous or {}).get("refunded", 0) + (order["amount"] if decision == "yes" else 0)
        return entrypoint.final(value={"order": order, "decision": decision, "outcome": outcome},
                                save={"refunded": refunded})

    return refund_workflow


def main(answer: str = "yes") -> dict:
    workflow = make_workflow(InMemorySaver())
    config = {"configurable": {"thread_id": "refund-demo"}}
    result = workflow.invoke({"order": "order 42"}, config)
    question = result["__interrupt__"][0].value
    print(f"asked: {question['question']} {question['order']}")
    print(f"answer: {answer}")
    result = workflow.invoke(Command(resume=answer), config)
    print(f"final: {result}")
    workflow.invoke({"order": "order 8"}, config)
    second = workflow.invoke(Command(resume=answer), config)
    print(f"second: {second}, saved: {workflow.get_state(config).values}")
    return {"first": result, "second": second}


def durable(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--answer", default="yes")
    parser.add_argument("--order", default="order 42")
    args = parser.parse_args(argv)
    workflow = make_workflow(FileCheckpointer(args.store))
    config = {"configurable": {"thread_id": args.thread, "directory": args.store}}
    if args.mode == "start":
        result = workflow.invoke({"order": args.order}, config)
        waiting = [i.value for i in result.pop("__interrupt__", [])]
        print(f"waiting on {workflow.get_state(config).next}: {waiting}")
        result = {**result, "waiting": waiting}
    else:
        result = workflow.invoke(Command(resume=args.answer), config)
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
