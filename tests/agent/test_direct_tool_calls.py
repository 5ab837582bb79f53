"""``agent.tool.<name>(...)``: the tool's hooks fire, interrupts are refused, and the call is recorded in
the conversation (and the session) the way Strands records it, unless asked not to."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import add, answer, assert_no_dangling_tool_use, uses

from statehitl import Agent, tool
from statehitl.errors import CheckpointConflict, DirectToolCallError
from statehitl.hooks import AfterToolCallEvent, BeforeToolCallEvent, MessageAddedEvent
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager
from statehitl.types.tools import ToolContext


def recorded(use_id: str, request: list[str], tool_input: dict[str, Any], result: dict[str, Any]) -> list[Any]:
    """The four messages a direct call of ``add`` is recorded as."""
    return [
        {"role": "user", "content": [{"text": text} for text in request]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": use_id, "name": "add", "input": tool_input}}]},
        {"role": "user", "content": [{"toolResult": result}]},
        {"role": "assistant", "content": [{"text": "agent.tool.add was called."}]},
    ]


def files(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_direct_call_joins_the_conversation_and_the_model_sees_it() -> None:
    model = ScriptedModel(["noted"])
    agent = Agent(model=model, tools=[add], callback_handler=None)
    added: list[dict[str, Any]] = []
    agent.add_hook(MessageAddedEvent, lambda event: added.append(event.message))
    held = agent.messages

    result = agent.tool.add(a=1, b=2, unused="dropped", user_message_override="Add these for me.")

    use_id = result["toolUseId"]
    assert use_id.startswith("tooluse_add_")
    assert result == {"toolUseId": use_id, "status": "success", "content": [{"text": "3"}]}
    expected = recorded(use_id, ["Add these for me.\n", 'agent.tool.add direct tool call.\nInput parameters: '
                                 '{"a": 1, "b": 2}\n'], {"a": 1, "b": 2}, result)
    assert agent.messages == expected
    assert held is agent.messages  # appended in place
    assert added == expected
    assert_no_dangling_tool_use(agent.messages)

    agent("what did you do?")
    assert model.requests[0]["messages"][:4] == expected
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]


def test_recording_can_be_switched_off_for_the_agent_or_for_one_call() -> None:
    quiet = Agent(model=ScriptedModel([]), tools=[add], callback_handler=None, record_direct_tool_call=False)
    assert quiet.tool.add(a=1, b=1)["content"] == [{"text": "2"}]
    assert quiet.messages == []
    quiet.tool.add(a=2, b=2, record_direct_tool_call=True)
    assert len(quiet.messages) == 4

    agent = Agent(model=ScriptedModel([]), tools=[add], callback_handler=None)
    agent.tool.add(a=1, b=1, record_direct_tool_call=False, user_message_override="ignored")
    assert agent.messages == []


def test_a_failed_call_is_recorded_as_the_error_result_the_model_would_get() -> None:
    agent = Agent(model=ScriptedModel([]), tools=[add], callback_handler=None)
    result = agent.tool.add(a="one", b=2)
    assert result["status"] == "error"
    assert "a" in result["content"][0]["text"]
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"a": "one", "b": 2}
    assert agent.messages[2]["content"][0]["toolResult"] == result


def test_the_tools_hooks_fire_and_can_cancel_or_replace_the_result() -> None:
    agent = Agent(model=ScriptedModel([]), tools=[add], callback_handler=None)
    seen: list[tuple[str, Any]] = []

    def before(event: BeforeToolCallEvent) -> None:
        seen.append(("before", event.tool_use["input"]))
        if event.tool_use["input"].get("a") == 13:
            event.cancel_tool = "13 is unlucky"

    def after(event: AfterToolCallEvent) -> None:
        seen.append(("after", event.result["status"]))
        if event.result["status"] == "success":
            event.result = {**event.result, "content": [{"text": "checked: " + event.result["content"][0]["text"]}]}

    agent.add_hook(BeforeToolCallEvent, before)
    agent.add_hook(AfterToolCallEvent, after)

    assert agent.tool.add(a=1, b=2)["content"] == [{"text": "checked: 3"}]
    cancelled = agent.tool.add(a=13, b=1)
    assert cancelled["status"] == "error"
    assert cancelled["content"] == [{"text": "13 is unlucky"}]
    assert seen == [("before", {"a": 1, "b": 2}), ("after", "success"), ("before", {"a": 13, "b": 1}),
                    ("after", "error")]
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "checked: 3"}]
    assert agent.messages[6]["content"][0]["toolResult"] == cancelled


def test_an_interrupt_from_a_hook_is_refused_and_nothing_is_recorded(tmp_path: Path) -> None:
    session = FileSessionManager(session_id="s1", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel(["hi"]), tools=[add], session_manager=session, callback_handler=None)
    agent("hello")
    before = files(tmp_path)
    ran: list[str] = []

    def approve(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval", reason={"tool": event.tool_use["name"]})

    agent.add_hook(BeforeToolCallEvent, approve)
    agent.add_hook(AfterToolCallEvent, lambda event: ran.append("after"))
    with pytest.raises(DirectToolCallError, match=r"BeforeToolCallEvent hook called interrupt\('approval'\)"):
        agent.tool.add(a=1, b=2)
    assert ran == []
    assert len(agent.messages) == 2
    assert files(tmp_path) == before


def test_an_interrupt_from_the_tool_is_refused() -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        return str(tool_context.interrupt("ok?"))

    agent = Agent(model=ScriptedModel([]), tools=[ask], callback_handler=None)
    with pytest.raises(DirectToolCallError, match=r"the tool called interrupt\('ok\?'\) in a direct tool call"):
        agent.tool.ask()
    assert agent.messages == []


def test_a_recorded_call_is_saved_in_the_session_at_once(tmp_path: Path) -> None:
    def server() -> Agent:
        return Agent(model=ScriptedModel(["seen it"]), tools=[add],
                     session_manager=FileSessionManager(session_id="s1", storage_dir=tmp_path), callback_handler=None)

    first = server()
    result = first.tool.add(a=20, b=22)  # a new session: the call is its first checkpoint
    checkpointer = first.checkpointer
    latest = asyncio.run(checkpointer.latest(first.thread_id))
    assert latest is not None
    assert (latest.status, latest.source, list(latest.writes)) == ("completed", "update", ["direct_tool_call"])
    assert [(e.thread_id, e.status) for e in asyncio.run(checkpointer.threads())] == [(first.thread_id, "completed")]

    later = server()
    assert later.messages == recorded(result["toolUseId"], ['agent.tool.add direct tool call.\nInput parameters: '
                                                            '{"a": 20, "b": 22}\n'], {"a": 20, "b": 22}, result)
    assert str(later("and now?")) == "seen it"
    assert len(server().messages) == 6


def test_an_edited_history_is_saved_whole_with_the_call(tmp_path: Path) -> None:
    def build(replies: list[Any]) -> Agent:
        return Agent(model=ScriptedModel(replies), tools=[add],
                     session_manager=FileSessionManager(session_id="s1", storage_dir=tmp_path), callback_handler=None)

    agent = build(["one", "two"])
    agent("hello")
    agent("again")
    agent.messages = agent.messages[2:]  # forget the first exchange
    result = agent.tool.add(a=1, b=1)
    texts = [m["content"][0].get("text") for m in build([]).messages]
    assert texts[:2] == ["again", "two"]
    assert build([]).messages == agent.messages
    assert build([]).messages[3]["content"][0]["toolUse"]["toolUseId"] == result["toolUseId"]
    assert len(build([]).messages) == 6


def test_recording_waits_for_an_answered_interrupt_but_a_plain_call_does_not(tmp_path: Path, calls: list[str]) -> None:
    @tool
    def delete_files(paths: list[str]) -> bool:
        calls.append(f"delete {paths}")
        return True

    def approve(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_files" and event.interrupt("approval") != "y":
            event.cancel_tool = "not approved"

    session = FileSessionManager(session_id="s1", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel([uses(("t1", "delete_files", {"paths": ["a"]})), "deleted"]),
                  tools=[add, delete_files], session_manager=session, callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, approve)
    result = agent("clean up")
    assert result.stop_reason == "interrupt"
    before = files(tmp_path)
    with pytest.raises(RuntimeError, match="waiting on an interrupt"):
        agent.tool.add(a=1, b=2)
    assert agent.tool.add(a=1, b=2, record_direct_tool_call=False)["content"] == [{"text": "3"}]
    assert files(tmp_path) == before
    assert len(agent.messages) == 1

    assert str(agent(answer(result))) == "deleted"
    assert calls == ["delete ['a']"]
    agent.tool.add(a=1, b=2)
    assert len(agent.messages) == 8
    assert_no_dangling_tool_use(agent.messages)


def test_a_tool_may_call_another_directly_during_a_run_but_not_record_it() -> None:
    outcomes: list[Any] = []

    @tool(context=True)
    def double_add(a: int, tool_context: ToolContext) -> int:
        agent = tool_context.agent
        with pytest.raises(RuntimeError, match="is running a call"):
            agent.tool.add(a=a, b=a)
        inner = agent.tool.add(a=a, b=a, record_direct_tool_call=False)
        outcomes.append(inner)
        return int(inner["content"][0]["text"])

    agent = Agent(model=ScriptedModel([uses(("t1", "double_add", {"a": 4})), "8"]), tools=[add, double_add],
                  callback_handler=None)
    assert str(agent("double 4")) == "8"
    assert outcomes[0]["content"] == [{"text": "8"}]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]


def test_a_failed_save_takes_the_messages_back(tmp_path: Path) -> None:
    def build(replies: list[Any]) -> Agent:
        return Agent(model=ScriptedModel(replies), tools=[add],
                     session_manager=FileSessionManager(session_id="s1", storage_dir=tmp_path), callback_handler=None)

    first = build(["one"])
    first("hello")
    stale = build(["two"])
    first.tool.add(a=1, b=1)  # the session moves on without `stale` knowing
    with pytest.raises(CheckpointConflict):
        stale.tool.add(a=2, b=2)
    assert len(stale.messages) == 2
    assert len(build([]).messages) == 6  # the store holds the first agent's call only
    stale("again")  # reloads the session first
    assert len(stale.messages) == 8


def test_after_a_failed_call_the_session_is_reloaded_before_recording(tmp_path: Path) -> None:
    session = FileSessionManager(session_id="s1", storage_dir=tmp_path)
    script = ["one", uses(("t1", "add", {"a": 2, "b": 2})), RuntimeError("model down")]
    agent = Agent(model=ScriptedModel(script), tools=[add], session_manager=session, callback_handler=None)
    agent("hello")
    with pytest.raises(RuntimeError, match="model down"):
        agent("add 2 and 2")  # its tool step was checkpointed before the model failed
    assert len(agent.messages) == 2
    agent.tool.add(a=1, b=1)
    first, failed, recorded_call = ["user", "assistant"], ["user", "assistant", "user"], ["user", "assistant"] * 2
    assert [m["role"] for m in agent.messages] == [*first, *failed, *recorded_call]
    reloaded = Agent(model=ScriptedModel([]), tools=[add],
                     session_manager=FileSessionManager(session_id="s1", storage_dir=tmp_path), callback_handler=None)
    assert reloaded.messages == agent.messages


def test_a_failing_message_hook_takes_the_messages_back() -> None:
    agent = Agent(model=ScriptedModel([]), tools=[add], callback_handler=None)

    def refuse(event: MessageAddedEvent) -> None:
        if "toolResult" in event.message["content"][0]:
            raise ValueError("no results today")

    agent.add_hook(MessageAddedEvent, refuse)
    with pytest.raises(ValueError, match="no results today"):
        agent.tool.add(a=1, b=2)
    assert agent.messages == []


def test_underscores_in_the_attribute_stand_for_dashes_in_the_tool_name() -> None:
    @tool(name="get-user_info")
    def info(user: str) -> str:
        return f"info on {user}"

    agent = Agent(model=ScriptedModel([]), tools=[info], callback_handler=None, record_direct_tool_call=False)
    assert agent.tool.get_user_info(user="ann")["content"] == [{"text": "info on ann"}]
    with pytest.raises(AttributeError, match="no tool 'get_user'"):
        agent.tool.get_user()


def test_a_hook_or_tool_with_a_known_answer_works_in_a_direct_call() -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        return str(tool_context.interrupt("ok?", response="fine"))

    agent = Agent(model=ScriptedModel([]), tools=[add, ask], callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, lambda event: event.interrupt("approval", response="y"))
    assert agent.tool.add(a=1, b=2)["content"] == [{"text": "3"}]
    assert agent.tool.ask()["content"] == [{"text": "fine"}]
