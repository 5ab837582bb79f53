"""The demo's workflow: a refund that a human approves when it is over a limit.

The machine::

    START --> intake --> assess ..> pay                      (small amounts are auto-approved)
                               ..> approve ..> pay | reject  (a human answers y or n)
    pay --> END, reject --> END

``approve`` calls ``ctx.interrupt("refund-approval", reason={...})``; the run stops with a durable
checkpoint, and a later ``invoke`` with the answer (from any process) re-runs ``approve``, which now gets
the answer back from ``interrupt()``. Plain library code: ``statehitl.cli.demo`` is the command around it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from statehitl.cli._console import compact_json
from statehitl.graph import END, START, NodeContext, StateGraph, append

APPROVAL = "refund-approval"
"""The interrupt the ``approve`` node raises."""

AUTO_APPROVE_LIMIT = 50.0
"""Refunds up to this amount are approved without asking anyone."""

_YES = {"y", "yes"}


class Refund(BaseModel):
    """The demo's state: what was asked, what was decided, and an append-only log of who did what."""

    customer: str
    request: str
    amount: float = Field(gt=0)
    log: Annotated[list[str], append] = []
    decision: Literal["pending", "auto-approved", "approved", "rejected"] = "pending"
    paid: bool = False


def money(amount: float) -> str:
    """``120.0`` -> ``$120.00``."""
    return f"${amount:,.2f}"


def question(reason: Any) -> str:
    """The human-readable question for a ``refund-approval`` interrupt reason."""
    if isinstance(reason, dict) and isinstance(reason.get("amount"), int | float):
        return f"Approve refund of {money(reason['amount'])} to {reason.get('customer', 'the customer')}?"
    if isinstance(reason, dict) and isinstance(reason.get("question"), str):
        return str(reason["question"])
    return f"Approve? ({compact_json(reason)})"


def intake(state: Refund) -> dict[str, Any]:
    return {"log": f"intake: {state.customer} asks for {money(state.amount)} back: {state.request}"}


def assess(state: Refund) -> dict[str, Any]:
    limit = money(AUTO_APPROVE_LIMIT)
    if state.amount <= AUTO_APPROVE_LIMIT:
        return {
            "decision": "auto-approved",
            "log": f"assess: {money(state.amount)} is within the {limit} auto-approval limit",
        }
    return {"log": f"assess: {money(state.amount)} is over the {limit} auto-approval limit; a human decides"}


def after_assess(state: Refund) -> str:
    return "pay" if state.decision == "auto-approved" else "approve"


def approve(state: Refund, ctx: NodeContext) -> dict[str, Any]:
    reason = {"customer": state.customer, "amount": state.amount, "request": state.request}
    reason["question"] = question(reason)
    answer = ctx.interrupt(APPROVAL, reason=reason)
    approved = answer is True or (isinstance(answer, str) and answer.strip().lower() in _YES)
    verdict = "approved" if approved else "rejected"
    shown = answer if isinstance(answer, str) else compact_json(answer)
    return {"decision": verdict, "log": f"approve: {verdict} by a human (answer: {shown})"}


def after_approve(state: Refund) -> str:
    return "pay" if state.decision == "approved" else "reject"


def pay(state: Refund) -> dict[str, Any]:
    return {"paid": True, "log": f"pay: sent {money(state.amount)} to {state.customer}"}


def reject(state: Refund) -> dict[str, Any]:
    return {"log": f"reject: told {state.customer} the refund of {money(state.amount)} was declined"}


def build_graph() -> StateGraph[Refund]:
    """The demo's refund machine, not yet compiled (``statehitl draw statehitl.cli.demo:build_graph``)."""
    graph: StateGraph[Refund] = StateGraph(Refund)
    graph.add_node("intake", intake)
    graph.add_node("assess", assess)
    graph.add_node("approve", approve)
    graph.add_node("pay", pay)
    graph.add_node("reject", reject)
    graph.add_edge(START, "intake")
    graph.add_edge("intake", "assess")
    graph.add_conditional_edges("assess", after_assess, ["pay", "approve"])
    graph.add_conditional_edges("approve", after_approve, ["pay", "reject"])
    graph.add_edge("pay", END)
    graph.add_edge("reject", END)
    return graph
