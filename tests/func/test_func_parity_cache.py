"""A cached task's result in the ``"updates"`` stream, as on LangGraph: a call answered from the workflow's
cache (``@task(cache_policy=...)`` with ``@entrypoint(cache=...)``) streams ``{task: result, "__metadata__":
{"cached": True}}``; a call that ran streams ``{task: result}``. Each program is written once against a namespace
of each library's names, run on the real LangGraph and on statehitl, and what it observes must be equal."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest


def names(root: str) -> SimpleNamespace:
    import importlib

    load = lambda path: importlib.import_module(f"{root}.{path}")  # noqa: E731
    return SimpleNamespace(entrypoint=load("func").entrypoint, task=load("func").task,
                           CachePolicy=load("types").CachePolicy, InMemoryCache=load("cache.memory").InMemoryCache,
                           InMemorySaver=load("checkpoint.memory").InMemorySaver)


def cached_updates(lg: SimpleNamespace) -> list[Any]:
    """The same call twice in a run (the second from the cache), a different call, and the first call again in
    another thread: what ``"updates"`` streams and how often the task ran."""
    ran: list[int] = []

    @lg.task(cache_policy=lg.CachePolicy(ttl=120))
    def double(x: int) -> int:
        ran.append(x)
        return x * 2

    @lg.entrypoint(checkpointer=lg.InMemorySaver(), cache=lg.InMemoryCache())
    def workflow(x: int) -> list[int]:
        return [double(x).result(), double(x).result(), double(x + 1).result()]

    first = list(workflow.stream(5, {"configurable": {"thread_id": "1"}}, stream_mode="updates"))
    again = list(workflow.stream(5, {"configurable": {"thread_id": "2"}}, stream_mode=["updates", "values"]))
    return [first, again, ran]


def cached_updates_async(lg: SimpleNamespace) -> list[Any]:
    """An async task answered from the cache, through ``astream``."""
    ran: list[int] = []

    @lg.task(cache_policy=lg.CachePolicy())
    async def triple(x: int) -> int:
        ran.append(x)
        return x * 3

    @lg.entrypoint(cache=lg.InMemoryCache())
    async def workflow(x: int) -> int:
        return await triple(x) + await triple(x)

    async def run() -> list[Any]:
        return [chunk async for chunk in workflow.astream(2, stream_mode="updates")]

    return [asyncio.run(run()), ran]


@pytest.mark.parametrize("program", [cached_updates, cached_updates_async])
def test_a_cached_task_result_is_streamed_as_cached(program: Any) -> None:
    pytest.importorskip("langgraph")
    assert program(names("statehitl")) == program(names("langgraph"))
