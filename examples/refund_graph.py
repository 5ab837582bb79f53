"""A refund graph that asks a human before paying, answered at the terminal (or from piped stdin).

    python examples/refund_graph.py            # asks y/N
    echo y | python examples/refund_graph.py   # answers from stdin
"""

from __future__ import annotations

import sys
import tempfile
from typing import Annotated

from pydantic import BaseModel

from statehitl.checkpoint import FileCheckpointer
from statehitl.graph import END, START, CompiledStateGraph, NodeContext, StateGraph, append


class Ticket(BaseModel):
    text: str
    amount: int = 0
    log: Annotated[list[str], append] = []
    approved: bool = False


def classify(state: Ticket) -> dict[str, object]:
    return {"log": f"classified {state.text!r}"}


def review(state: Ticket, ctx: NodeContext) -> dict[str, object]:
    answer = ctx.interrupt("refund-approval", reason={"text": state.text, "amount": state.amount})
    return {"approved": str(answer).strip().lower() == "y", "log": f"human said {answer!r}"}


def pay(state: Ticket) -> dict[str, object]:
    return {"log": f"paid ${state.amount}" if state.approved else "refund refused"}


def build(store: str) -> CompiledStateGraph[Ticket]:
    graph = StateGraph(Ticket)
    graph.add_node("classify", classify)
    graph.add_node("review", review)
    graph.add_node("pay", pay)
    graph.add_edge(START, "classify")
    graph.add_conditional_edges("classify", lambda s: "review" if "refund" in s.text else END)
    graph.add_edge("review", "pay")
    graph.add_edge("pay", END)
    return graph.compile(checkpointer=FileCheckpointer(store))


def main() -> None:
    store = tempfile.mkdtemp(prefix="statehitl-example-")
    app = build(store)
    result = app.invoke({"text": "refund please", "amount": 42}, thread_id="ticket-1")
    while result.stop_reason == "interrupt":
        responses = []
        for interrupt in result.interrupts:
            print(f"Approve refund of ${interrupt.reason['amount']} for {interrupt.reason['text']!r}? (y/N): ",
                  end="", flush=True)
            responses.append({"interruptResponse": {"interruptId": interrupt.id,
                                                    "response": sys.stdin.readline().strip()}})
        app = build(store)  # a fresh app, as another process would build it
        result = app.invoke(responses, thread_id="ticket-1")
    print(f"\nlog: {result.state.log}")
    print(f"approved: {result.state.approved}")


if __name__ == "__main__":
    main()
