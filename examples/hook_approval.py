"""Approval from a hook: ``BeforeNodeCallEvent`` interrupts before two concurrent cleanups run.

Both cleanups are ready in the same step, so both hooks fire and both interrupts come back together;
each answer goes to its own node. A "n" cancels that node (``event.cancel_node``), which stops the run.

    printf 'y\\ny\\n' | python examples/hook_approval.py
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

from pydantic import BaseModel

from statehitl.graph import END, START, StateGraph, append
from statehitl.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry


class Cleanup(BaseModel):
    done: Annotated[list[str], append] = []


class ApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if not event.node_id.startswith("cleanup"):
            return
        approval = event.interrupt(f"{self.app_name}-approval", reason={"node": event.node_id})
        if approval.lower() != "y":
            event.cancel_node = f"user denied {event.node_id}"


def cleanup_logs(state: Cleanup) -> dict[str, str]:
    return {"done": "logs"}


def cleanup_tmp(state: Cleanup) -> dict[str, str]:
    return {"done": "tmp"}


def main() -> None:
    graph = StateGraph(Cleanup)
    graph.add_node("cleanup_logs", cleanup_logs)
    graph.add_node("cleanup_tmp", cleanup_tmp)
    graph.add_edge(START, "cleanup_logs")
    graph.add_edge(START, "cleanup_tmp")
    graph.add_edge("cleanup_logs", END)
    graph.add_edge("cleanup_tmp", END)
    app = graph.compile(hooks=[ApprovalHook("myapp")])

    result = app.invoke({}, thread_id="cleanup")
    while result.stop_reason == "interrupt":
        responses = []
        for interrupt in result.interrupts:
            print(f"Run {interrupt.reason['node']}? (y/N): ", end="", flush=True)
            responses.append({"interruptResponse": {"interruptId": interrupt.id,
                                                    "response": sys.stdin.readline().strip()}})
        result = app.invoke(responses, thread_id="cleanup")
    print(f"\nstop_reason: {result.stop_reason}")
    print(f"done: {sorted(result.state.done)}")
    if result.cancelled:
        print(f"cancelled: {result.cancelled}")


if __name__ == "__main__":
    main()
