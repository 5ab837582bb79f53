"""Interrupts from nodes and hooks: the seed's rules, applied to StateGraph nodes.

- all hooks on an interrupted event run, and each may interrupt;
- a hook or a node can interrupt, get the answer, and interrupt again;
- concurrent nodes that do not interrupt finish, their work is kept, and only interrupted nodes re-run;
- ids are deterministic per call site; reasons and responses must be JSON.
"""

from __future__ import annotations

import datetime
import math
from collections import Counter
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl._json import find_non_json
from statehitl.checkpoint import MemoryCheckpointer
from statehitl.errors import InterruptReasonError, InvalidUpdateError
from statehitl.graph import END, START, NodeContext, StateGraph, Status, append
from statehitl.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from statehitl.interrupt import Interrupt, InterruptRaised, InterruptScope, interrupt_id


class S(BaseModel):
    log: Annotated[list[str], append] = []
    n: int = 0


def assert_failed_unapplied(app: Any, error: str) -> None:
    """The thread reads as failed with ``error``, its state as before the failed step: nothing of it applied,
    no interrupt stored."""
    failed = app.get_state("t")
    assert failed is not None
    assert (failed.status, failed.values.log, failed.values.n, failed.interrupts) == (Status.FAILED, [], 0, ())
    assert failed.error is not None
    assert failed.error.type == error


def answer(result: Any, *responses: Any, only: str | None = None) -> list[dict[str, Any]]:
    """Resume payload answering ``result.interrupts`` in order (or only the one named ``only``)."""
    pending = [i for i in result.interrupts if only is None or i.name == only]
    pairs = zip(pending, responses, strict=True)
    return [{"interruptResponse": {"interruptId": i.id, "response": r}} for i, r in pairs]


def fan(nodes: dict[str, Any], hooks: list[Any] = ()):
    g = StateGraph(S)
    for name, fn in nodes.items():
        g.add_node(name, fn)
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile(checkpointer=MemoryCheckpointer(), hooks=hooks)


def one(fn: Any, hooks: list[Any] = (), name: str = "node"):
    return fan({name: fn}, hooks)


def hook_registry(*callbacks: Any) -> HookRegistry:
    registry = HookRegistry()
    for callback in callbacks:
        registry.add_callback(BeforeNodeCallEvent, callback)
    return registry


# -- interrupts from nodes --------------------------------------------------------------------------


def test_node_interrupts_and_gets_the_response(transition_recorder, snapshot) -> None:
    def review(state: S, ctx: NodeContext) -> dict[str, Any]:
        return {"log": f"answer={ctx.interrupt('approve', reason={'what': 'refund'})}"}

    app = one(review, name="review")
    result = app.invoke({}, thread_id="t")
    assert (result.stop_reason, result.status) == ("interrupt", Status.INTERRUPTED)
    [pending] = result.interrupts
    assert (pending.name, pending.reason, pending.source, pending.node) == ("approve", {"what": "refund"}, "node",
                                                                            "review")
    assert pending.id.startswith("v2:")
    result = app.invoke(answer(result, "y"), thread_id="t")
    assert result.state.log == ["answer=y"]
    assert result.stop_reason == "end"
    assert transition_recorder.log == snapshot


def test_node_interrupts_again_after_its_first_answer(transition_recorder, snapshot) -> None:
    calls = Counter[str]()

    def node(state: S, ctx: NodeContext) -> dict[str, Any]:
        calls["node"] += 1
        first = ctx.interrupt("first", reason=1)
        second = ctx.interrupt("second", reason=2)
        return {"log": f"{first}+{second}"}

    app = one(node)
    result = app.invoke({}, thread_id="t")
    assert [i.name for i in result.interrupts] == ["first"]
    result = app.invoke(answer(result, "A"), thread_id="t")
    assert [i.name for i in result.interrupts] == ["second"]  # one at a time
    result = app.invoke(answer(result, "B"), thread_id="t")
    assert result.state.log == ["A+B"]  # the first answer was still there for the third run
    assert calls["node"] == 3
    assert transition_recorder.log == snapshot


async def async_review(state: S, ctx: NodeContext) -> dict[str, Any]:
    return {"log": ctx.interrupt("async-approve")}


def test_async_node_interrupts() -> None:
    app = one(async_review)
    result = app.invoke({}, thread_id="t")
    assert [i.name for i in result.interrupts] == ["async-approve"]
    assert app.invoke(answer(result, "ok"), thread_id="t").state.log == ["ok"]


def test_interrupt_without_reason_and_any_json_response() -> None:
    app = one(lambda s, ctx: {"log": str(ctx.interrupt("q"))})
    result = app.invoke({}, thread_id="t")
    assert result.interrupts[0].reason is None
    response = {"nested": [1, 2.5, None, True, {"k": "v"}]}
    assert app.invoke(answer(result, response), thread_id="t").state.log == [str(response)]


def test_a_node_in_a_loop_asks_again_each_round() -> None:
    g = StateGraph(S)
    g.add_node("ask", lambda s, ctx: {"n": s.n + 1, "log": ctx.interrupt("again", reason=s.n)})
    g.add_edge(START, "ask")
    g.add_conditional_edges("ask", lambda s: "ask" if s.n < 3 else END, ["ask", END])
    app = g.compile(checkpointer=MemoryCheckpointer())
    result = app.invoke({}, thread_id="t")
    ids = []
    while result.stop_reason == "interrupt":
        ids.append(result.interrupts[0].id)
        result = app.invoke(answer(result, f"r{result.interrupts[0].reason}"), thread_id="t")
    assert result.state.log == ["r0", "r1", "r2"]
    assert len(set(ids)) == 3  # each round is a new call site: an old answer is never reused


# -- concurrent nodes -------------------------------------------------------------------------------


def test_concurrent_node_work_is_kept_and_only_interrupted_nodes_rerun(transition_recorder, snapshot) -> None:
    calls = Counter[str]()

    def worker(state: S) -> dict[str, Any]:
        calls["worker"] += 1
        return {"log": "worker"}

    def asker(state: S, ctx: NodeContext) -> dict[str, Any]:
        calls["asker"] += 1
        return {"log": f"asker={ctx.interrupt('ok?')}"}

    def after(state: S) -> dict[str, Any]:
        calls["after"] += 1
        return {"log": "after"}

    g = StateGraph(S)
    g.add_node("worker", worker)
    g.add_node("asker", asker)
    g.add_node("after", after)
    g.add_edge(START, "worker")
    g.add_edge(START, "asker")
    g.add_edge(["worker", "asker"], "after")
    g.add_edge("after", END)
    app = g.compile(checkpointer=MemoryCheckpointer())

    result = app.invoke({}, thread_id="t")
    assert result.stop_reason == "interrupt"
    assert calls == {"worker": 1, "asker": 1}
    assert result.state.log == []  # the step is not applied until every node of it is done ...
    stored = app.get_state("t")
    assert stored.next == ("asker",)  # only the unfinished task is next ...
    # ... but the step's tasks are both there, and the worker's finished work is in the checkpoint
    # (in LangGraph's order: as the nodes were added)
    assert [(t.name, t.result) for t in stored.tasks] == [("worker", {"log": "worker"}), ("asker", None)]

    result = app.invoke(answer(result, "yes"), thread_id="t")
    assert calls == {"worker": 1, "asker": 2, "after": 1}  # the worker did not run again
    assert result.state.log == ["asker=yes", "worker", "after"]  # a step's writes apply in node-name order
    assert transition_recorder.log == snapshot


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ({"bad": lambda s: {"n": "not a number"}}, r"node 'bad' wrote an invalid value to 'n'"),
        ({"one": lambda s: {"n": 1}, "two": lambda s: {"n": 2}}, r"nodes 'one' and 'two' both wrote 'n'"),
    ],
    ids=["invalid value", "conflicting writes"],
)
def test_bad_work_of_a_concurrent_node_is_refused_before_the_interrupt_is_stored(nodes: dict[str, Any],
                                                                                message: str) -> None:
    """Kept work is applied on resume; if it cannot be, no resume could ever finish the thread."""
    app = fan({**nodes, "asker": lambda s, ctx: {"log": ctx.interrupt("q")}})
    with pytest.raises(InvalidUpdateError, match=message):
        app.invoke({}, thread_id="t")
    assert_failed_unapplied(app, "InvalidUpdateError")


def test_all_concurrent_nodes_may_interrupt_and_each_gets_its_answer() -> None:
    calls = Counter[str]()

    def asker(name: str):
        def run(state: S, ctx: NodeContext) -> dict[str, Any]:
            calls[name] += 1
            return {"log": f"{name}={ctx.interrupt('approve', reason=name)}"}

        return run

    app = fan({"left": asker("left"), "right": asker("right")})
    result = app.invoke({}, thread_id="t")
    assert [(i.name, i.node, i.reason) for i in result.interrupts] == [("approve", "left", "left"),
                                                                       ("approve", "right", "right")]
    assert result.interrupts[0].id != result.interrupts[1].id  # same name, different nodes
    result = app.invoke(answer(result, "L", "R"), thread_id="t")
    assert result.state.log == ["left=L", "right=R"]
    assert calls == {"left": 2, "right": 2}


def test_partial_answers_re_raise_only_the_unanswered_interrupt_with_the_same_id() -> None:
    calls = Counter[str]()

    def asker(name: str):
        def run(state: S, ctx: NodeContext) -> dict[str, Any]:
            calls[name] += 1
            return {"log": f"{name}={ctx.interrupt(name)}"}

        return run

    app = fan({"left": asker("left"), "right": asker("right")})
    first = app.invoke({}, thread_id="t")
    right_id = first.interrupts[1].id
    second = app.invoke(answer(first, "L", only="left"), thread_id="t")
    assert [(i.name, i.id) for i in second.interrupts] == [("right", right_id)]
    assert calls == {"left": 2, "right": 2}
    done = app.invoke(answer(second, "R"), thread_id="t")
    assert done.state.log == ["left=L", "right=R"]
    assert calls == {"left": 2, "right": 3}  # left finished on the partial resume and was kept


# -- interrupts from hooks --------------------------------------------------------------------------


class ApprovalHook(HookProvider):
    """The seed's ApprovalHook, for nodes: ask before ``node``; "n" cancels it."""

    def __init__(self, app_name: str, node: str) -> None:
        self.app_name, self.node = app_name, node
        self.calls = 0

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id != self.node:
            return
        self.calls += 1
        approval = event.interrupt(f"{self.app_name}-approval", reason={"node": event.node_id})
        if approval.lower() != "y":
            event.cancel_node = "User denied permission"


def cleanup_app(*hooks: Any):
    calls = Counter[str]()

    def step(name: str):
        def run(state: S) -> dict[str, Any]:
            calls[name] += 1
            return {"log": name}

        return run

    g = StateGraph(S)
    g.add_node("inspect", step("inspect"))
    g.add_node("cleanup", step("cleanup"))
    g.add_edge(START, "inspect")
    g.add_edge("inspect", "cleanup")
    g.add_edge("cleanup", END)
    return g.compile(checkpointer=MemoryCheckpointer(), hooks=list(hooks)), calls


@pytest.mark.parametrize(("reply", "stop_reason", "log"), [("y", "end", ["inspect", "cleanup"]),
                                                           ("n", "cancelled", ["inspect"])],
                         ids=["approved", "denied"])
def test_seed_approval_hook(reply: str, stop_reason: str, log: list[str], transition_recorder, snapshot) -> None:
    hook = ApprovalHook("myapp", "cleanup")
    app, calls = cleanup_app(hook)
    result = app.invoke({}, thread_id="t")
    [pending] = result.interrupts
    assert (pending.name, pending.reason, pending.source, pending.node) == ("myapp-approval", {"node": "cleanup"},
                                                                            "hook", "cleanup")
    assert calls == {"inspect": 1}  # the node did not run before the hook's answer
    result = app.invoke(answer(result, reply), thread_id="t")
    assert result.stop_reason == stop_reason
    assert result.state.log == log
    assert hook.calls == 2
    assert calls["inspect"] == 1
    assert transition_recorder.log == snapshot


def test_all_hooks_on_the_event_run_and_each_may_interrupt(transition_recorder, snapshot) -> None:
    ran: list[str] = []

    def hook(name: str, interrupts: bool):
        def callback(event: BeforeNodeCallEvent) -> None:
            ran.append(name)
            if interrupts and event.node_id == "cleanup":
                response = event.interrupt(f"{name}-approval", reason=name)
                ran.append(f"{name} got {response}")

        return callback

    registry = hook_registry(hook("first", True), hook("quiet", False), hook("second", True))
    app, calls = cleanup_app(registry)
    result = app.invoke({}, thread_id="t")
    assert [(i.name, i.source, i.node) for i in result.interrupts] == [("first-approval", "hook", "cleanup"),
                                                                       ("second-approval", "hook", "cleanup")]
    assert ran[-3:] == ["first", "quiet", "second"]  # the ones after an interrupting hook still ran
    assert calls == {"inspect": 1}
    ran.clear()
    result = app.invoke(answer(result, "one", "two"), thread_id="t")
    assert ran == ["first", "first got one", "quiet", "second", "second got two"]
    assert result.state.log == ["inspect", "cleanup"]
    assert transition_recorder.log == snapshot


def test_a_hook_interrupts_again_after_its_answer(transition_recorder, snapshot) -> None:
    def twice(event: BeforeNodeCallEvent) -> None:
        if event.node_id != "cleanup":
            return
        if event.interrupt("confirm", reason="sure?") != "y":
            event.cancel_node = "not confirmed"
        elif event.interrupt("reconfirm", reason="really sure?") != "y":
            event.cancel_node = "not reconfirmed"

    app, calls = cleanup_app(hook_registry(twice))
    result = app.invoke({}, thread_id="t")
    assert [i.name for i in result.interrupts] == ["confirm"]
    result = app.invoke(answer(result, "y"), thread_id="t")
    assert [i.name for i in result.interrupts] == ["reconfirm"]
    assert calls == {"inspect": 1}
    result = app.invoke(answer(result, "y"), thread_id="t")
    assert result.stop_reason == "end"
    assert calls == {"inspect": 1, "cleanup": 1}
    assert transition_recorder.log == snapshot


def test_hook_interrupt_on_one_concurrent_node_keeps_the_others_work() -> None:
    calls = Counter[str]()
    counting = hook_registry(lambda e: calls.update([e.node_id]))
    app = fan({"a": lambda s: {"log": "a"}, "b": lambda s: {"log": "b"}},
              hooks=[ApprovalHook("app", "b"), counting])
    result = app.invoke({}, thread_id="t")
    assert [i.node for i in result.interrupts] == ["b"]
    result = app.invoke(answer(result, "y"), thread_id="t")
    assert result.state.log == ["a", "b"]
    assert calls == {"a": 1, "b": 2}  # a's hooks did not fire again: a was not re-entered


def test_interrupt_and_cancel_in_the_same_step() -> None:
    app = fan({"a": lambda s, ctx: {"log": ctx.interrupt("q")}, "b": lambda s: {"log": "b"}},
              hooks=[ApprovalHook("app", "b")])
    result = app.invoke({}, thread_id="t")
    assert sorted(i.node for i in result.interrupts) == ["a", "b"]
    by_node = {i.node: i for i in result.interrupts}
    result = app.invoke(
        [{"interruptResponse": {"interruptId": by_node["a"].id, "response": "A"}},
         {"interruptResponse": {"interruptId": by_node["b"].id, "response": "n"}}],
        thread_id="t",
    )
    assert result.stop_reason == "cancelled"
    assert result.cancelled == {"b": "User denied permission"}
    assert result.state.log == ["A"]


# -- names ------------------------------------------------------------------------------------------


def test_same_interrupt_name_twice_in_one_node_is_an_error() -> None:
    app = one(lambda s, ctx: (ctx.interrupt("dup", reason=1), ctx.interrupt("dup", reason=2)))
    first = app.invoke({}, thread_id="t")
    with pytest.raises(ValueError, match=r"interrupt name 'dup' is used twice in node 'node'"):
        app.invoke(answer(first, "x"), thread_id="t")


def test_same_interrupt_name_twice_in_one_event_is_an_error() -> None:
    def hook(event: BeforeNodeCallEvent) -> None:
        event.interrupt("shared")

    app, _ = cleanup_app(hook_registry(hook, hook))
    with pytest.raises(ValueError, match=r"interrupt name 'shared' is used twice in hook 'inspect'"):
        app.invoke({}, thread_id="t")


@pytest.mark.parametrize("name", ["", None, 3])
def test_interrupt_name_must_be_a_non_empty_str(name: Any) -> None:
    app = one(lambda s, ctx: ctx.interrupt(name))
    with pytest.raises(TypeError, match=r"interrupt name must be a non-empty str"):
        app.invoke({}, thread_id="t")


# -- ids --------------------------------------------------------------------------------------------


def review_app():
    return one(lambda s, ctx: {"log": ctx.interrupt("approve", reason="?")}, name="review")


def test_ids_depend_on_the_thread_and_the_call_site() -> None:
    """Another app, same thread, node, step and name: same id (a re-run finds its answer); another thread:
    another id, so ids of interrupts waiting across threads never collide."""
    app = review_app()
    first = app.invoke({}, thread_id="t")
    other_thread = app.invoke({}, thread_id="u")
    fresh_app = review_app().invoke({}, thread_id="t")
    assert first.interrupts[0].id == fresh_app.interrupts[0].id == interrupt_id("node:0:review", "approve", "t")
    assert other_thread.interrupts[0].id != first.interrupts[0].id


def test_ids_are_pinned_so_old_checkpoints_still_resume() -> None:
    """A changed id scheme would orphan every pending interrupt stored by an older version."""
    assert interrupt_id("node:0:review", "approve") == "v1:b5a127abef53358791a25f93"
    assert interrupt_id("node:0:review", "approve", "t") == "v2:d64e5b7ca224af1bc5eb80cd"


def test_ids_differ_by_site_and_name() -> None:
    ids = {
        interrupt_id("node:0:a", "x"),
        interrupt_id("node:0:b", "x"),
        interrupt_id("node:1:a", "x"),
        interrupt_id("node:0:a", "y"),
        interrupt_id("hook:before_node:0:a", "x"),
        interrupt_id("node:0", "a:x"),  # no ambiguity from joining site and name
    }
    assert len(ids) == 6


def test_hook_and_node_with_the_same_name_get_different_ids() -> None:
    def hook(event: BeforeNodeCallEvent) -> None:
        event.interrupt("approve")

    app = one(lambda s, ctx: {"log": ctx.interrupt("approve")}, hooks=[hook_registry(hook)])
    from_hook = app.invoke({}, thread_id="t")
    from_node = app.invoke(answer(from_hook, "h"), thread_id="t")
    assert from_hook.interrupts[0].source == "hook"
    assert from_node.interrupts[0].source == "node"
    assert from_hook.interrupts[0].id != from_node.interrupts[0].id
    assert app.invoke(answer(from_node, "n"), thread_id="t").state.log == ["n"]


# -- JSON -------------------------------------------------------------------------------------------


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque thing>"


@pytest.mark.parametrize(
    ("reason", "named"),
    [
        (Opaque(), "<Opaque thing> of type Opaque"),
        ({"when": datetime.date(2024, 1, 2)}, "at $.when it holds datetime.date(2024, 1, 2) of type date"),
        ({"tags": {"a"}}, "at $.tags it holds {'a'} of type set"),
        ([1, [2, b"x"]], "at $[1][1] it holds b'x' of type bytes"),
        ({1: "int key"}, "at $ key 1"),
        (math.nan, "nan of type float"),
        ({"inf": math.inf}, "at $.inf it holds inf"),
    ],
)
def test_non_json_reason_is_a_type_error_naming_the_value(reason: Any, named: str) -> None:
    app = one(lambda s, ctx: ctx.interrupt("q", reason=reason))
    with pytest.raises(InterruptReasonError) as err:
        app.invoke({}, thread_id="t")
    assert isinstance(err.value, TypeError)
    assert "the reason of interrupt 'q' must be JSON-serializable" in str(err.value)
    assert named in str(err.value)
    assert_failed_unapplied(app, "InterruptReasonError")


def test_non_json_reason_from_a_hook() -> None:
    app, _ = cleanup_app(hook_registry(lambda e: e.interrupt("q", reason=Opaque())))
    with pytest.raises(InterruptReasonError, match=r"<Opaque thing>"):
        app.invoke({}, thread_id="t")


def test_find_non_json() -> None:
    assert find_non_json({"a": [1, 2.0, "s", None, True, (3,)]}) is None
    assert find_non_json({"a": [1, {"b": Opaque()}]})[0] == "$.a[1].b"


# -- the pure bookkeeping ---------------------------------------------------------------------------


def test_scope_returns_known_responses_and_raises_otherwise() -> None:
    iid = interrupt_id("site", "q")
    assert InterruptScope("site", {iid: "yes"}).interrupt("q") == "yes"
    with pytest.raises(InterruptRaised) as raised:
        InterruptScope("site", {}, "hook", "n").interrupt("q", reason={"r": 1})
    assert raised.value.interrupts == [Interrupt(iid, "q", {"r": 1}, source="hook", node="n")]
    assert Interrupt(iid, "q").to_dict() == {"id": iid, "name": "q", "reason": None, "response": None,
                                             "source": "node", "node": ""}


# -- answers known in advance (Strands' preemptive ``response=``) -----------------------------------


def test_a_preemptive_response_is_returned_without_stopping() -> None:
    app = one(lambda s, ctx: {"log": [ctx.interrupt("q", reason="ask?", response="already yes")]})
    result = app.invoke({}, thread_id="t")
    assert result.status == Status.COMPLETED
    assert result.state.log == ["already yes"]
    assert result.interrupts == []


def test_a_hook_with_a_known_answer_does_not_stop_and_one_without_does() -> None:
    trusted: dict[str, str] = {}

    def callback(event: BeforeNodeCallEvent) -> None:
        if event.node_id == "cleanup" and event.interrupt("approval", response=trusted.get("cleanup")) != "y":
            event.cancel_node = "not approved"

    app, calls = cleanup_app(hook_registry(callback))
    result = app.invoke({}, thread_id="t")
    assert [i.name for i in result.interrupts] == ["approval"]
    trusted["cleanup"] = "n"  # a preset that arrives late does not override the human's answer
    result = app.invoke(answer(result, "y"), thread_id="t")
    assert result.state.log == ["inspect", "cleanup"]

    trusted["cleanup"] = "y"
    result = app.invoke({}, thread_id="t2")
    assert result.status == Status.COMPLETED
    assert result.interrupts == []
    assert calls["cleanup"] == 2


def test_a_preemptive_response_must_be_json() -> None:
    app = one(lambda s, ctx: ctx.interrupt("q", response={1, 2}))
    with pytest.raises(InterruptReasonError, match=r"the response of interrupt 'q' must be JSON-serializable"):
        app.invoke({}, thread_id="t")
    assert_failed_unapplied(app, "InterruptReasonError")


def test_scope_prefers_the_humans_answer_to_a_preemptive_one() -> None:
    iid = interrupt_id("site", "q")
    assert InterruptScope("site", {iid: "human"}).interrupt("q", response="preset") == "human"
    assert InterruptScope("site", {}).interrupt("q", response="preset") == "preset"
    assert InterruptScope("site", {}).interrupt("q", response=False) is False
