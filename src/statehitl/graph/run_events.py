"""LangChain's ``astream_events`` (and ``astream_log``) for a compiled graph or a workflow, as a LangGraph
graph (a Runnable) has them.

LangChain builds the event stream from callbacks: it adds its own handler to the call's ``callbacks`` and
streams the graph. A statehitl graph under callbacks is one chain run (``run_callbacks``) with a run per node
call inside (``node_runs``), so the events are that run's start, each node's start, output and end (and those
of the chat models and Runnables it calls), each chunk ``astream`` yields (as ``on_chain_stream``) and the
run's end; ``astream_log`` builds its JSON patches (``/logs/<node>/final_output``...) from the same runs.
LangChain's implementation takes a Runnable, so the graph is lent to it through a Runnable that only delegates.
Loaded by a call of ``astream_events`` or ``astream_log``, which need langchain-core.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

from langchain_core.runnables import Runnable, RunnableConfig


class _Streamed(Runnable[Any, Any]):
    """The graph as LangChain's event stream calls it: its name, ``invoke`` and ``astream``, nothing else."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.name = app.get_name()

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.app.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self.app.ainvoke(input, config, **kwargs)

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        return iter(self.app.stream(input, config, **kwargs))

    def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        return self.app.astream(input, config, **kwargs)  # type: ignore[no-any-return]


def stream_events(app: Any, input: Any, config: dict[str, Any] | None, *, version: str,
                  **options: Any) -> AsyncIterator[dict[str, Any]]:
    """``app``'s run on ``input`` as LangChain's event stream of ``version`` ("v1" or "v2"); ``options``:
    LangChain's filters (``include_names=``, ``exclude_tags=``...) and ``astream``'s own (``stream_mode=``...)."""
    if version not in ("v1", "v2"):
        raise ValueError(f"astream_events(version=) is 'v1' or 'v2', got {version!r}")
    events = _Streamed(app).astream_events(input, cast("RunnableConfig | None", config),
                                           version=cast("Any", version), **options)
    return cast("AsyncIterator[dict[str, Any]]", events)


def stream_log(app: Any, input: Any, config: dict[str, Any] | None, **options: Any) -> AsyncIterator[Any]:
    """``app``'s run on ``input`` as LangChain's run log (``RunLogPatch`` chunks; with ``diff=False``,
    ``RunLog`` states); ``options``: LangChain's (``include_names=``, ``with_streamed_output_list=``...) and
    ``astream``'s own. LangChain deprecates ``astream_log``, and says so with a warning as for LangGraph."""
    return _Streamed(app).astream_log(input, cast("RunnableConfig | None", config), **options)
