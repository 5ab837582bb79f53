"""A chat agent whose refunds wait for a human: ``create_react_agent(..., approve_tools=["refund"])``.

LangGraph's prebuilt agent (``statehitl.prebuilt`` for ``langgraph.prebuilt``) plus what LangGraph leaves to each
user to write: before a ``refund`` call runs, the graph asks one typed question per call (approve, edit the
arguments, or reject with a reason), bound to the call's digest. The lookup runs without asking (each call is a
task of its own, so it runs while the refund waits). The refund tool gets statehitl's idempotency key for its call
(``InjectedIdempotencyKey``) and hands it to the "payment service" (a ledger file), so a repeat would be
recognised there. The "model" is a scripted chat model, so every run is offline
and gives the same output.

- ``python examples/langgraph/react_approval.py`` runs ``main()``: one process on ``InMemorySaver``, answering
  with ``Command(resume={id: answer})``.
- ``python examples/langgraph/react_approval.py start --store DIR --thread T`` runs until the agent asks and exits;
  ``python examples/langgraph/react_approval.py resume --store DIR --thread T --answer approve|reject|edit:CENTS``
  answers from a new process on ``FileCheckpointer(DIR)``, quoting the digest it was shown. The refund appends a
  line to ``DIR/ledger.txt``; the last stdout line is the conversation as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.prebuilt import InjectedIdempotencyKey, create_react_agent
from statehitl.types import Command

ORDERS = {42: {"item": "kettle", "cents": 4200}}


@tool
def lookup_order(order_id: int) -> str:
    """Look an order up."""
    return json.dumps(ORDERS[order_id])


@tool
def refund(order_id: int, cents: int, key: Annotated[str, InjectedIdempotencyKey], config: RunnableConfig) -> str:
    """Refund part or all of an order."""
    ledger = config["configurable"].get("ledger")
    if ledger:  # the payment service: one line per refund, keyed so that a repeat is recognised
        with open(ledger, "a") as f:
            f.write(json.dumps({"order_id": order_id, "cents": cents, "key_prefix": key[:10]}) + "\n")
    return f"refunded {cents} cents on order {order_id}"


class ScriptedChat(BaseChatModel):
    """A stand-in for a chat model that decides from the conversation alone, so a new process picks up where the
    last one stopped: a request gets two tool calls, tool results get a summary."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            results = [m.content for m in messages if isinstance(m, ToolMessage)]
            reply = AIMessage(content="Done: " + "; ".join(str(r) for r in results), id="reply-2")
        else:
            reply = AIMessage(content="", id="reply-1", tool_calls=[
                {"name": "lookup_order", "args": {"order_id": 42}, "id": "call-lookup"},
                {"name": "refund", "args": {"order_id": 42, "cents": 4200}, "id": "call-refund"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(checkpointer: Any) -> Any:
    return create_react_agent(ScriptedChat(), [lookup_order, refund], prompt="You handle refunds.",
                              checkpointer=checkpointer, approve_tools=["refund"])


def answer_of(text: str) -> dict[str, Any]:
    """``approve``, ``reject`` or ``edit:CENTS`` as the answer vocabulary's JSON."""
    if text.startswith("edit:"):
        return {"type": "edit", "input": {"order_id": 42, "cents": int(text.removeprefix("edit:"))}}
    if text == "reject":
        return {"type": "reject", "message": "refunds over $40 need a manager"}
    return {"type": "approve"}


def conversation(result: dict[str, Any]) -> list[list[str]]:
    return [[m.type, str(m.content)] for m in result["messages"]]


def main(answer: str = "approve") -> list[list[str]]:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "refund-demo"}}
    result = app.invoke({"messages": [("user", "please refund order 42")]}, config)
    [asked] = result["__interrupt__"]
    print(f"asked: {asked.reason}")
    result = app.invoke(Command(resume={asked.id: answer_of(answer)}), config)
    print(f"final: {result['messages'][-1].content}")
    return conversation(result)


def durable(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--answer", default="approve")
    args = parser.parse_args(argv)
    app = build(FileCheckpointer(args.store))
    config = {"configurable": {"thread_id": args.thread, "ledger": os.path.join(args.store, "ledger.txt")}}
    if args.mode == "start":
        result = app.invoke({"messages": [("user", "please refund order 42")]}, config)
        waiting = [i.reason for i in result["__interrupt__"]]
        print(f"waiting on {app.get_state(config).next}: {waiting}")
        out = {"conversation": conversation(result), "waiting": waiting}
    else:
        [asked] = app.get_state(config).interrupts  # what the reviewer's UI showed, digest and all
        block = {"interruptId": asked.id, "response": answer_of(args.answer), "digest": asked.digest,
                 "responder": "ann"}
        result = app.invoke([{"interruptResponse": block}], config=config)
        out = {"conversation": conversation(result),
               "audit": [[e.outcome, e.responder] for e in app.audit(args.thread)]}
    print(json.dumps(out, sort_keys=True))
    return out


if __name__ == "__main__":
    import sys

    main() if len(sys.argv) == 1 else durable()
