"""The Model contract and the worker-thread bridge providers stream through."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from statehitl.models import Model, ModelError
from statehitl.models.base import iterate_in_thread, require_known_options


def test_a_model_must_implement_stream_and_config() -> None:
    with pytest.raises(TypeError, match="stream"):
        Model()  # type: ignore[abstract]


def test_items_arrive_in_order_from_a_worker_thread() -> None:
    threads: set[int] = set()

    def produce() -> Iterator[int]:
        threads.add(threading.get_ident())
        yield from range(5)

    async def consume() -> list[int]:
        return [item async for item in iterate_in_thread(produce)]

    assert asyncio.run(consume()) == [0, 1, 2, 3, 4]
    assert threading.get_ident() not in threads


@pytest.mark.parametrize("fail_after", [0, 2])
def test_errors_in_the_thread_reach_the_consumer(fail_after: int) -> None:
    def produce() -> Iterator[int]:
        yield from range(fail_after)
        raise ModelError("connection reset")

    got: list[int] = []

    async def consume() -> None:
        async for item in iterate_in_thread(produce):
            got.append(item)

    with pytest.raises(ModelError, match="connection reset"):
        asyncio.run(consume())
    assert got == list(range(fail_after))


def test_an_error_opening_the_stream_reaches_the_consumer() -> None:
    def produce() -> Iterator[int]:
        raise ConnectionRefusedError("refused")

    async def consume() -> None:
        async for _ in iterate_in_thread(produce):
            pass

    with pytest.raises(ConnectionRefusedError):
        asyncio.run(consume())


def test_a_consumer_that_stops_early_closes_the_producer() -> None:
    closed = threading.Event()
    release = threading.Event()

    def produce() -> Iterator[int]:
        try:
            yield 1
            release.wait(5)
            yield 2
            yield 3
        finally:
            closed.set()

    async def consume() -> int:
        stream = iterate_in_thread(produce)
        first = await anext(stream)
        await stream.aclose()
        release.set()
        return first

    assert asyncio.run(consume()) == 1
    assert closed.wait(5)


def test_unknown_options_are_rejected_with_the_known_ones() -> None:
    require_known_options("M", ["model_id"], {"model_id", "temperature"})
    with pytest.raises(TypeError, match=r"unknown option.* temprature; it takes model_id, temperature"):
        require_known_options("M", ["temprature"], {"model_id", "temperature"})
