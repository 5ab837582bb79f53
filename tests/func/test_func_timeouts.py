"""Time limits on a workflow's tasks and on the workflow itself (``@task(timeout=)``, ``@entrypoint(timeout=)``),
and a chat model's tokens as a node's progress: programs run on LangGraph and on statehitl, compared.

The limits here are far from what the functions do (a function that overruns sleeps ten times its limit; one
that makes progress does it at a fifth of it), so that a busy machine does not change what is observed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGenerationChunk


def names(library: str) -> SimpleNamespace:
    if library == "statehitl":
        from statehitl.errors import NodeTimeoutError
        from statehitl.func import entrypoint, task
        from statehitl.graph import END, START, StateGraph, add_messages
        from statehitl.types import RetryPolicy, TimeoutPolicy
    else:
        from langgraph.errors import NodeTimeoutError  # type: ignore[assignment]
        from langgraph.func import entrypoint, task  # type: ignore[assignment]
        from langgraph.graph import END, START, StateGraph, add_messages  # type: ignore[assignment]
        from langgraph.types import RetryPolicy, TimeoutPolicy  # type: ignore[assignment]
    return SimpleNamespace(NodeTimeoutError=NodeTimeoutError, entrypoint=entrypoint, task=task, END=END,
                           START=START, StateGraph=StateGraph, add_messages=add_messages, RetryPolicy=RetryPolicy,
                           TimeoutPolicy=TimeoutPolicy)


def outcome(lg: SimpleNamespace, call: Any) -> Any:
    """What awaiting ``call()`` gives, or the timeout's node, kind and limit (or another error's type)."""
    try:
        return asyncio.run(call())
    except lg.NodeTimeoutError as exc:
        return ("timed out", exc.node, exc.kind, exc.idle_timeout, exc.run_timeout)
    except Exception as exc:
        return ("raised", type(exc).__name__)


def refused(call: Any) -> Any:
    try:
        call()
    except ValueError as exc:
        return ("refused", "greater than 0" in str(exc) or "only supported for async nodes" in str(exc))
    return "accepted"


def task_limits(lg: SimpleNamespace) -> list[Any]:
    """A task's attempt past its limit fails the workflow with ``NodeTimeoutError`` naming the task; a retry
    policy retrying on it runs the next attempt; the task's own ``timeout`` argument is the function's."""
    attempts: list[int] = []

    @lg.task(timeout=lg.TimeoutPolicy(idle_timeout=0.2))
    async def slow(x: int) -> int:
        await asyncio.sleep(2.0)
        return x

    @lg.task(timeout=0.3, retry_policy=lg.RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False,
                                                          retry_on=lg.NodeTimeoutError))
    async def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 2:
            await asyncio.sleep(3.0)
        return x * 10

    @lg.task(timeout=5.0)
    async def echo(*, timeout: int) -> int:
        return timeout

    @lg.entrypoint()
    async def slow_flow(x: int) -> int:
        return await slow(x)

    @lg.entrypoint()
    async def flaky_flow(x: int) -> int:
        return await flaky(x) + await echo(timeout=x)

    return [outcome(lg, lambda: slow_flow.ainvoke(1)), outcome(lg, lambda: flaky_flow.ainvoke(4)), len(attempts)]


def workflow_limits(lg: SimpleNamespace) -> list[Any]:
    """An entrypoint's own limit; limits that are not above 0, and limits on sync functions (which cannot be
    cancelled), are refused where they are declared."""

    @lg.entrypoint(timeout=lg.TimeoutPolicy(run_timeout=0.2))
    async def slow_flow(x: int) -> int:
        await asyncio.sleep(2.0)
        return x

    @lg.entrypoint(timeout=5.0)
    async def quick_flow(x: int) -> int:
        return x + 1

    def sync(x: int) -> int:
        return x

    return [outcome(lg, lambda: slow_flow.ainvoke(1)), outcome(lg, lambda: quick_flow.ainvoke(1)),
            refused(lambda: lg.task(timeout=0)), refused(lambda: lg.entrypoint(timeout=-1.0)),
            refused(lambda: lg.task(timeout=1.0)(sync)), refused(lambda: lg.entrypoint(timeout=1.0)(sync))]


class Tokens(GenericFakeChatModel):
    """A chat model streaming eight tokens, one every 0.1 s."""

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        for i in range(8):
            await asyncio.sleep(0.1)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=str(i),
                                                               chunk_position="last" if i == 7 else None))
            if run_manager:
                await run_manager.on_llm_new_token(str(i), chunk=chunk)
            yield chunk


def tokens_are_progress(lg: SimpleNamespace) -> list[Any]:
    """Under ``stream_mode="messages"``, each token a node's chat model streams is progress for the node's
    ``idle_timeout``: a call longer than the limit, with no pause as long, finishes."""

    # the functional form: its reducer is the library's own, which a class body here could not name
    chat = TypedDict("chat", {"messages": Annotated[list[BaseMessage], lg.add_messages]})  # type: ignore[misc]  # noqa: UP013
    model = Tokens(messages=iter([AIMessage("unused")]))

    async def call_model(state: Any) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = lg.StateGraph(chat)
    g.add_node("call_model", call_model, timeout=lg.TimeoutPolicy(idle_timeout=0.6))
    g.add_edge(lg.START, "call_model")
    g.add_edge("call_model", lg.END)
    app = g.compile()

    async def run() -> list[Any]:
        return [chunk.content async for chunk, _ in app.astream({"messages": [HumanMessage("hi")]},
                                                                stream_mode="messages")]

    return [outcome(lg, run)]


PROGRAMS = [task_limits, workflow_limits, tokens_are_progress]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert program(names("statehitl")) == program(names("langgraph"))
