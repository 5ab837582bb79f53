"""Interventions, side by side: each program runs on Strands 1.62 and on statehitl, and both must observe
the same (the conversation, the tool calls that ran, the interrupts and the order things happened in).

Written from Strands' interventions docs and what Strands itself does when run; where statehitl differs
on purpose, the test says so and checks each side's own behaviour.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from intervention_sides import STATEHITL, STRANDS, Side, answers, both, conversation, tool_results, use


def delete_tool(side: Side, ran: list[str]) -> Any:
    @side.tool
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: the file
        """
        ran.append(path)
        return f"deleted {path}"

    return delete_file


def one_call(side: Side, handlers: list[Any], *, hooks: Any = None) -> tuple[Any, Any, list[str]]:
    """An agent whose model asks to delete ``a`` once, then says "done"."""
    ran: list[str] = []
    agent, model = side.agent([use("t1", "delete_file", {"path": "a"}), "done"], tools=[delete_tool(side, ran)],
                              interventions=handlers)
    return agent, model, ran


def handler(side: Side, name: str, **methods: Any) -> Any:
    """A handler class named ``name`` overriding ``methods`` (at class level, as handlers must)."""
    return type(f"H_{name.replace('-', '_')}", (side.InterventionHandler,), {"name": name, **methods})()


def test_deny_cancels_the_tool_with_its_reason_and_skips_the_handlers_after_it() -> None:
    def program(side: Side) -> Any:
        seen: list[str] = []
        i = side.interventions
        agent, model, ran = one_call(side, [
            handler(side, "guard",
                    before_tool_call=lambda self, e: seen.append("guard") or i.Deny(reason="no deleting")),
            handler(side, "audit", before_tool_call=lambda self, e: seen.append("audit") or i.Proceed()),
        ])
        result = agent("clean up")
        return result.stop_reason, str(result).strip(), conversation(agent.messages), ran, seen, model.calls

    assert both(program) == (
        "end_turn", "done",
        [("user", [{"text": "clean up"}]),
         ("assistant", [{"toolUse": {"toolUseId": "t1", "name": "delete_file", "input": {"path": "a"}}}]),
         ("user", [{"toolResult": {"toolUseId": "t1", "status": "error",
                                   "content": [{"text": "DENIED: no deleting"}]}}]),
         ("assistant", [{"text": "done"}])],
        [], ["guard"], 2)


def test_every_guide_runs_and_their_feedback_joins_as_named_lines() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, _, ran = one_call(side, [
            handler(side, "style", before_tool_call=lambda self, e: i.Guide(feedback="move it to the trash instead")),
            handler(side, "neutral", before_tool_call=lambda self, e: i.Proceed()),
            handler(side, "safety", before_tool_call=lambda self, e: i.Guide(feedback="ask the owner first")),
        ])
        agent("clean up")
        return tool_results(agent.messages), ran

    assert both(program) == (
        [("error", "GUIDANCE: [style] move it to the trash instead\n[safety] ask the owner first")], [])


def test_a_deny_after_a_guide_wins_and_the_guidance_is_dropped() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, _, _ = one_call(side, [
            handler(side, "style", before_tool_call=lambda self, e: i.Guide(feedback="use the trash")),
            handler(side, "guard", before_tool_call=lambda self, e: i.Deny(reason="read-only day")),
        ])
        agent("clean up")
        return tool_results(agent.messages)

    assert both(program) == [("error", "DENIED: read-only day")]


def test_transform_changes_the_call_for_later_handlers_the_tool_and_the_result() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        seen: list[Any] = []

        def to_sandbox(event: Any) -> None:
            event.tool_use["input"]["path"] = "/sandbox/" + event.tool_use["input"]["path"]

        def redact(event: Any) -> None:
            event.result = {**event.result, "content": [{"text": "[redacted]"}]}

        agent, _, ran = one_call(side, [
            handler(side, "sandbox", before_tool_call=lambda self, e: i.Transform(apply=to_sandbox),
                    after_tool_call=lambda self, e: i.Transform(apply=redact)),
            handler(side, "watch", before_tool_call=lambda self, e: seen.append(dict(e.tool_use["input"]))
                    or i.Proceed()),
        ])
        agent("clean up")
        return ran, seen, tool_results(agent.messages)

    assert both(program) == (["/sandbox/a"], [{"path": "/sandbox/a"}], [("success", "[redacted]")])


def test_confirm_stops_with_an_interrupt_named_after_the_handler_and_runs_the_tool_on_yes() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, model, ran = one_call(side, [
            handler(side, "approver", before_tool_call=lambda self, e: i.Confirm(prompt="Delete a?")),
        ])
        asked = agent("clean up")
        stopped = (asked.stop_reason, [(x.name, x.reason) for x in asked.interrupts], list(ran), model.calls)
        done = agent(answers(asked, "YES "))
        return stopped, done.stop_reason, ran, tool_results(agent.messages), model.calls

    assert both(program) == (("interrupt", [("approver", "Delete a?")], [], 1), "end_turn", ["a"],
                             [("success", "deleted a")], 2)


@pytest.mark.parametrize("refusal", ["n", "no", False, "maybe"])
def test_a_refused_confirm_cancels_the_tool_with_confirmation_failed(refusal: Any) -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, _, ran = one_call(side, [
            handler(side, "approver", before_tool_call=lambda self, e: i.Confirm(prompt="Delete a?")),
            handler(side, "after", before_tool_call=lambda self, e: i.Deny(reason="never reached")),
        ])
        agent(answers(agent("clean up"), refusal))
        return ran, tool_results(agent.messages)

    assert both(program) == ([], [("error", "CONFIRMATION_FAILED: Delete a?")])


def test_confirm_with_a_response_known_in_advance_does_not_stop() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, _, ran = one_call(side, [
            handler(side, "approver", before_tool_call=lambda self, e: i.Confirm(
                prompt="Delete a?", response={"ok": e.tool_use["input"]["path"] == "a"},
                evaluate=lambda answer: answer["ok"])),
        ])
        result = agent("clean up")
        return result.stop_reason, ran

    assert both(program) == ("end_turn", ["a"])


def test_two_confirms_ask_one_after_the_other() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, _, ran = one_call(side, [
            handler(side, "owner", before_tool_call=lambda self, e: i.Confirm(prompt="owner ok?")),
            handler(side, "security", before_tool_call=lambda self, e: i.Confirm(prompt="security ok?")),
        ])
        first = agent("clean up")
        second = agent(answers(first, "y"))
        third = agent(answers(second, "y"))
        return ([x.name for x in first.interrupts], [x.name for x in second.interrupts], third.stop_reason, ran)

    assert both(program) == (["owner"], ["security"], "end_turn", ["a"])


def test_guide_before_a_model_call_adds_a_user_message_the_model_sees() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, model = side.agent(["the answer"], interventions=[
            handler(side, "cite", before_model_call=lambda self, e: i.Guide(feedback="cite your sources"))])
        result = agent("what is up?")
        return str(result).strip(), conversation(agent.messages), conversation(model.requests[0]["messages"])

    said = [("user", [{"text": "what is up?"}]), ("user", [{"text": "[cite] cite your sources"}])]
    assert both(program) == ("the answer", [*said, ("assistant", [{"text": "the answer"}])], said)


def test_guide_after_a_model_call_discards_the_reply_and_calls_again_with_the_feedback() -> None:
    def program(side: Side) -> Any:
        i = side.interventions

        class Reviewer(side.InterventionHandler):  # type: ignore[name-defined,misc]
            name = "reviewer"

            def __init__(self) -> None:
                self.reviews = 0

            def after_model_call(self, event: Any) -> Any:
                self.reviews += 1
                return i.Guide(feedback="be brief") if self.reviews == 1 else i.Proceed()

        agent, model = side.agent(["a very long answer", "short"], interventions=[Reviewer()])
        result = agent("hi")
        return (str(result).strip(), model.calls, conversation(agent.messages),
                conversation(model.requests[1]["messages"]))

    feedback = [("user", [{"text": "hi"}]), ("user", [{"text": "[reviewer] be brief"}])]
    assert both(program) == ("short", 2, [*feedback, ("assistant", [{"text": "short"}])], feedback)


def test_deny_before_a_model_call_answers_with_the_denial_without_calling_the_model() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, model = side.agent(["never said"], interventions=[
            handler(side, "budget", before_model_call=lambda self, e: i.Deny(reason="out of budget"))])
        result = agent("hi")
        return str(result).strip(), conversation(agent.messages), model.calls, result.stop_reason

    assert both(program) == (
        "DENIED: out of budget", [("user", [{"text": "hi"}]), ("assistant", [{"text": "DENIED: out of budget"}])], 0,
        "end_turn")


def test_deny_or_guide_before_the_invocation_answers_in_place_of_the_prompt() -> None:
    """The model is never called; the denial (or the guidance) is the reply, recorded in place of the prompt."""
    def program(side: Side, action: str) -> Any:
        i = side.interventions
        decide = (lambda self, e: i.Deny(reason="office hours are over")) if action == "deny" else (
            lambda self, e: i.Guide(feedback="ask the front desk"))
        agent, model = side.agent(["never said"], interventions=[handler(side, "hours", before_invocation=decide)])
        seen: list[Any] = []
        agent.add_hook(lambda e: seen.append(e.result), side.hooks.AfterInvocationEvent)
        result = agent("hi")
        return model.calls, result.stop_reason, str(result).strip(), conversation(agent.messages), seen

    for action, text in (("deny", "DENIED: office hours are over"), ("guide", "GUIDANCE: [hours] ask the front desk")):
        on_strands, on_statehitl = program(STRANDS, action), program(STATEHITL, action)
        assert on_statehitl == on_strands == (0, "end_turn", text, [("assistant", [{"text": text}])], [None])


def test_handlers_run_after_the_hooks_on_before_events_and_before_them_on_after_events() -> None:
    def program(side: Side) -> Any:
        i, h = side.interventions, side.hooks
        log: list[str] = []

        def record(label: str, action: Any = None) -> Any:
            return lambda self, event: log.append(label) or (action or i.Proceed())

        agent, _, _ = one_call(side, [handler(side, "policy", **{
            name: record(f"policy.{name}") for name in ("before_invocation", "before_model_call",
                                                        "after_model_call", "before_tool_call", "after_tool_call")})])
        for event in (h.BeforeInvocationEvent, h.BeforeModelCallEvent, h.AfterModelCallEvent,
                      h.BeforeToolCallEvent, h.AfterToolCallEvent):
            agent.add_hook(lambda e, name=event.__name__: log.append(f"hook.{name}"), event)
        agent("clean up")
        return log

    assert both(program) == [
        "hook.BeforeInvocationEvent", "policy.before_invocation",
        "hook.BeforeModelCallEvent", "policy.before_model_call", "policy.after_model_call", "hook.AfterModelCallEvent",
        "hook.BeforeToolCallEvent", "policy.before_tool_call", "policy.after_tool_call", "hook.AfterToolCallEvent",
        "hook.BeforeModelCallEvent", "policy.before_model_call", "policy.after_model_call", "hook.AfterModelCallEvent",
    ]


def test_async_handlers_are_awaited() -> None:
    def program(side: Side) -> Any:
        i = side.interventions

        async def check(self: Any, event: Any) -> Any:
            await asyncio.sleep(0)
            return i.Deny(reason=f"{event.tool_use['name']} is off limits")

        agent, _, ran = one_call(side, [handler(side, "async-guard", before_tool_call=check)])
        agent("clean up")
        return ran, tool_results(agent.messages)

    assert both(program) == ([], [("error", "DENIED: delete_file is off limits")])


@pytest.mark.parametrize(("on_error", "expected"), [
    ("deny", ([], [("error", "DENIED: Handler threw: policy store unreachable")])),
    ("proceed", (["a"], [("success", "deleted a")])),
])
def test_on_error_denies_or_proceeds_when_a_handler_raises(on_error: str, expected: Any) -> None:
    def program(side: Side) -> Any:
        def broken(self: Any, event: Any) -> Any:
            raise ConnectionError("policy store unreachable")

        policy = type("Broken", (side.InterventionHandler,), {"name": "broken", "on_error": on_error,
                                                                "before_tool_call": broken})()
        agent, _, ran = one_call(side, [policy])
        agent("clean up")
        return ran, tool_results(agent.messages)

    assert both(program) == expected


def test_on_error_throw_fails_the_run_and_nothing_runs() -> None:
    def program(side: Side) -> Any:
        def broken(self: Any, event: Any) -> Any:
            raise ConnectionError("policy store unreachable")

        agent, _, ran = one_call(side, [handler(side, "broken", before_tool_call=broken)])
        with pytest.raises(Exception, match="policy store unreachable") as raised:
            agent("clean up")
        failure = raised.value if isinstance(raised.value, ConnectionError) else raised.value.__cause__
        return type(failure).__name__, str(failure), ran

    assert both(program) == ("ConnectionError", "policy store unreachable", [])


def test_a_handler_returning_none_fails_the_run() -> None:
    def program(side: Side) -> Any:
        agent, _, ran = one_call(side, [handler(side, "forgetful", before_tool_call=lambda self, e: None)])
        with pytest.raises(Exception, match="returned None") as raised:
            agent("clean up")
        failure = raised.value if isinstance(raised.value, TypeError) else raised.value.__cause__
        return type(failure).__name__, str(failure), ran

    assert both(program) == ("TypeError", "handler 'forgetful.before_tool_call' returned None; expected an "
                                          "InterventionAction", [])


def test_two_handlers_of_one_name_are_refused_when_the_agent_is_built() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        twins = [handler(side, "twin", before_tool_call=lambda self, e: i.Proceed()) for _ in range(2)]
        with pytest.raises(ValueError, match="Duplicate") as raised:
            side.agent([], interventions=twins)
        return str(raised.value)

    assert both(program) == "Duplicate intervention handler name: 'twin'"


def test_only_methods_overridden_on_the_class_are_called() -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        quiet = handler(side, "quiet")
        quiet.before_tool_call = lambda event: i.Deny(reason="set on the instance")
        agent, _, ran = one_call(side, [quiet])
        agent("clean up")
        return ran

    assert both(program) == ["a"]


def test_actions_without_meaning_on_an_event_are_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    def program(side: Side) -> Any:
        i = side.interventions
        agent, _, ran = one_call(side, [handler(
            side, "misplaced",
            after_model_call=lambda self, e: i.Deny(reason="too late"),
            after_tool_call=lambda self, e: i.Guide(feedback="too late"),
            before_model_call=lambda self, e: i.Confirm(prompt="not here"))])
        with caplog.at_level(logging.WARNING):
            result = agent("clean up")
        warned = sorted(r.getMessage() for r in caplog.records if "has no effect" in r.getMessage())
        caplog.clear()
        return result.stop_reason, ran, warned

    stop, ran, warned = both(program)
    assert (stop, ran) == ("end_turn", ["a"])
    assert warned == sorted([
        "handler=<misplaced>, event=<after_model_call> | deny has no effect",
        "handler=<misplaced>, event=<before_model_call> | confirm has no effect",
        "handler=<misplaced>, event=<after_model_call> | deny has no effect",
        "handler=<misplaced>, event=<before_model_call> | confirm has no effect",
        "handler=<>, event=<after_tool_call> | guide has no effect",
    ])
