"""A Graph's or Swarm's side of the resumable-app contract (``statehitl.resumable``): its session thread,
resumed by its own call without answers, as the inbox and the worker resume it."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from statehitl.resumable import ResumableApp, Resumed
from statehitl.status import Status

if TYPE_CHECKING:
    from statehitl.checkpoint.engine import Checkpointer
    from statehitl.machine import Machine


class ResumableOrchestrator(ResumableApp):
    """``ResumableApp`` for an orchestrator: what it needs of one, and the four parts of the contract."""

    checkpointer: Checkpointer
    machine: Machine
    thread_id: str

    @abstractmethod
    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """The orchestrator's own call (``Orchestrator.invoke_async``)."""

    @property
    def thread_store(self) -> Checkpointer:
        return self.checkpointer

    @property
    def machine_name(self) -> str:
        return self.machine.name

    @property
    def own_thread(self) -> str | None:
        return self.thread_id

    async def aresume_stored(self, thread_id: str) -> Resumed:
        """``invoke_async(None)`` on its thread: apply the stored answers, or continue."""
        self.check_thread(thread_id)
        result = await self.invoke_async(None)
        return Resumed(Status(result.status).value, tuple(result.interrupts), result)
