"""The agent without interrupts: the loop, tools, results, messages, state, streaming, direct calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_helpers import add, assert_no_dangling_tool_use, uses

from statehitl import Agent, tool
from statehitl.errors import DirectToolCallError, InterruptError, NotJSONError
from statehitl.hooks import AfterModelCallEvent, BeforeModelCallEvent, MessageAddedEvent
from statehitl.models import ScriptedModel
from statehitl.tools.executors import SequentialToolExecutor


@tool
def broken(x: int) -> int:
    raise RuntimeError(f"disk on fire at {x}")


def test_a_tool_call_then_an_answer() -> None:
    model = ScriptedModel([uses(("t1", "add", {"a": 2, "b": 3})), "It is 5."])
    agent = Agent(model=model, tools=[add], system_prompt="You add.", callback_handler=None)
    result = agent("what is 2+3?")
    assert result.stop_reason == "end_turn"
    assert str(result) == "It is 5."
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[2]["content"][0]["toolResult"] == {
        "toolUseId": "t1", "status": "success", "content": [{"text": "5"}]}
    assert model.calls == 2
    assert model.requests[0]["system_prompt"] == "You add."
    assert model.requests[0]["tool_specs"][0]["name"] == "add"
    assert model.requests[1]["messages"][-1]["content"][0]["toolResult"]["toolUseId"] == "t1"
    assert result.metrics.cycle_count == 2
    assert result.metrics.tool_metrics["add"].success_count == 1
    assert result.metrics.accumulated_usage["totalTokens"] > 0


def test_the_conversation_continues_across_calls() -> None:
    model = ScriptedModel(["one", "two"])
    agent = Agent(model=model, callback_handler=None)
    agent("first")
    agent("second")
    assert [b["text"] for m in agent.messages for b in m["content"]] == ["first", "one", "second", "two"]
    assert len(model.requests[1]["messages"]) == 3


def test_tool_failures_and_bad_input_become_error_results_for_the_model() -> None:
    model = ScriptedModel([
        uses(("t1", "broken", {"x": 1}), ("t2", "add", {"a": "nope", "b": 1}), ("t3", "missing", {})),
        "sorry",
    ])
    agent = Agent(model=model, tools=[add, broken], callback_handler=None)
    result = agent("go")
    assert result.stop_reason == "end_turn"
    results = {b["toolResult"]["toolUseId"]: b["toolResult"] for b in agent.messages[2]["content"]}
    assert all(r["status"] == "error" for r in results.values())
    assert "disk on fire at 1" in results["t1"]["content"][0]["text"]
    assert "a" in results["t2"]["content"][0]["text"]
    assert "'missing'" in results["t3"]["content"][0]["text"]
    assert result.metrics.tool_metrics["broken"].error_count == 1


def test_a_batch_runs_concurrently_by_default_and_in_order_on_request() -> None:
    log: list[str] = []

    @tool
    async def slow(name: str) -> str:
        log.append(f"start {name}")
        await asyncio.sleep(0.01)
        log.append(f"end {name}")
        return name

    batch = uses(("t1", "slow", {"name": "a"}), ("t2", "slow", {"name": "b"}))
    Agent(model=ScriptedModel([batch, "done"]), tools=[slow], callback_handler=None)("go")
    assert log[:2] == ["start a", "start b"]
    log.clear()
    Agent(model=ScriptedModel([batch, "done"]), tools=[slow], callback_handler=None,
          tool_executor=SequentialToolExecutor())("go")
    assert log == ["start a", "end a", "start b", "end b"]


def test_agent_state_holds_json_only() -> None:
    agent = Agent(model=ScriptedModel([]), state={"a": 1}, callback_handler=None)
    agent.state.set("b", [1, {"c": None}])
    assert agent.state.get() == {"a": 1, "b": [1, {"c": None}]}
    agent.state.delete("a")
    assert agent.state.get("a") is None
    with pytest.raises(NotJSONError, match=r"agent state value for 'x'.*set") as err:
        agent.state.set("x", {1, 2})
    # A bad state value is not interrupt misuse: a handler for that must not catch it.
    assert not isinstance(err.value, InterruptError)
    assert isinstance(err.value, TypeError)


def test_direct_tool_calls_return_the_result_and_refuse_interrupts() -> None:
    @tool(context=True)
    def ask(tool_context: Any) -> str:
        return str(tool_context.interrupt("ok?"))

    agent = Agent(model=ScriptedModel([]), tools=[add, ask], callback_handler=None)
    result = agent.tool.add(a=1, b=2)
    assert result["status"] == "success"
    assert result["content"] == [{"text": "3"}]
    with pytest.raises(DirectToolCallError, match="direct tool call"):
        agent.tool.ask()
    with pytest.raises(AttributeError, match="no tool 'nope'"):
        agent.tool.nope()


def test_stream_async_yields_events_then_the_result() -> None:
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 1})), "two"]), tools=[add],
                  callback_handler=None)

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async("1+1?")]

    events = asyncio.run(collect())
    assert "".join(e["data"] for e in events if "data" in e) == "two"
    assert any("tool_result" in e for e in events)
    assert [e["message"]["role"] for e in events if "message" in e] == ["assistant", "user", "assistant"]
    assert str(events[-1]["result"]) == "two"


def test_the_stream_marks_the_invocation_and_each_cycle_as_strands_does() -> None:
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 1})), "two"]), tools=[add],
                  callback_handler=None)

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async("1+1?")]

    marks = [next(iter(e)) for e in asyncio.run(collect())
             if {"init_event_loop", "start", "start_event_loop", "tool_result", "result"} & e.keys()]
    assert marks == ["init_event_loop", "start", "start_event_loop", "tool_result", "start", "start_event_loop",
                     "result"]


def test_a_failing_call_tells_the_callback_handler_why_it_stopped() -> None:
    seen: list[dict[str, Any]] = []
    agent = Agent(model=ScriptedModel([RuntimeError("model down")]), callback_handler=lambda **kw: seen.append(kw))
    with pytest.raises(RuntimeError, match="model down"):
        agent("hi")
    assert seen[-1] == {"force_stop": True, "force_stop_reason": "model down"}


def test_callback_handler_gets_keyword_events() -> None:
    seen: list[str] = []
    agent = Agent(model=ScriptedModel(["hello"]), callback_handler=lambda **kw: seen.extend(kw))
    asyncio.run(agent.invoke_async("hi"))
    assert "data" in seen
    assert "message" in seen


def test_model_hooks_can_retry_and_see_failures() -> None:
    attempts: list[str] = []

    def retry_once(event: AfterModelCallEvent) -> None:
        attempts.append("failed" if event.exception else "ok")
        if event.exception is not None and len(attempts) == 1:
            event.retry = True

    agent = Agent(model=ScriptedModel([RuntimeError("throttled"), "fine"]), callback_handler=None)
    agent.add_hook(AfterModelCallEvent, retry_once)
    assert str(agent("hi")) == "fine"
    assert attempts == ["failed", "ok"]


def test_a_model_failure_propagates_and_the_agent_can_go_on() -> None:
    agent = Agent(model=ScriptedModel([RuntimeError("model down"), "back"]), callback_handler=None)
    with pytest.raises(RuntimeError, match="model down"):
        agent("hi")
    assert agent.messages == []  # nothing of the failed call was kept, so nothing is half there
    assert str(agent("again")) == "back"
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]


def test_before_model_call_can_cancel_and_messages_are_announced() -> None:
    added: list[str] = []
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "3"]), tools=[add],
                  callback_handler=None)
    agent.add_hook(MessageAddedEvent, lambda e: added.append(e.message["role"]))
    agent.add_hook(MessageAddedEvent, lambda e: assert_no_dangling_tool_use(e.agent.messages))
    agent("sum")
    assert added == ["user", "assistant", "user", "assistant"]
    cancelled = Agent(model=ScriptedModel([]), callback_handler=None)
    cancelled.add_hook(BeforeModelCallEvent, lambda e: setattr(e, "cancel", "not now"))
    result = cancelled("hi")
    assert result.stop_reason == "end_turn"  # the hook answers in the model's place, as in Strands
    assert str(result) == "not now"
    assert cancelled.messages[-1] == {"role": "assistant", "content": [{"text": "not now"}]}


def test_the_agent_loop_is_a_drawable_machine() -> None:
    agent = Agent(model=ScriptedModel([]), callback_handler=None)
    drawing = agent.machine.draw_mermaid()
    assert '"model"' in drawing
    assert '"tools"' in drawing
    assert sorted(agent.machine.nodes) == ["model", "tools"]


def test_an_agent_needs_a_model() -> None:
    with pytest.raises(TypeError, match="Agent needs a model"):
        Agent()
    with pytest.raises(TypeError, match="stream"):
        Agent(model=object())  # type: ignore[arg-type]


def test_an_agent_runs_one_call_at_a_time() -> None:
    agent = Agent(model=ScriptedModel(["a", "b"]), callback_handler=None)

    async def slow_model_call(event: BeforeModelCallEvent) -> None:
        await asyncio.sleep(0.01)  # the first call is still running when the second starts

    agent.add_hook(BeforeModelCallEvent, slow_model_call)

    async def both() -> None:
        await asyncio.gather(agent.invoke_async("1"), agent.invoke_async("2"))

    with pytest.raises(RuntimeError, match="already running"):
        asyncio.run(both())


def test_invocation_hooks_rewrite_cancel_and_resume_calls() -> None:
    from statehitl.hooks import AfterInvocationEvent, BeforeInvocationEvent

    model = ScriptedModel(["first answer", "follow-up answer"])
    agent = Agent(model=model, callback_handler=None)

    def redact(event: BeforeInvocationEvent) -> None:
        if event.messages:
            event.messages = [{"role": "user", "content": [{"text": "[redacted]"}]}]

    follow_ups: list[str] = []

    def follow_up_once(event: AfterInvocationEvent) -> None:
        if not follow_ups:
            follow_ups.append(str(event.result))
            event.resume = "and then?"

    agent.add_hook(BeforeInvocationEvent, redact)
    agent.add_hook(AfterInvocationEvent, follow_up_once)
    result = agent("my password is hunter2")
    assert str(result) == "follow-up answer"
    assert follow_ups == ["first answer"]
    assert [b["text"] for m in agent.messages for b in m["content"]] == [
        "[redacted]", "first answer", "[redacted]", "follow-up answer"]
    agent.add_hook(BeforeInvocationEvent, lambda e: setattr(e, "cancel", True))
    denied = agent("anything")
    assert (denied.stop_reason, str(denied)) == ("end_turn", "invocation denied by hook")
    assert agent.messages[-1] == {"role": "assistant", "content": [{"text": "invocation denied by hook"}]}
    assert model.calls == 2


def test_after_tools_can_end_the_turn_without_another_model_call() -> None:
    from statehitl.hooks import AfterToolsEvent

    model = ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2}))])
    agent = Agent(model=model, tools=[add], callback_handler=None)
    agent.add_hook(AfterToolsEvent, lambda e: setattr(e, "end_turn", "the sum is in the tool result"))
    result = agent("1+2")
    assert result.stop_reason == "end_turn"
    assert str(result) == "the sum is in the tool result"
    assert model.calls == 1
    assert_no_dangling_tool_use(agent.messages)


def test_assigned_state_and_edited_messages_are_what_the_next_call_stores(tmp_path: Any) -> None:
    from statehitl.agent import AgentState
    from statehitl.session import FileSessionManager

    session = FileSessionManager(session_id="edits", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel(["a", "b"]), session_manager=session, callback_handler=None)
    agent("one")
    agent.state = AgentState({"mode": "strict"})
    agent.messages = agent.messages[:1]  # drop the answer: the history is rewritten, not appended to
    agent("two")
    reloaded = Agent(model=ScriptedModel([]), session_manager=session, callback_handler=None)
    assert reloaded.state.get() == {"mode": "strict"}
    assert [b["text"] for m in reloaded.messages for b in m["content"]] == ["one", "two", "b"]


def test_a_sliding_window_keeps_the_newest_turns_and_never_starts_on_tool_results(tmp_path: Any) -> None:
    from statehitl.agent.conversation_manager import SlidingWindowConversationManager
    from statehitl.session import FileSessionManager

    def turn(i: int) -> list[Any]:
        return [uses((f"t{i}", "add", {"a": i, "b": 1})), f"answer {i}"]

    window = SlidingWindowConversationManager(window_size=6)
    session = FileSessionManager(session_id="window", storage_dir=tmp_path)
    model = ScriptedModel([m for i in range(4) for m in turn(i)])
    agent = Agent(model=model, tools=[add], session_manager=session, conversation_manager=window,
                  callback_handler=None)
    agent("q0")
    assert len(agent.messages) == 4  # within the window: untouched
    agent("q1")
    # 8 messages; the newest 6 would start with an assistant tool use: the cut moves to the next user prompt
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[0]["content"] == [{"text": "q1"}]
    assert window.removed_message_count == 4
    agent("q2")
    assert model.requests[-2]["messages"][0]["content"] == [{"text": "q1"}]  # the model saw the trimmed history
    assert agent.messages[0]["content"] == [{"text": "q2"}]
    reloaded = Agent(model=ScriptedModel([]), session_manager=session, callback_handler=None)
    assert reloaded.messages[0]["content"] == [{"text": "q1"}]  # stored as the last call started it
    with pytest.raises(ValueError, match="window_size"):
        SlidingWindowConversationManager(window_size=0)


def test_the_default_callback_handler_prints_the_answer_and_the_tool_calls(capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "It is 3."]), tools=[add])
    agent("1+2?")
    printed = capsys.readouterr().out
    assert "Tool #1: add" in printed
    assert "It is 3." in printed


def test_a_failed_call_on_a_session_reads_failed_and_the_next_agent_goes_on_without_its_prompt(tmp_path) -> None:
    from statehitl.session import FileSessionManager

    session = FileSessionManager(session_id="s", storage_dir=tmp_path)
    first = Agent(model=ScriptedModel(["hello"]), session_manager=session, callback_handler=None)
    assert str(first("hi")) == "hello"
    broken = Agent(model=ScriptedModel([RuntimeError("model down")]), session_manager=session, callback_handler=None)
    with pytest.raises(RuntimeError, match="model down"):
        broken("are you there?")
    entry = asyncio.run(session.checkpointer.thread_info("s"))
    assert entry is not None
    assert entry.status == "failed"
    assert entry.error is not None
    assert (entry.error.node, entry.error.type) == ("model", "RuntimeError")
    again = Agent(model=ScriptedModel(["back"]), session_manager=session, callback_handler=None)
    assert [m["content"][0]["text"] for m in again.messages] == ["hi", "hello"]  # not the unanswered prompt
    assert str(again("still there?")) == "back"
    assert [m["content"][0]["text"] for m in again.messages] == ["hi", "hello", "still there?", "back"]
    fresh = Agent(model=ScriptedModel([]), session_manager=session, callback_handler=None)
    assert fresh.messages == again.messages  # stored whole after the failure, not on top of the failed record
