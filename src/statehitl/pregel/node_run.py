"""A ``PregelNode`` as the function a StateGraph node runs: read its channels from the state, pass the input
through its steps, and return its writes with the nodes they wake (``Command(update=, goto=)``).

So a low-level graph is a StateGraph whose nodes route themselves by what they wrote: the superstep engine
runs every woken node in the next step, applies the step's writes together through the channels' reducers,
checkpoints, interrupts and resumes as it does for any graph.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statehitl.channels.base import BaseChannel
from statehitl.commands import Command
from statehitl.graph.node_calls import is_async_callable
from statehitl.graph.runnables import is_runnable
from statehitl.pregel.node_builder import PASSTHROUGH, PregelNode, subscribers


def _is_async_step(step: Any) -> bool:
    """Whether a step awaits: an async function, or a Runnable that is one (an async ``RunnableLambda``, also
    inside ``with_config``; a ``RunnableParallel`` of async branches only)."""
    if not is_runnable(step):
        return is_async_callable(step)
    if hasattr(step, "bound"):
        return _is_async_step(step.bound)
    if hasattr(step, "steps__"):
        return all(_is_async_step(branch) for branch in step.steps__.values())
    return hasattr(step, "afunc") and not hasattr(step, "func")


def is_async_node(node: PregelNode) -> bool:
    """Whether the node runs as an async function (any of its steps awaits)."""
    return any(_is_async_step(step) for step in node.bound)


def _wants_config(step: Callable[..., Any]) -> bool:
    try:
        return "config" in inspect.signature(step).parameters
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Step:
    """One ``do()`` step, read once when the graph is built: a Runnable (``invoke``/``ainvoke``), an async
    function, or a sync one; a function with a ``config`` parameter gets the node's config."""

    fn: Any
    runnable: bool
    awaits: bool
    wants_config: bool

    @classmethod
    def of(cls, fn: Any) -> Step:
        runnable = is_runnable(fn)
        return cls(fn, runnable, not runnable and is_async_callable(fn), not runnable and _wants_config(fn))

    def call(self, value: Any, config: dict[str, Any]) -> Any:
        if self.runnable:
            return self.fn.invoke(value)
        return self.fn(value, config=config) if self.wants_config else self.fn(value)

    async def acall(self, value: Any, config: dict[str, Any]) -> Any:
        if self.runnable:
            return await self.fn.ainvoke(value)
        if self.awaits:
            return await self.call(value, config)
        return await asyncio.to_thread(self.call, value, config)


class NodeRun:
    """What one node reads and writes, given the graph's channels and nodes (for whom its writes wake)."""

    def __init__(self, node: PregelNode, channels: dict[str, BaseChannel], nodes: dict[str, PregelNode]) -> None:
        self.node = node
        self.channels = channels
        self.nodes = nodes

    def read(self, state: dict[str, Any]) -> Any:
        read = self.node.channels
        if isinstance(read, str):
            return state.get(read)
        return {name: state[name] for name in read if name in state}

    def writes(self, output: Any) -> Command[Any]:
        update: dict[str, Any] = {}
        for entry in self.node.writers:
            value = output if entry.value is PASSTHROUGH else entry.value
            if entry.mapper is not None:
                value = entry.mapper(value)
            if value is None and entry.skip_none:
                continue
            update[entry.channel] = self.channels[entry.channel].stored(value)
        return Command(update=update, goto=subscribers(self.nodes, list(update)))


def node_function(run: NodeRun) -> Callable[..., Any]:
    """The StateGraph node of ``run``: async when a step of it awaits, else a plain function (which the
    engine runs in a worker thread)."""
    steps = [Step.of(fn) for fn in run.node.bound]
    if is_async_node(run.node):

        async def run_async(state: dict[str, Any], config: dict[str, Any]) -> Command[Any]:
            value = run.read(state)
            for step in steps:
                value = await step.acall(value, config)
            return run.writes(value)

        return run_async

    def run_sync(state: dict[str, Any], config: dict[str, Any]) -> Command[Any]:
        value = run.read(state)
        for step in steps:
            value = step.call(value, config)
        return run.writes(value)

    return run_sync
