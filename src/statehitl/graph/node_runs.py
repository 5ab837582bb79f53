"""A node call inside a graph run under LangChain callbacks, as LangGraph traces one: a chain run of its own,
named after the node, between the graph's run and what the node calls. Its input is the node's input, its
output what the node returned, its error what the node raised (an interrupt too, as LangGraph's). A functional
API task's call is a run inside its entrypoint's the same way (``task_run``), its input the call's arguments.

While the node runs, its config (the ``config`` it is given, and LangChain's current config, which a chat model
called without one reads) carries the node run's child manager, so the chat models and Runnables it calls are
inside the node's run, with the node's metadata (``langgraph_node``...). Loaded only by runs with callbacks,
which have langchain-core.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, cast

from langchain_core.callbacks import CallbackManager
from langchain_core.runnables.config import RunnableConfig, var_child_runnable_config

Watch = AbstractContextManager[Callable[[Any], None]]


@contextlib.contextmanager
def traced_call(parent: Any, config: dict[str, Any], given: Any, kwargs: dict[str, Any],
                messages: Callable[[dict[str, Any]], Watch | None]) -> Iterator[Callable[[Any], None]]:
    """The node run of one call, child of ``parent`` (the graph run's child manager), for a node given ``given``
    under ``config`` (its node config): yields the function its return value goes through. ``kwargs``: the
    call's keyword arguments, whose ``config`` gets the node run's callbacks; ``messages(config)``: the watch
    of a run streaming ``"messages"`` for that config (None for a run that does not)."""
    metadata = config.get("metadata") or {}
    manager = CallbackManager.configure(parent, None, inheritable_tags=config.get("tags"),
                                        inheritable_metadata=metadata)
    run = manager.on_chain_start(None, given, name=str(metadata.get("langgraph_node", "node")))
    own: dict[str, Any] = {**config, "callbacks": run.get_child()}
    if isinstance(kwargs.get("config"), dict):
        kwargs["config"] = {**kwargs["config"], "callbacks": own["callbacks"]}
    watch = messages(own)
    token = var_child_runnable_config.set(cast(RunnableConfig, own)) if watch is None else None
    returned: list[Any] = []
    try:
        if watch is None:
            yield returned.append
        else:  # the messages stream sets LangChain's current config itself, with this run's callbacks
            with watch as done:

                def both(value: Any) -> None:
                    returned.append(value)
                    done(value)

                yield both
    except BaseException as error:
        run.on_chain_error(error)
        raise
    finally:
        if token is not None:
            var_child_runnable_config.reset(token)
    if returned:
        _streamed(manager, run.run_id, returned[0])
    run.on_chain_end(returned[0] if returned else None)


def _streamed(manager: CallbackManager, run_id: Any, output: Any) -> None:
    """The node's output as one chunk of its run's stream, for the handlers that read streams (LangChain's
    event stream shows it as the node's ``on_chain_stream``, as LangGraph's does)."""
    for handler in manager.handlers:
        tap = getattr(handler, "tap_output_iter", None)
        if tap is not None:
            for _ in tap(run_id, iter([output])):
                pass


@contextlib.contextmanager
def task_run(current: dict[str, Any], name: str, inputs: dict[str, Any]) -> Iterator[Callable[[Any], None]]:
    """The run of one task call named ``name`` given ``inputs`` (its arguments by name), inside the run of
    LangChain's ``current`` config (its entrypoint's node run): yields the function its result goes through."""
    manager = CallbackManager.configure(current.get("callbacks"), None, inheritable_tags=current.get("tags"),
                                        inheritable_metadata=current.get("metadata"))
    run = manager.on_chain_start(None, inputs, name=name)
    token = var_child_runnable_config.set(cast(RunnableConfig, {**current, "callbacks": run.get_child()}))
    returned: list[Any] = []
    try:
        yield returned.append
    except BaseException as error:
        run.on_chain_error(error)
        raise
    finally:
        var_child_runnable_config.reset(token)
    if returned:
        _streamed(manager, run.run_id, returned[0])
    run.on_chain_end(returned[0] if returned else None)
