"""The two rules of which pending nodes a step runs and what runs next: scheduling policies of the one runner.

- ``ReadySet`` is Strands' multi-agent Graph (and the agent loop's) rule: a pending node runs once no
  other pending node that can still reach it is left (``Machine.blockers``); after a step, the nodes
  left pending stay, and each finished node's transitions add theirs.
- ``Supersteps`` is LangGraph's: every pending task runs in the step, on the same state; what runs
  next is planned from the finished tasks' writes (``statehitl.supersteps``: edges, routers, Sends,
  waiting edges, deferred nodes). A failed step keeps what its finished tasks wrote, and a run from
  START first stores its input checkpoint.

The runner asks its machine's policy (``policy_of``) and never branches on which one it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from statehitl.machine import END, Machine
from statehitl.supersteps import Apply, Routes, plan_step

if TYPE_CHECKING:
    from statehitl.progress import Schedule


class SchedulingPolicy(Protocol):
    """Which of the pending nodes a step runs, and what is pending after it."""

    keeps_finished_on_failure: bool
    """A failed step keeps its finished nodes' writes for its retry (else the step fails as a whole)."""

    def runnable(self, machine: Machine, pending: list[str]) -> list[str]:
        """The pending tasks this step runs."""
        ...

    def after(self, machine: Machine, apply: Apply, *, before: Any, state: Any, ran: list[str],
              done: list[tuple[str, dict[str, Any]]], pending: list[str], schedule: Schedule | None,
              routes: Routes | None = None) -> tuple[list[str], Schedule | None]:
        """What is pending after a step that ran ``ran`` from ``before`` to ``state``; ``done`` holds the
        finished tasks' updates in ``ran``'s order (a cancelled node is in ``ran`` but not in ``done``);
        ``routes``: where their routers went, awaited beforehand where a router is async (``awaited_routes``)."""
        ...


class ReadySet:
    """Strands' rule: a node waits for the pending nodes that can still reach it."""

    keeps_finished_on_failure = False

    def runnable(self, machine: Machine, pending: list[str]) -> list[str]:
        if len(pending) == 1:
            return pending
        blockers = machine.blockers
        waiting = set(pending)
        return [n for n in pending if not (blockers[n] & waiting)] or pending

    def after(self, machine: Machine, apply: Apply, *, before: Any, state: Any, ran: list[str],
              done: list[tuple[str, dict[str, Any]]], pending: list[str], schedule: Schedule | None,
              routes: Routes | None = None) -> tuple[list[str], Schedule | None]:
        left = [n for n in pending if n not in ran]
        for node, _ in done:
            left.extend(machine.next_nodes(node, state))
        return [n for n in dict.fromkeys(left) if n != END], None


class Supersteps:
    """LangGraph's rule: every triggered task runs; writes apply together at the step's end."""

    keeps_finished_on_failure = True

    def runnable(self, machine: Machine, pending: list[str]) -> list[str]:
        return pending

    def after(self, machine: Machine, apply: Apply, *, before: Any, state: Any, ran: list[str],
              done: list[tuple[str, dict[str, Any]]], pending: list[str], schedule: Schedule | None,
              routes: Routes | None = None) -> tuple[list[str], Schedule | None]:
        return plan_step(machine, apply, before, done, schedule, routes=routes)


READY_SET = ReadySet()
SUPERSTEPS = Supersteps()


def policy_of(machine: Machine) -> SchedulingPolicy:
    """The policy of ``machine``'s execution model (``Machine(supersteps=...)``)."""
    return SUPERSTEPS if machine.supersteps else READY_SET
