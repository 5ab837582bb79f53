"""Hooks: node events through providers and registries, their order, and ``cancel_node``."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl import Agent
from statehitl.checkpoint import MemoryCheckpointer
from statehitl.graph import END, START, StateGraph, Status, append
from statehitl.hooks import AfterNodeCallEvent, BeforeInvocationEvent, BeforeNodeCallEvent, HookProvider, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.multiagent import GraphBuilder


class S(BaseModel):
    log: Annotated[list[str], append] = []


def mark(name: str, ran: list[str] | None = None):
    def node(state: S) -> dict[str, Any]:
        if ran is not None:
            ran.append(name)
        return {"log": name}

    return node


def chain(*names: str, hooks: list[Any], checkpointer: Any = None):
    g = StateGraph(S)
    previous = START
    for name in names:
        g.add_node(name, mark(name))
        g.add_edge(previous, name)
        previous = name
    g.add_edge(previous, END)
    return g.compile(checkpointer=checkpointer or MemoryCheckpointer(), hooks=hooks)


class Recorder(HookProvider):
    """The seed's provider pattern: one object registers several callbacks."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, Any]] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.before)
        registry.add_callback(AfterNodeCallEvent, self.after)

    def before(self, event: BeforeNodeCallEvent) -> None:
        self.seen.append(("before", event.node_id, dict(event.invocation_state)))

    def after(self, event: AfterNodeCallEvent) -> None:
        self.seen.append(("after", event.node_id, event.update))


def test_node_events_fire_through_a_hook_provider() -> None:
    provider = Recorder()
    app = chain("a", "b", hooks=[provider])
    app.invoke({}, thread_id="t", invocation_state={"user": "ann"})
    assert provider.seen == [
        ("before", "a", {"user": "ann"}),
        ("after", "a", {"log": "a"}),
        ("before", "b", {"user": "ann"}),
        ("after", "b", {"log": "b"}),
    ]


def test_node_events_fire_through_a_registry_and_carry_the_app() -> None:
    sources: list[Any] = []
    registry = HookRegistry()
    registry.add_callback(BeforeNodeCallEvent, lambda e: sources.append(e.source))
    app = chain("a", hooks=[registry])
    app.invoke({}, thread_id="t")
    assert sources == [app]


def test_all_callbacks_run_in_order_and_after_events_in_reverse() -> None:
    order: list[str] = []
    registry = HookRegistry()
    registry.add_callback(BeforeNodeCallEvent, lambda e: order.append("before-1"))
    registry.add_callback(BeforeNodeCallEvent, lambda e: order.append("before-2"))
    registry.add_callback(AfterNodeCallEvent, lambda e: order.append("after-1"))
    registry.add_callback(AfterNodeCallEvent, lambda e: order.append("after-2"))
    chain("a", hooks=[registry]).invoke({}, thread_id="t")
    assert order == ["before-1", "before-2", "after-2", "after-1"]


def test_providers_and_registries_combine() -> None:
    provider = Recorder()
    registry = HookRegistry()
    extra: list[str] = []
    registry.add_callback(BeforeNodeCallEvent, lambda e: extra.append(e.node_id))
    chain("a", hooks=[provider, registry]).invoke({}, thread_id="t")
    assert [kind for kind, *_ in provider.seen] == ["before", "after"]
    assert extra == ["a"]


def test_async_callbacks_are_awaited() -> None:
    seen: list[str] = []

    async def before(event: BeforeNodeCallEvent) -> None:
        await asyncio.sleep(0)
        seen.append(event.node_id)

    registry = HookRegistry()
    registry.add_callback(BeforeNodeCallEvent, before)
    chain("a", "b", hooks=[registry]).invoke({}, thread_id="t")
    assert seen == ["a", "b"]


def test_registry_add_hook_and_add() -> None:
    provider = Recorder()
    registry = HookRegistry()
    registry.add_hook(provider)
    assert registry.has_callbacks(BeforeNodeCallEvent)
    assert registry.has_callbacks(AfterNodeCallEvent)
    merged = HookRegistry()
    merged.add(registry)
    assert merged.has_callbacks(AfterNodeCallEvent)


def test_registry_refuses_what_is_not_a_hook() -> None:
    registry = HookRegistry()
    with pytest.raises(TypeError, match=r"expects a HookEvent subclass"):
        registry.add_callback(dict, print)  # type: ignore[type-var]
    with pytest.raises(TypeError, match=r"must be callable"):
        registry.add_callback(BeforeNodeCallEvent, "print")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"hooks must be HookProvider objects"):
        chain("a", hooks=[object()])


def test_event_interrupt_outside_a_run() -> None:
    event = BeforeNodeCallEvent(source=None, node_id="a")
    with pytest.raises(RuntimeError, match=r"only available while a run fires it"):
        event.interrupt("x")


def test_callback_error_propagates() -> None:
    def broken(event: BeforeNodeCallEvent) -> None:
        raise LookupError("hook bug")

    registry = HookRegistry()
    registry.add_callback(BeforeNodeCallEvent, broken)
    with pytest.raises(LookupError, match="hook bug"):
        chain("a", hooks=[registry]).invoke({}, thread_id="t")


# -- cancel_node ------------------------------------------------------------------------------------


class Cancel(HookProvider):
    def __init__(self, node: str, value: bool | str) -> None:
        self.node, self.value = node, value

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.before)

    def before(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id == self.node:
            event.cancel_node = self.value


@pytest.mark.parametrize(("value", "message"), [(True, "node cancelled"), ("not today", "not today")])
def test_cancel_node_stops_the_run(value: bool | str, message: str, transition_recorder, snapshot) -> None:
    ran: list[str] = []
    g = StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, mark(name, ran))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    app = g.compile(checkpointer=MemoryCheckpointer(), hooks=[Cancel("b", value)])
    result = app.invoke({}, thread_id="t")
    assert ran == ["a"]  # b never ran, and nothing after it
    assert (result.stop_reason, result.status) == ("cancelled", Status.FAILED)
    assert result.cancelled == {"b": message}
    assert result.state.log == ["a"]
    snapshot_state = app.get_state("t")
    assert snapshot_state.status == Status.FAILED
    assert snapshot_state.cancelled == {"b": message}
    assert snapshot_state.next == ()
    assert transition_recorder.log == snapshot


def test_cancel_in_a_concurrent_step_keeps_the_other_nodes_work() -> None:
    g = StateGraph(S)
    for name in ("keep", "drop"):
        g.add_node(name, mark(name))
        g.add_edge(START, name)
        g.add_edge(name, END)
    result = g.compile(hooks=[Cancel("drop", "no")]).invoke({})
    assert result.stop_reason == "cancelled"
    assert result.cancelled == {"drop": "no"}
    assert result.state.log == ["keep"]


def test_cancelled_thread_can_start_again_with_new_input() -> None:
    app = chain("a", "b", hooks=[Cancel("b", True)])
    app.invoke({}, thread_id="t")
    result = app.invoke({"log": ["retry"]}, thread_id="t")
    assert result.stop_reason == "cancelled"
    assert result.state.log == ["a", "retry", "a"]


def test_a_callback_without_an_event_type_is_registered_for_the_type_it_is_annotated_with() -> None:
    heard: list[str] = []

    def before(event: BeforeNodeCallEvent) -> None:
        heard.append(f"before {event.node_id}")

    def either(event: BeforeNodeCallEvent | AfterNodeCallEvent) -> None:
        heard.append(type(event).__name__)

    class Starting:
        def __call__(self, event: BeforeInvocationEvent) -> None:
            heard.append("agent starts")

    worker = Agent(name="worker", model=ScriptedModel(["done"]), callback_handler=None)
    worker.add_hook(Starting())  # Strands' add_hook(callback), the type from its annotation
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    graph = builder.build()
    graph.add_hook(before)
    graph.hooks.add_callback(None, either)
    graph("go")

    assert heard == ["before worker", "BeforeNodeCallEvent", "agent starts", "AfterNodeCallEvent"]
    for unannotated in (lambda event: None, print):
        with pytest.raises(TypeError, match=r"cannot tell which event .* is for: annotate its first parameter"):
            graph.add_hook(unannotated)
