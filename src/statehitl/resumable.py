"""One contract for what the inbox and the worker resume: a compiled StateGraph, an Agent, a Graph or Swarm.

An answer given in the inbox, on its page or by an expiry is stored; applying it means running the code
after the interrupt, which only the application has. ``build(thread_id)`` hands the inbox or a worker
that application, and this module is how they run it, written once for every shape:

- ``ResumableApp``, the abstract class each shape implements (``CompiledStateGraph``, ``Agent``,
  ``Orchestrator``): where its threads live (``thread_store``), which machine it runs (``machine_name``),
  whether it runs a given thread (``check_thread``), and its own resume call without answers
  (``aresume_stored``), which applies what is stored through the engine's claim, so of several processes
  applying the same answers one runs them;
- ``Resumed``, what such a resume did, the same for every shape (status and interrupts), with the
  shape's own result beside it;
- ``resume_stored``, the call the inbox and the worker make: the resume under the caller's lease
  (a worker's ``--lease``) without touching the app's settings, which other threads of the same app
  in the same process share, and with every sync node and tool in a worker thread (``offload``), so
  that one slow action never stops the caller's other resumes or requests.

A resume's claim lease is per call (``checkpoint.clock.leased``), never a setting written on the app:
one compiled graph serves every thread of a worker, and a web server's app has a lease of its own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statehitl.checkpoint.clock import leased
from statehitl.errors import AppLoadError
from statehitl.offload import off_the_loop

if TYPE_CHECKING:
    from statehitl.checkpoint.engine import Checkpointer
    from statehitl.interrupt import Interrupt

__all__ = ["ResumableApp", "Resumed", "as_resumable", "resume_stored"]


@dataclass(frozen=True, slots=True)
class Resumed:
    """What resuming a thread did: its status after the run (``completed``, ``interrupted``, ``failed``,
    ``executing``), the interrupts it stopped on, and the app's own result (a StateGraph's values, an
    ``AgentResult``, a ``MultiAgentResult``)."""

    status: str
    interrupts: tuple[Interrupt, ...] = ()
    result: Any = field(default=None, compare=False, repr=False)


class ResumableApp(ABC):
    """What ``build(thread_id)`` returns for the inbox and the worker: an app that can resume its threads.

    Implemented by ``CompiledStateGraph`` (any thread of its store), ``Agent`` and ``Orchestrator`` (the
    thread of their session). Nothing else is taken: the inbox and the worker check for this class, not
    for methods that happen to be there.
    """

    @property
    @abstractmethod
    def thread_store(self) -> Checkpointer:
        """The checkpointer the app's threads live in: the store the inbox or worker must read."""

    @property
    @abstractmethod
    def machine_name(self) -> str:
        """The name of the machine the app runs: what a thread's records say stopped it."""

    @property
    @abstractmethod
    def own_thread(self) -> str | None:
        """The one thread the app runs (an agent's or orchestrator's session thread); None: any thread of
        its store (a StateGraph)."""

    def check_thread(self, thread_id: str) -> None:
        """``AppLoadError`` if this app does not run ``thread_id`` (an agent built on another session)."""
        own = self.own_thread
        if own is not None and own != thread_id:
            raise AppLoadError(f"the app built for thread {thread_id!r} runs thread {own!r}; build(thread_id) must "
                               "return an agent or orchestrator on that thread's session")

    @abstractmethod
    async def aresume_stored(self, thread_id: str) -> Resumed:
        """The app's own resume call without answers (``invoke(None)``, a bare agent call): it applies the
        answers stored for what the thread waits on, or continues a run that stopped mid-way. Raises what
        that call raises: ``CheckpointConflict`` when another process holds the thread,
        ``NotInterruptedError``/``ResumeInputError`` when there is nothing to apply."""


def as_resumable(app: object, where: str) -> ResumableApp:
    """``app`` if it is a ``ResumableApp``, else ``AppLoadError`` naming ``where`` it came from."""
    if isinstance(app, ResumableApp):
        return app
    raise AppLoadError(f"{where} returned a {type(app).__name__}; expected a compiled StateGraph, an Agent or a "
                       "Graph/Swarm")


async def resume_stored(app: ResumableApp, thread_id: str, *, lease_seconds: float | None = None,
                        executor: Executor | None = None) -> Resumed:
    """Resume ``thread_id`` through ``app``'s own call, applying what is stored; its claims hold the thread for
    ``lease_seconds`` when given (else the app's checkpointer's lease), its sync nodes and tools run in
    ``executor`` (else the loop's default pool). Raises what the app's call raises."""
    app.check_thread(thread_id)
    with leased(lease_seconds), off_the_loop(executor):  # a slow sync action must not hold up the caller's work
        return await app.aresume_stored(thread_id)
