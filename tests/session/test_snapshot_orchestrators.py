"""A Graph and a Swarm on a ``SnapshotSessionManager``, side by side on Strands 1.62 and statehitl: a run that
stops (on an interrupt, or on a failed node) is picked up by a new orchestrator on a new manager over the same
store, under either ``multi_agent_save_latest_on`` strategy, and ``delete_session`` forgets it.

Strands saves an orchestrator as a ``multiAgent`` snapshot after each node (or invocation); statehitl's
orchestrator keeps its state as its thread in the same store, checkpointed every step, so both strategies
observe what Strands' ``"node"`` does, and no ``snapshot_latest.json`` key is written for it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import strands.multiagent

import statehitl.multiagent
from snapshot_sessions import framework
from strands_side import Side, side, uses

ORCHESTRATORS = {"strands": strands.multiagent, "statehitl": statehitl.multiagent}


def handoff(to: str) -> dict[str, Any]:
    return uses("h1", "handoff_to_agent", {"agent_name": to, "message": "over to you"})


class Team:
    """The orchestrators a program builds: ``a`` then ``b`` (a Graph edge, or a Swarm handoff), with a hook
    that asks before ``b`` runs, and a log of the agents that ran."""

    def __init__(self, on: Side, kind: str, directory: Path, strategy: str) -> None:
        self.on, self.kind, self.directory, self.strategy = on, kind, directory, strategy
        self.ran: list[str] = []

    def manager(self) -> Any:
        sessions, stores, _ = framework(self.on.name)
        return sessions.SnapshotSessionManager("team-1", storage=stores.LocalFileStorage(str(self.directory)),
                                               multi_agent_save_latest_on=self.strategy)

    def agent(self, name: str, script: list[Any]) -> Any:
        agent = self.on.Agent(model=self.on.model(script), callback_handler=None, name=name)
        agent.add_hook(lambda event: self.ran.append(name), self.on.hooks.BeforeInvocationEvent)
        return agent

    def build(self, b_script: list[Any], *, ask: bool = True) -> Any:
        hooks = self.on.hooks
        manager = self.manager()

        class AskBeforeB(hooks.HookProvider):  # type: ignore[name-defined,misc]
            def register_hooks(self, registry: Any, **kwargs: Any) -> None:
                registry.add_callback(hooks.BeforeNodeCallEvent, self.ask)

            def ask(self, event: Any) -> None:
                if ask and event.node_id == "b" and event.interrupt("run-b", reason="may b run?") != "yes":
                    event.cancel_node = "b was refused"

        module = ORCHESTRATORS[self.on.name]
        a_script = [handoff("b"), "passing it on"] if self.kind == "swarm" else ["a did its part"]
        a, b = self.agent("a", a_script), self.agent("b", b_script)
        if self.kind == "swarm":
            return module.Swarm([a, b], session_manager=manager, hooks=[AskBeforeB()])
        builder = module.GraphBuilder()
        builder.add_node(a, "a")
        builder.add_node(b, "b")
        builder.add_edge("a", "b")
        builder.set_session_manager(manager)
        builder.set_hook_providers([AskBeforeB()])
        builder.set_max_node_executions(5)
        return builder.build()


def outcome(result: Any) -> tuple[str, list[str]]:
    """Its status and the nodes that ran, in order (a Graph's ``execution_order``, a Swarm's ``node_history``)."""
    order = getattr(result, "execution_order", None)
    return result.status.value, [node.node_id for node in (result.node_history if order is None else order)]


@pytest.mark.parametrize("strategy", ["node", "invocation"])
@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_an_interrupted_run_is_resumed_by_a_new_orchestrator_on_the_session(kind: str, strategy: str,
                                                                             tmp_path: Path) -> None:
    def program(name: str) -> Any:
        team = Team(side(name), kind, tmp_path / name, strategy)
        first = team.build(["never said"])("fix the ticket")
        asked = [(i.name, i.reason) for i in first.interrupts]
        ran_before = list(team.ran)
        answers = [{"interruptResponse": {"interruptId": i.id, "response": "yes"}} for i in first.interrupts]
        done = team.build(["b finished the ticket"])(answers)  # another object, another manager: a new process
        reply = str(done.results["b"].result).strip()
        return first.status.value, asked, ran_before, outcome(done)[0], team.ran, reply

    theirs = program("strands")
    assert program("statehitl") == theirs
    assert theirs == ("interrupted", [("run-b", "may b run?")], ["a"], "completed", ["a", "b"], "b finished the ticket")


def test_a_failed_node_is_run_again_by_a_new_graph_on_the_session_and_the_nodes_before_it_are_not(
        tmp_path: Path) -> None:
    """Both run only the failed node again. Strands then still reports the graph FAILED (its restored state
    keeps the node among the failed ones); statehitl reports the run that completed."""
    def program(name: str) -> Any:
        team = Team(side(name), "graph", tmp_path / name, "node")
        with pytest.raises(RuntimeError, match="the model is down"):
            team.build([RuntimeError("the model is down")], ask=False)("fix the ticket")
        ran_before = list(team.ran)
        team.ran.clear()
        again = team.build(["b finished the ticket"], ask=False)("fix the ticket")
        return ran_before, team.ran, sorted(again.results), str(again.results["b"].result).strip(), again.status.value

    theirs, ours = program("strands"), program("statehitl")
    assert ours[:4] == theirs[:4] == (["a", "b"], ["b"], ["a", "b"], "b finished the ticket")
    assert (theirs[4], ours[4]) == ("failed", "completed")


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_delete_session_forgets_the_orchestrator(kind: str, tmp_path: Path) -> None:
    def program(name: str) -> Any:
        team = Team(side(name), kind, tmp_path / name, "node")
        stopped = team.build(["never said"])("fix the ticket")
        asyncio.run(team.manager().delete_session())
        team.ran.clear()
        again = team.build(["b finished the ticket"], ask=False)("a new ticket")
        return stopped.status.value, outcome(again), team.ran

    assert program("statehitl") == program("strands") == ("interrupted", ("completed", ["a", "b"]), ["a", "b"])


def test_an_orchestrator_needs_the_managers_storage_as_in_strands() -> None:
    def program(name: str) -> list[str]:
        on = side(name)
        sessions, _, _ = framework(name)
        module = ORCHESTRATORS[name]
        refused = []
        for build in (
            lambda: module.Swarm([on.Agent(model=on.model([]), callback_handler=None, name="a")],
                                 session_manager=sessions.SnapshotSessionManager("x")),
            lambda: graph_of(module, on, sessions.SnapshotSessionManager("x")),
        ):
            with pytest.raises(RuntimeError) as raised:
                build()
            refused.append(str(raised.value))
        return refused

    assert program("statehitl") == program("strands") == [
        "SnapshotSessionManager requires a storage backend for multi-agent orchestrators. Provide storage in the "
        "constructor."] * 2


def graph_of(module: Any, on: Side, manager: Any) -> Any:
    builder = module.GraphBuilder()
    builder.add_node(on.Agent(model=on.model([]), callback_handler=None, name="a"), "a")
    builder.set_session_manager(manager)
    builder.set_max_node_executions(5)
    return builder.build()
