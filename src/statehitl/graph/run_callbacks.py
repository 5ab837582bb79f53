"""A graph run under LangChain callbacks (a call whose config lists ``callbacks``), as LangGraph runs one: the
run is one chain run of the graph's name (a tracer sees one root run, with the input, the output values and any
error; each node call is a run inside it, ``node_runs``), and the ``GraphCallbackHandler``s among them are told
when the run resumes a thread and when it stops on interrupts or at a breakpoint (``statehitl.callbacks``).
Loaded only by a call with callbacks, which therefore has langchain-core.

The events are the top graph's: a subgraph's resume is not told apart (LangGraph also tells one per subgraph
namespace).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.callbacks import AsyncCallbackManager

from statehitl.callbacks import AsyncGraphCallbackManager, GraphInterruptEvent, GraphLifecycleStatus, GraphResumeEvent
from statehitl.checkpoint.records import CheckpointRecord


def _stop(record: CheckpointRecord, before: frozenset[str]) -> GraphLifecycleStatus | None:
    """Why a run that ended at ``record`` stopped, in LangGraph's status: None when it did not stop to wait
    (finished, failed, or drained between steps, which LangGraph tells no handler of either). A breakpoint's
    stop is a record waiting on no interrupt."""
    if record.status != "interrupted":
        return None
    if record.interrupts:
        return "pending"
    return "interrupt_before" if before & set(record.pending) else "interrupt_after"  # a breakpoint


def _output(values: Any) -> Any:
    """The run's values as LangGraph's chain run ends with them: without the interrupts it stopped on."""
    if isinstance(values, dict) and "__interrupt__" in values:
        return {key: value for key, value in values.items() if key != "__interrupt__"}
    return values


async def observed_run(config: dict[str, Any], input: Any, *, name: str, resumes: str | None,
                       before: frozenset[str], run: Callable[[Any], Awaitable[tuple[CheckpointRecord, Any]]],
                       shown: Callable[[], Awaitable[str]], output: Callable[[Any], Any] | None = None) -> Any:
    """``run(callbacks)`` (the record a run ended at and its values; ``callbacks`` is what its nodes' config
    carries, so that the Runnables and chat models they call are the chain run's children) as one chain run
    of ``config``'s callbacks named ``name`` (or the config's ``run_name``). ``resumes``: the checkpoint the
    run goes on from ("": the thread's current one; None: a run that resumes nothing); ``before``: the run's
    ``interrupt_before`` nodes, to name a breakpoint stop; ``shown()``: the id of the thread's current
    checkpoint, as ``get_state`` shows it (read only for a handler to tell); ``output``: what the chain run ends
    with, from the values (by default the values without their interrupts)."""
    manager = AsyncCallbackManager.configure(config.get("callbacks"), inheritable_tags=config.get("tags"),
                                             inheritable_metadata=config.get("metadata"))
    chain = await manager.on_chain_start(None, input, name=config.get("run_name", name), run_id=config.get("run_id"))
    events = AsyncGraphCallbackManager.configure(config.get("callbacks"), run_id=chain.run_id)
    try:
        if resumes is not None and events.handlers:
            await events.on_resume(GraphResumeEvent(chain.run_id, "pending", resumes or await shown(), ()))
        record, values = await run(chain.get_child())
        status = _stop(record, before)
        if status is not None and events.handlers:
            interrupts = tuple(item.to_interrupt() for item in record.interrupts)
            await events.on_interrupt(GraphInterruptEvent(chain.run_id, status, await shown(), (), interrupts))
    except BaseException as error:
        await chain.on_chain_error(error)
        raise
    await chain.on_chain_end(_output(values) if output is None else output(values))
    return values

