"""A hook that cancels a call or a model call, side by side on Strands 1.62 and statehitl: the hook's text
answers in the model's place (``end_turn``), recorded as Strands records it, and saved with the session.

Where statehitl records less (a call cancelled while its thread waits mid-turn), the test says why and
checks each side's own conversation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import strands.session
import strands.storage

import statehitl.session
import statehitl.storage
from strands_side import SIDES, Side, conversation, uses

BOTH = [SIDES["strands"], SIDES["statehitl"]]
SESSIONS = {"strands": (strands.session, strands.storage), "statehitl": (statehitl.session, statehitl.storage)}


def side_by_side(program: Any, *args: Any) -> Any:
    on_strands, on_statehitl = program(BOTH[0], *args), program(BOTH[1], *args)
    assert on_statehitl == on_strands, f"statehitl observed\n{on_statehitl}\nStrands observed\n{on_strands}"
    return on_statehitl


@pytest.mark.parametrize(("cancel", "text"), [(True, "invocation denied by hook"), ("closed today", "closed today")])
def test_a_cancelled_call_answers_with_the_hooks_text_in_place_of_the_prompt(cancel: Any, text: str,
                                                                             tmp_path: Path) -> None:
    def program(side: Side) -> Any:
        session, storage = SESSIONS[side.name]
        where = str(tmp_path / side.name)
        model = side.model(["never said"])
        agent = side.Agent(model=model, callback_handler=None,
                           session_manager=session.SnapshotSessionManager("s", storage=storage.LocalFileStorage(where)))
        log: list[Any] = []
        agent.add_hook(lambda e: setattr(e, "cancel", cancel), side.hooks.BeforeInvocationEvent)
        agent.add_hook(lambda e: log.append(("added", e.message["content"])), side.hooks.MessageAddedEvent)

        def after(event: Any) -> None:
            log.append(("after", event.result))
            event.resume = "try again"  # a call that never ran has nothing to go on from: not honoured

        agent.add_hook(after, side.hooks.AfterInvocationEvent)
        result = agent("hi")
        reloaded = side.Agent(model=side.model([]), callback_handler=None,
                              session_manager=session.SnapshotSessionManager("s", storage=storage.LocalFileStorage(
                                  where)))
        return (result.stop_reason, str(result).strip(), conversation(agent.messages), log,
                getattr(model, "inner", model).calls, conversation(reloaded.messages))

    said = [("assistant", [{"text": text}])]
    assert side_by_side(program) == ("end_turn", text, said, [("added", [{"text": text}]), ("after", None)], 0, said)


@pytest.mark.parametrize(("cancel", "text"), [(True, "model call denied by hook"), ("over budget", "over budget")])
def test_a_cancelled_model_call_is_a_reply_the_after_model_call_hooks_see(cancel: Any, text: str) -> None:
    def program(side: Side) -> Any:
        model = side.model(["never said"])
        agent = side.Agent(model=model, callback_handler=None)
        seen: list[Any] = []
        agent.add_hook(lambda e: setattr(e, "cancel", cancel), side.hooks.BeforeModelCallEvent)
        agent.add_hook(lambda e: seen.append((e.stop_response.stop_reason, e.stop_response.message["content"])),
                       side.hooks.AfterModelCallEvent)
        result = agent("hi")
        return result.stop_reason, str(result).strip(), conversation(agent.messages), seen

    assert side_by_side(program) == ("end_turn", text, [("user", [{"text": "hi"}]), ("assistant", [{"text": text}])],
                                     [("end_turn", [{"text": text}])])


def test_an_after_model_call_retry_of_a_cancelled_model_call_asks_the_hooks_again() -> None:
    def program(side: Side) -> Any:
        model = side.model(["the real answer"])
        agent = side.Agent(model=model, callback_handler=None)
        tries: list[str] = []

        def before(event: Any) -> None:
            tries.append("before")
            event.cancel = len(tries) == 1

        def after(event: Any) -> None:
            event.retry = event.stop_response.message["content"] == [{"text": "model call denied by hook"}]

        agent.add_hook(before, side.hooks.BeforeModelCallEvent)
        agent.add_hook(after, side.hooks.AfterModelCallEvent)
        result = agent("hi")
        return result.stop_reason, str(result).strip(), tries, len(agent.messages)

    assert side_by_side(program) == ("end_turn", "the real answer", ["before", "before"], 2)


def test_a_new_prompt_cancelled_at_a_checkpointing_pause_closes_the_waiting_tool_calls_first() -> None:
    def program(side: Side) -> Any:
        @side.tool
        def add(a: int, b: int) -> int:
            """Add.

            Args:
                a: one
                b: two
            """
            return a + b

        agent = side.Agent(model=side.model([uses("t1", "add", {"a": 1, "b": 2})]), tools=[add],
                           callback_handler=None, checkpointing=True)
        paused = agent("add")
        agent.add_hook(lambda e: setattr(e, "cancel", "not now"), side.hooks.BeforeInvocationEvent)
        result = agent("something else")
        return paused.checkpoint.position, result.stop_reason, conversation(agent.messages)

    assert side_by_side(program) == ("after_model", "end_turn", [
        ("user", [{"text": "add"}]),
        ("assistant", [{"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}}]),
        ("user", [{"toolResult": {"toolUseId": "t1", "status": "error",
                                  "content": [{"text": "Tool was interrupted."}]}}]),
        ("assistant", [{"text": "not now"}])])


def test_a_resume_cancelled_by_a_hook_applies_no_answer_and_the_agent_still_waits() -> None:
    """Both answer with the hook's text and keep waiting; the same answers then resume the tool, once.
    Strands also appends the text after the tool call that waits, which leaves it without its result in the
    conversation; statehitl records nothing while a turn waits, and stores no answer (a cancelled call
    writes nothing)."""
    def program(side: Side) -> Any:
        ran: list[Any] = []

        @side.tool(context=True)
        def ask(x: int, tool_context: Any) -> str:
            """Ask first.

            Args:
                x: a number
            """
            ran.append(tool_context.interrupt("ok?", reason=f"x={x}"))
            return "asked"

        agent = side.Agent(model=side.model([uses("t1", "ask", {"x": 1}), "done"]), tools=[ask],
                           callback_handler=None)
        first = agent("go")
        answers = [{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}]
        deny = [True]
        agent.add_hook(lambda e: setattr(e, "cancel", "not now") if deny else None, side.hooks.BeforeInvocationEvent)
        denied = agent(answers)
        during, ran_then = conversation(agent.messages), list(ran)
        deny.clear()
        resumed = agent(answers)
        return ((denied.stop_reason, str(denied).strip(), list(denied.interrupts or []), ran_then),
                (resumed.stop_reason, str(resumed).strip(), ran), during)

    on_strands, on_statehitl = program(BOTH[0]), program(BOTH[1])
    assert on_statehitl[:2] == on_strands[:2] == (("end_turn", "not now", [], []), ("end_turn", "done", ["yes"]))
    asked = ("assistant", [{"toolUse": {"toolUseId": "t1", "name": "ask", "input": {"x": 1}}}])
    assert on_strands[2] == [("user", [{"text": "go"}]), asked, ("assistant", [{"text": "not now"}])]
    assert on_statehitl[2] == [("user", [{"text": "go"}])]  # the waiting turn shows in result.message, not here


def test_a_denied_resume_leaves_the_stored_thread_as_it_was(tmp_path: Path) -> None:
    from statehitl import Agent, tool
    from statehitl.hooks import BeforeInvocationEvent
    from statehitl.models import ScriptedModel
    from statehitl.session import FileSessionManager

    ran: list[str] = []

    @tool(context=True)
    def ask(x: int, tool_context: Any) -> str:
        """Ask first.

        Args:
            x: a number
        """
        ran.append(tool_context.interrupt("ok?", reason=f"x={x}"))
        return "asked"

    def build() -> Agent:
        return Agent(model=ScriptedModel([uses("t1", "ask", {"x": 1}), "done"], keyed_by="position"), tools=[ask],
                     callback_handler=None, session_manager=FileSessionManager("job", storage_dir=str(tmp_path)))

    first = build()("go")
    answers = [{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}]
    denying = build()
    head = asyncio.run(denying.checkpointer.latest(denying.thread_id))
    denying.add_hook(BeforeInvocationEvent, lambda e: setattr(e, "cancel", True))
    assert denying(answers).stop_reason == "end_turn"
    assert asyncio.run(denying.checkpointer.latest(denying.thread_id)).checkpoint_id == head.checkpoint_id
    assert denying.audit() == []
    assert ran == []
    other = build()  # another process answers: the answer was never stored, so it is this one's to give
    assert [i.name for i in other.interrupts] == ["ok?"]
    assert str(other(answers)).strip() == "done"
    assert ran == ["yes"]


@pytest.mark.parametrize("event", ["BeforeInvocationEvent", "BeforeModelCallEvent"])
def test_the_stream_of_a_cancelled_call_carries_what_strands_streams(event: str) -> None:
    def program(side: Side) -> Any:
        agent = side.Agent(model=side.model(["never said"]), callback_handler=None)
        agent.add_hook(lambda e: setattr(e, "cancel", "no"), getattr(side.hooks, event))

        async def stream() -> list[Any]:
            return [event async for event in agent.stream_async("hi")]

        events = asyncio.run(stream())
        return [sorted(e) for e in events], events[-1]["result"].stop_reason

    expected = [["result"]] if event == "BeforeInvocationEvent" else [
        ["init_event_loop"], ["start"], ["start_event_loop"], ["message"], ["result"]]
    assert side_by_side(program) == (expected, "end_turn")


@pytest.mark.parametrize("with_session", [False, True])
def test_a_pause_closed_by_a_denied_prompt_is_not_resumed_afterwards(with_session: bool, tmp_path: Path) -> None:
    from statehitl import Agent, tool
    from statehitl.errors import AgentCheckpointError
    from statehitl.hooks import BeforeInvocationEvent
    from statehitl.models import ScriptedModel
    from statehitl.session import FileSessionManager

    ran: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: one
            b: two
        """
        ran.append(a + b)
        return a + b

    def build(script: list[Any]) -> Agent:
        session = FileSessionManager("paused", storage_dir=str(tmp_path)) if with_session else None
        return Agent(model=ScriptedModel(script), tools=[add], callback_handler=None, checkpointing=True,
                     session_manager=session)

    agent = build([uses("t1", "add", {"a": 1, "b": 2}), "fine"])
    paused = agent("add")
    deny = [True]
    agent.add_hook(BeforeInvocationEvent, lambda e: setattr(e, "cancel", "not now") if deny else None)
    assert agent("something else").stop_reason == "end_turn"
    deny.clear()
    with pytest.raises(AgentCheckpointError, match="not paused"):
        agent({"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}})  # type: ignore[union-attr]
    closed = [("user", [{"text": "add"}]), ("assistant", paused.message["content"]),
              ("user", [{"toolResult": {"toolUseId": "t1", "status": "error",
                                        "content": [{"text": "Tool was interrupted."}]}}]),
              ("assistant", [{"text": "not now"}])]
    assert conversation(agent.messages) == closed
    if with_session:
        assert conversation(build([]).messages) == closed  # what a new process finds
    assert str(agent("and now?")) == "fine"
    assert ran == []
    assert conversation(agent.messages)[:4] == closed
