"""How the inbox gets the application's code, and how a thread's stored answers are applied.

The registration protocol is one callable, named on the command line as ``module:build``:
``build(thread_id) -> app``, where ``app`` is what runs that thread:

- a ``CompiledStateGraph`` (usually the same for every thread; ``build`` may ignore the id),
- an ``Agent`` whose session is that thread (``session_manager=...`` for the thread's session),
- a ``Graph`` or ``Swarm`` (any ``Orchestrator``) whose session is that thread.

``build`` is called once per thread resumed, so a factory can give each thread its own agent.
Applying answers always goes through the app's ordinary resume call (``statehitl.resumable``, the one
contract every shape implements), so the engine's claim and compare-and-set make sure that of several
processes applying the same answers only one runs them.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

from statehitl.errors import (
    AppLoadError,
    CheckpointConflict,
    NotInterruptedError,
    ResumeInputError,
    UnknownInterruptError,
)
from statehitl.resumable import ResumableApp, Resumed, as_resumable, resume_stored

AppBuilder = Callable[[str], object]
"""``build(thread_id) -> app``: a CompiledStateGraph, an Agent on that thread's session, or a Graph/Swarm
(each a ``ResumableApp``)."""


def load_app(spec: str) -> AppBuilder:
    """Import ``module:build`` (the module from the current directory too, as ``python -m`` would)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise AppLoadError(f"--app {spec!r} must be module:callable, e.g. myapp.inbox:build")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AppLoadError(f"--app {spec!r}: cannot import module {module_name!r}: {exc}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise AppLoadError(f"--app {spec!r}: module {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise AppLoadError(f"--app {spec!r}: {attribute!r} is a {type(target).__name__}, not a callable "
                           "build(thread_id) -> app")
    builder: AppBuilder = target
    return builder


def build_app(builder: AppBuilder, thread_id: str) -> ResumableApp:
    """Call ``builder(thread_id)`` and check it returned something that can resume the thread."""
    app = builder(thread_id)
    if inspect.isawaitable(app):
        raise AppLoadError("the --app build function returned an awaitable; it must return the app itself")
    resumable = as_resumable(app, f"the --app build function, for thread {thread_id!r},")
    resumable.check_thread(thread_id)
    return resumable


async def aresume_answered(app: ResumableApp, thread_id: str | None = None) -> Any:
    """Apply the answers stored for the thread (by the inbox or an expiry sweep) to ``app``.

    This is the call an application makes to pick up answers given while it was not running:
    ``thread_id`` is required for a StateGraph and taken from the app for an Agent or a Graph/Swarm
    (their session thread). Returns the app's result (as its own resume call returns it), or None when
    nothing is to be applied: no answer is stored for what the thread waits on, the thread is not
    waiting, or another process is applying (or has applied) them right now.
    """
    done = await apply_answered(as_resumable(app, "resume_answered was given an app that"), thread_id)
    return None if done is None else done.result


async def apply_answered(app: ResumableApp, thread_id: str | None = None, *, lease_seconds: float | None = None
                         ) -> Resumed | None:
    """``aresume_answered`` as ``Resumed`` (the status and interrupts the resume stopped on, the app's result):
    what the inbox's doors use to report a resume."""
    thread = thread_id if thread_id is not None else app.own_thread
    if thread is None:
        raise AppLoadError("resume_answered(graph, thread_id=...) needs the thread id for a StateGraph")
    try:
        return await resume_stored(app, thread, lease_seconds=lease_seconds)
    except (CheckpointConflict, NotInterruptedError, UnknownInterruptError, ResumeInputError):
        # Nothing stored to apply, the thread is not waiting, or another process claimed it first (it
        # applies these answers) or already moved it on.
        return None


def resume_answered(app: ResumableApp, thread_id: str | None = None) -> Any:
    """Sync ``aresume_answered``."""
    from statehitl._sync import run_sync

    return run_sync(aresume_answered(app, thread_id))
