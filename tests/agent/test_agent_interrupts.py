"""The seed's interrupt rules for agents: hooks, tools, batches, resumes, bad input."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from agent_helpers import answer, assert_no_dangling_tool_use, uses

from statehitl import Agent, tool
from statehitl.agent.binary import from_json_safe, to_json_safe
from statehitl.errors import InterruptReasonError, NotInterruptedError, ResumeInputError, UnknownInterruptError
from statehitl.hooks import (
    AfterToolCallEvent,
    AfterToolsEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    MessageAddedEvent,
)
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager
from statehitl.types.tools import ToolContext


def make_tools(calls: list[str]) -> list[Any]:
    @tool
    def delete_files(paths: list[str]) -> bool:
        calls.append(f"delete {paths}")
        return True

    @tool
    def inspect_files(paths: list[str]) -> dict[str, Any]:
        calls.append(f"inspect {paths}")
        return {"count": len(paths)}

    @tool(context=True)
    def guarded(tool_context: ToolContext, what: str) -> str:
        first = tool_context.interrupt("approve", reason={"what": what})
        second = tool_context.interrupt("confirm", reason={"what": what, "first": first})
        calls.append(f"guarded {what} {first} {second}")
        return f"{first}/{second}"

    return [delete_files, inspect_files, guarded]


def approve_deletes(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] != "delete_files":
        return
    approval = event.interrupt("myapp-approval", reason={"paths": event.tool_use["input"]["paths"]})
    if approval.lower() != "y":
        event.cancel_tool = "User denied permission to delete files"


BATCH = uses(("t1", "inspect_files", {"paths": ["a"]}), ("t2", "delete_files", {"paths": ["a"]}))


def test_a_hook_interrupt_stops_one_tool_and_the_others_still_run(calls: list[str]) -> None:
    model = ScriptedModel([BATCH, "done"])
    agent = Agent(model=model, tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_deletes)
    result = agent("clean up")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    assert (interrupt.name, interrupt.reason, interrupt.source) == ("myapp-approval", {"paths": ["a"]}, "hook")
    assert calls == ["inspect ['a']"]
    assert result.message == BATCH  # the assistant message whose tools wait
    assert_no_dangling_tool_use(agent.messages)
    assert [m["role"] for m in agent.messages] == ["user"]
    result = agent(answer(result, "y"))
    assert result.stop_reason == "end_turn"
    assert calls == ["inspect ['a']", "delete ['a']"]  # the finished tool did not run again
    assert model.calls == 2  # and the model was not called before the remaining tool
    assert_no_dangling_tool_use(agent.messages)
    assert [b["toolResult"]["toolUseId"] for b in agent.messages[2]["content"]] == ["t1", "t2"]


def test_a_denied_tool_gets_the_cancel_message_as_its_error_result(calls: list[str]) -> None:
    agent = Agent(model=ScriptedModel([BATCH, "ok"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_deletes)
    agent(answer(agent("clean up"), "n"))
    result = agent.messages[2]["content"][1]["toolResult"]
    assert result["status"] == "error"
    assert result["content"] == [{"text": "User denied permission to delete files"}]
    assert calls == ["inspect ['a']"]


def test_cancel_tool_true_uses_a_default_message(calls: list[str]) -> None:
    agent = Agent(model=ScriptedModel([BATCH, "ok"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, lambda e: setattr(e, "cancel_tool", e.tool_use["name"] == "delete_files"))
    agent("go")
    result = agent.messages[2]["content"][1]["toolResult"]
    assert result["status"] == "error"
    assert "delete_files" in result["content"][0]["text"]


def test_after_tool_call_skips_interrupted_tools_and_after_tools_fires_every_cycle(calls: list[str]) -> None:
    events: list[str] = []
    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_deletes)
    agent.add_hook(AfterToolCallEvent, lambda e: events.append(f"after {e.tool_use['name']}"))
    agent.add_hook(AfterToolsEvent, lambda e: events.append(
        f"after tools {[b['toolResult']['toolUseId'] for b in e.message['content']]}"))
    first = agent("go")
    assert events == ["after inspect_files", "after tools ['t1']"]
    events.clear()
    agent(answer(first))
    assert events == ["after delete_files", "after tools ['t2']"]


def test_every_hook_on_the_event_runs_and_each_may_interrupt(calls: list[str]) -> None:
    ran: list[str] = []

    def legal(event: BeforeToolCallEvent) -> None:
        ran.append("legal")
        if event.tool_use["name"] == "delete_files":
            event.interrupt("legal-approval")

    def security(event: BeforeToolCallEvent) -> None:
        ran.append("security")
        if event.tool_use["name"] == "delete_files":
            event.interrupt("security-approval")

    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, legal)
    agent.add_hook(BeforeToolCallEvent, security)
    result = agent("go")
    assert sorted(i.name for i in result.interrupts) == ["legal-approval", "security-approval"]
    assert ran.count("security") == 2  # it ran for both tools, after legal interrupted
    assert agent(answer(result)).stop_reason == "end_turn"
    assert calls == ["inspect ['a']", "delete ['a']"]


def test_one_hook_interrupts_again_after_its_first_answer(calls: list[str]) -> None:
    def twice(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        first = event.interrupt("first")
        second = event.interrupt("second", reason={"first": first})
        if (first, second) != ("y", "y"):
            event.cancel_tool = True

    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, twice)
    result = agent("go")
    assert [i.name for i in result.interrupts] == ["first"]
    result = agent(answer(result))
    assert [(i.name, i.reason) for i in result.interrupts] == [("second", {"first": "y"})]
    assert calls == ["inspect ['a']"]
    assert agent(answer(result)).stop_reason == "end_turn"
    assert calls == ["inspect ['a']", "delete ['a']"]


def test_concurrent_tools_all_interrupt_and_the_rest_finish(calls: list[str]) -> None:
    batch = uses(("t1", "guarded", {"what": "x"}), ("t2", "guarded", {"what": "y"}),
                 ("t3", "inspect_files", {"paths": ["p"]}))
    model = ScriptedModel([batch, "done"])
    agent = Agent(model=model, tools=make_tools(calls), callback_handler=None)
    result = agent("go")
    # Interrupt names need only be unique per tool call: both calls raise "approve", with distinct ids.
    assert [(i.name, i.source, i.reason) for i in result.interrupts] == [
        ("approve", "tool", {"what": "x"}), ("approve", "tool", {"what": "y"})]
    assert len({i.id for i in result.interrupts}) == 2
    assert calls == ["inspect ['p']"]
    result = agent([{"interruptResponse": {"interruptId": i.id, "response": f"ok-{i.reason['what']}"}}
                    for i in result.interrupts])
    assert [(i.name, i.reason) for i in result.interrupts] == [
        ("confirm", {"what": "x", "first": "ok-x"}), ("confirm", {"what": "y", "first": "ok-y"})]
    # Answer only one of them: the other keeps waiting, the answered one finishes and is kept.
    result = agent(answer(type("R", (), {"interrupts": result.interrupts[:1]})(), "sure"))
    assert [i.reason["what"] for i in result.interrupts] == ["y"]
    result = agent(answer(result, "fine"))
    assert result.stop_reason == "end_turn"
    assert calls == ["inspect ['p']", "guarded x ok-x sure", "guarded y ok-y fine"]
    assert model.calls == 2
    assert [b["toolResult"]["content"] for b in agent.messages[2]["content"]] == [
        [{"text": "ok-x/sure"}], [{"text": "ok-y/fine"}], [{"text": "{'count': 1}"}]]


def test_before_tools_interrupt_holds_the_whole_batch(calls: list[str]) -> None:
    per_tool: list[str] = []

    def batch_approval(event: BeforeToolsEvent) -> None:
        names = [c["toolUse"]["name"] for c in event.message["content"] if "toolUse" in c]
        if "delete_files" in names and event.interrupt("myapp-batch-approval", reason={"tools": names}) != "y":
            event.cancel = "Batch cancelled by user"

    def make() -> Agent:
        agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
        agent.add_hook(BeforeToolsEvent, batch_approval)
        agent.add_hook(BeforeToolCallEvent, lambda e: per_tool.append(e.tool_use["name"]))
        return agent

    agent = make()
    result = agent("go")
    assert [(i.name, i.reason) for i in result.interrupts] == [
        ("myapp-batch-approval", {"tools": ["inspect_files", "delete_files"]})]
    assert calls == []
    assert per_tool == []
    agent(answer(result, "y"))
    assert calls == ["inspect ['a']", "delete ['a']"]
    assert per_tool == ["inspect_files", "delete_files"]

    calls.clear()
    per_tool.clear()
    agent = make()
    agent(answer(agent("go"), "n"))
    assert calls == []
    assert per_tool == []  # a cancelled batch fires no per-tool events
    results = [b["toolResult"] for b in agent.messages[2]["content"]]
    assert [(r["status"], r["content"][0]["text"]) for r in results] == [("error", "Batch cancelled by user")] * 2


def test_no_dangling_tool_use_is_ever_visible(calls: list[str]) -> None:
    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_deletes)
    for event_type in (BeforeToolCallEvent, AfterToolCallEvent, AfterToolsEvent, MessageAddedEvent):
        agent.add_hook(event_type, lambda e: assert_no_dangling_tool_use(e.agent.messages))
    result = agent("go")
    assert_no_dangling_tool_use(agent.messages)
    agent(answer(result))
    assert_no_dangling_tool_use(agent.messages)


def test_resume_input_is_checked_and_a_rejected_call_changes_nothing(tmp_path: Any, calls: list[str]) -> None:
    session = FileSessionManager(session_id="s1", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), session_manager=session,
                  callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_deletes)
    result = agent("go")

    def files() -> dict[str, bytes]:
        return {str(p): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}

    before = files()
    good = answer(result)
    with pytest.raises(ResumeInputError, match="waiting on interrupts"):
        agent("a plain prompt")
    with pytest.raises(UnknownInterruptError, match="not pending"):
        agent([{"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}])
    with pytest.raises(ResumeInputError, match="interruptResponse"):
        agent([*good, {"text": "and also this"}])
    with pytest.raises(TypeError):
        agent([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": {1, 2}}}])
    assert files() == before
    assert calls == ["inspect ['a']"]
    assert agent(good).stop_reason == "end_turn"
    with pytest.raises(NotInterruptedError, match="not waiting on any interrupt"):
        agent(good)


def test_a_non_json_reason_fails_at_the_raise(calls: list[str]) -> None:
    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, lambda e: e.interrupt("bad", reason={"when": object()}))
    with pytest.raises(InterruptReasonError, match=r"reason of interrupt 'bad'.*\$\.when"):
        agent("go")


def test_hooks_may_be_async(calls: list[str]) -> None:
    async def approve(event: BeforeToolCallEvent) -> None:
        await asyncio.sleep(0)
        approve_deletes(event)

    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve)
    assert agent(answer(agent("go"))).stop_reason == "end_turn"
    assert calls == ["inspect ['a']", "delete ['a']"]


def test_interrupt_names_are_unique_per_event_across_its_hooks(calls: list[str]) -> None:
    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, lambda e: e.interrupt("approval"))
    agent.add_hook(BeforeToolCallEvent, lambda e: e.interrupt("approval"))
    with pytest.raises(ValueError, match="'approval' is used twice"):
        agent("go")
    assert calls == []


def test_bytes_in_messages_survive_checkpoints_and_a_new_agent(tmp_path: Any) -> None:
    """Images in the prompt and in tool results are raw bytes in Converse; JSON checkpoints keep them."""
    png = b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary"

    @tool
    def screenshot() -> dict[str, Any]:
        return {"status": "success", "content": [{"image": {"format": "png", "source": {"bytes": png}}}]}

    @tool
    def delete_files(paths: list[str]) -> bool:
        return True

    batch = uses(("t1", "screenshot", {}), ("t2", "delete_files", {"paths": ["a"]}))
    session = FileSessionManager(session_id="pictures", storage_dir=tmp_path)
    first = Agent(model=ScriptedModel([batch]), tools=[screenshot, delete_files], session_manager=session,
                  callback_handler=None)
    first.add_hook(BeforeToolCallEvent, approve_deletes)
    prompt = [{"text": "what is on screen?"}, {"image": {"format": "png", "source": {"bytes": png}}}]
    result = first(prompt)
    assert result.stop_reason == "interrupt"  # the screenshot's result waits in the checkpoint

    model = ScriptedModel(["a cat"])
    second = Agent(model=model, tools=[screenshot, delete_files], session_manager=session, callback_handler=None)
    second.add_hook(BeforeToolCallEvent, approve_deletes)
    assert second.messages[0]["content"][1]["image"]["source"]["bytes"] == png
    assert str(second(answer(result))) == "a cat"
    sent = model.requests[0]["messages"]
    assert sent[0]["content"][1]["image"]["source"]["bytes"] == png
    assert sent[2]["content"][0]["toolResult"]["content"][0]["image"]["source"]["bytes"] == png


def test_only_bytes_are_tagged_and_plain_json_is_kept_as_it_is() -> None:
    plain = [{"role": "user", "content": [{"text": "naïve", "n": 1.5, "ok": True, "none": None}]}]
    for value in (plain, {}, None, "end_turn", 3):
        assert to_json_safe(value) is value
    when = datetime(2024, 1, 2, tzinfo=UTC)  # not JSON, not bytes: left for the record's own encoder
    mixed = {"image": {"bytes": b"\x89PNG"}, "raw": bytearray(b"x"), "pair": (b"", "s"), "when": when}
    tagged = to_json_safe(mixed)
    assert tagged == {"image": {"bytes": {"$bytes": "iVBORw=="}}, "raw": {"$bytes": "eA=="},
                      "pair": [{"$bytes": ""}, "s"], "when": when}
    assert from_json_safe(tagged) == {**mixed, "raw": b"x", "pair": [b"", "s"]}


def test_user_data_that_looks_like_the_bytes_tag_comes_back_as_it_went_in(tmp_path) -> None:
    lookalikes = {"$bytes": "aGk=", "$$bytes": ["x"], "nested": [{"$bytes": "eA=="}], "$other": 1}
    for value in (lookalikes, {"$bytes": "aGk=", "real": b"hi"}):
        assert from_json_safe(to_json_safe(value)) == value
    session = FileSessionManager(session_id="s", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel(["ok"]), session_manager=session, callback_handler=None)
    agent.state.set("x", lookalikes)
    agent("remember this")
    again = Agent(model=ScriptedModel(["ok"]), session_manager=session, callback_handler=None)
    assert again.state.get("x") == lookalikes  # not bytes: the session restores, now and every time
    assert str(again("and again")) == "ok"
    assert Agent(model=ScriptedModel([]), session_manager=session, callback_handler=None).state.get("x") == lookalikes


def test_answers_known_in_advance_do_not_stop_the_agent(calls: list[str]) -> None:
    approved = {"delete_files": "y"}

    def approve(event: BeforeToolCallEvent) -> None:
        name = event.tool_use["name"]
        if event.interrupt(f"{name}-approval", response=approved.get(name)) != "y":
            event.cancel_tool = "not approved"

    agent = Agent(model=ScriptedModel([BATCH, "done"]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve)
    result = agent("go")
    assert [i.name for i in result.interrupts] == ["inspect_files-approval"]
    assert calls == ["delete ['a']"]  # answered in advance: it ran with the batch
    assert str(agent(answer(result))) == "done"
    assert sorted(calls) == ["delete ['a']", "inspect ['a']"]


def test_the_stream_announces_cancelled_and_interrupted_tools(calls: list[str]) -> None:
    def hook(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_files":
            event.interrupt("approval", reason="delete?")
        else:
            event.cancel_tool = "not now"

    agent = Agent(model=ScriptedModel([BATCH]), tools=make_tools(calls), callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, hook)

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async("go")]

    events = asyncio.run(collect())
    [cancelled] = [e["tool_cancel_event"] for e in events if "tool_cancel_event" in e]
    assert cancelled == {"tool_use": BATCH["content"][0]["toolUse"], "message": "not now"}
    [interrupted] = [e["tool_interrupt_event"] for e in events if "tool_interrupt_event" in e]
    assert interrupted["tool_use"]["toolUseId"] == "t2"
    assert [i.name for i in interrupted["interrupts"]] == ["approval"]
    assert events[-1]["result"].interrupts[0].id == interrupted["interrupts"][0].id
    assert calls == []


def test_the_stream_announces_a_tool_that_interrupts_itself() -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        return str(tool_context.interrupt("sure?", reason="asking"))

    agent = Agent(model=ScriptedModel([uses(("t1", "ask", {}))]), tools=[ask], callback_handler=None)

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async("go")]

    [interrupted] = [e["tool_interrupt_event"] for e in asyncio.run(collect()) if "tool_interrupt_event" in e]
    assert interrupted["tool_use"]["toolUseId"] == "t1"
    assert [(i.name, i.reason, i.source) for i in interrupted["interrupts"]] == [("sure?", "asking", "tool")]


def test_an_agent_rebuilt_on_its_session_lists_what_it_waits_on(tmp_path, calls: list[str]) -> None:
    session = FileSessionManager(session_id="s", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel([BATCH]), tools=make_tools(calls), session_manager=session,
                  callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve_deletes)
    assert agent.interrupts == []
    result = agent("go")
    assert agent.interrupts == result.interrupts
    rebuilt = Agent(model=ScriptedModel(["done"]), tools=make_tools(calls), session_manager=session,
                    callback_handler=None)
    rebuilt.add_hook(BeforeToolCallEvent, approve_deletes)
    assert [(i.id, i.name, i.reason) for i in rebuilt.interrupts] == [(i.id, i.name, i.reason)
                                                                     for i in result.interrupts]
    rebuilt(answer(result))
    assert rebuilt.interrupts == []
