"""How interventions sit on statehitl's machinery: hook orders, what an agent without handlers registers
(nothing), guidance that is checkpointed with the turn, and handlers on an agent running as a Graph node."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from statehitl import Agent, InterventionHandler, tool
from statehitl.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookOrder,
    HookRegistry,
)
from statehitl.interventions import Deny, Guide, Proceed
from statehitl.models import ScriptedModel
from statehitl.multiagent import GraphBuilder, Status
from statehitl.session import SessionManager
from statehitl.vended_interventions.hitl import HumanInTheLoop

LIFECYCLE = (BeforeInvocationEvent, BeforeToolCallEvent, AfterToolCallEvent, BeforeModelCallEvent,
             AfterModelCallEvent)


def fired(registry: HookRegistry, event: Any) -> list[str]:
    log: list[str] = []
    event.log = log
    asyncio.run(registry.fire(event))
    return log


def recorder(label: str) -> Any:
    return lambda event: event.log.append(label)


def test_callbacks_run_by_order_then_registration_and_after_events_reverse_within_an_order() -> None:
    registry = HookRegistry()
    for label, order in [("a", 0), ("late", HookOrder.SDK_LAST), ("b", 0), ("early", HookOrder.SDK_FIRST),
                         ("c", 0), ("policy", HookOrder.INTERVENTION_INPUT), ("also-late", HookOrder.SDK_LAST)]:
        registry.add_callback(BeforeModelCallEvent, recorder(label), order=order)
        registry.add_callback(AfterModelCallEvent, recorder(label), order=order)
    assert fired(registry, BeforeModelCallEvent(agent=None)) == ["early", "a", "b", "c", "policy", "late",
                                                                 "also-late"]
    assert fired(registry, AfterModelCallEvent(agent=None)) == ["early", "c", "b", "a", "policy", "also-late",
                                                                "late"]
    merged = HookRegistry()
    merged.add_callback(BeforeModelCallEvent, recorder("first of all"), order=-1000)
    merged.add(registry)
    merged.add_callback(BeforeModelCallEvent, recorder("d"))
    assert fired(merged, BeforeModelCallEvent(agent=None)) == ["first of all", "early", "a", "b", "c", "d", "policy",
                                                               "late", "also-late"]


@pytest.mark.parametrize("order", ["high", True, float("nan"), None])
def test_an_order_must_be_a_finite_number(order: Any) -> None:
    with pytest.raises(TypeError, match="hook order must be a finite number"):
        HookRegistry().add_callback(BeforeModelCallEvent, recorder("x"), order=order)


def test_add_hook_takes_an_order_as_strands_does() -> None:
    agent = Agent(model=ScriptedModel(["hi"]), callback_handler=None)
    log: list[str] = []
    agent.add_hook(lambda e: log.append("last"), BeforeInvocationEvent, order=HookOrder.SDK_LAST)
    agent.add_hook(BeforeInvocationEvent, lambda e: log.append("first"), order=HookOrder.SDK_FIRST)
    agent("hello")
    assert log == ["first", "last"]


def test_an_agent_without_handlers_registers_nothing_and_one_with_handlers_only_what_they_override() -> None:
    model = ScriptedModel([])
    for plain in (Agent(model=model), Agent(model=model, interventions=[])):
        assert not any(plain.hooks.has_callbacks(event) for event in (*LIFECYCLE, AfterInvocationEvent))

    class ToolsOnly(InterventionHandler):
        name = "tools-only"

        def before_tool_call(self, event: BeforeToolCallEvent) -> Proceed:
            return Proceed()

    guarded = Agent(model=model, interventions=[ToolsOnly()])
    assert [event.__name__ for event in LIFECYCLE if guarded.hooks.has_callbacks(event)] == ["BeforeToolCallEvent"]
    assert [e.__name__ for e in LIFECYCLE if Agent(model=model, interventions=[HumanInTheLoop()]).hooks.has_callbacks(e)
            ] == ["BeforeToolCallEvent"]


def test_guidance_is_checkpointed_with_the_turn_and_a_new_agent_on_the_session_has_it(tmp_path: Path) -> None:
    class Cite(InterventionHandler):
        name = "cite"

        def before_model_call(self, event: BeforeModelCallEvent) -> Guide:
            return Guide(feedback="cite your sources")

    session = SessionManager.from_url(f"file://{tmp_path}", session_id="s1")
    Agent(model=ScriptedModel(["per the manual, 42"]), session_manager=session, interventions=[Cite()],
          callback_handler=None)("how many?")
    again = Agent(model=ScriptedModel([]), session_manager=SessionManager.from_url(f"file://{tmp_path}",
                                                                                  session_id="s1"))
    assert [(m["role"], m["content"][0]["text"]) for m in again.messages] == [
        ("user", "how many?"), ("user", "[cite] cite your sources"), ("assistant", "per the manual, 42")]


def test_guidance_before_a_model_call_that_asks_for_tools_comes_ahead_of_the_call() -> None:
    calls: list[int] = []

    @tool
    def count() -> int:
        """Count."""
        calls.append(1)
        return len(calls)

    class Nudge(InterventionHandler):
        name = "nudge"

        def before_model_call(self, event: BeforeModelCallEvent) -> Guide:
            return Guide(feedback="be quick")

    ask = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "count", "input": {}}}]}
    agent = Agent(model=ScriptedModel([ask, "1"]), tools=[count], interventions=[Nudge()], callback_handler=None)
    agent("count")
    assert [(m["role"], next(iter(m["content"][0]))) for m in agent.messages] == [
        ("user", "text"), ("user", "text"), ("assistant", "toolUse"), ("user", "toolResult"), ("user", "text"),
        ("assistant", "text")]


def test_handlers_of_an_agent_running_as_a_graph_node_stop_the_graph_and_resume_it() -> None:
    ran: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy.

        Args:
            env: where
        """
        ran.append(env)
        return f"deployed to {env}"

    class NoFridays(InterventionHandler):
        name = "no-fridays"

        def before_tool_call(self, event: BeforeToolCallEvent) -> Deny | Proceed:
            return Deny(reason="not in prod") if event.tool_use["input"]["env"] == "prod" else Proceed()

    asks = {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "t1", "name": "deploy", "input": {"env": "staging"}}},
        {"toolUse": {"toolUseId": "t2", "name": "deploy", "input": {"env": "prod"}}}]}
    deployer = Agent(name="deployer", model=ScriptedModel([asks, "staging done"]), tools=[deploy],
                     interventions=[NoFridays(), HumanInTheLoop()], callback_handler=None)
    builder = GraphBuilder()
    builder.add_node(deployer, "deployer")
    graph = builder.build()
    result = graph("ship it")
    assert result.status == Status.INTERRUPTED
    [asked] = result.interrupts
    assert (asked.name, asked.node) == ("strands:human-in-the-loop", "deployer/deploy")
    done = graph([{"interruptResponse": {"interruptId": asked.id, "response": "y"}}])
    assert done.status == Status.COMPLETED
    assert ran == ["staging"]
    results = [b["toolResult"]["content"][0]["text"] for m in deployer.messages for b in m["content"]
               if "toolResult" in b]
    assert results == ["deployed to staging", "DENIED: not in prod"]
