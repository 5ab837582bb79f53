"""Cancelling a call, side by side: each program runs on Strands 1.62 and on statehitl, and both must observe
the same (the stop reason, the reply, the conversation, which tools ran, which hooks fired, the model calls).

Strands' cancellation-safe points: the model's stream, before a tool batch, between the tools of a
sequential batch, after a batch; ``after_current_tools=True`` only the last. statehitl's run is the same,
with the cancelled call recorded in the agent's thread like any other ending.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
import strands.multiagent
import strands.session
import strands.storage
import strands.tools.executors

import statehitl.multiagent
import statehitl.session
import statehitl.storage
import statehitl.tools.executors
from strands_side import SIDES, Side, conversation, uses

BOTH = [SIDES["strands"], SIDES["statehitl"]]
EXECUTORS = {"strands": strands.tools.executors, "statehitl": statehitl.tools.executors}
GRAPHS = {"strands": strands.multiagent, "statehitl": statehitl.multiagent}
SESSIONS = {"strands": (strands.session, strands.storage), "statehitl": (statehitl.session, statehitl.storage)}


def side_by_side(program: Any, *args: Any) -> Any:
    """What ``program`` observed, the same on both sides."""
    on_strands, on_statehitl = program(BOTH[0], *args), program(BOTH[1], *args)
    assert on_statehitl == on_strands, f"statehitl observed\n{on_statehitl}\nStrands observed\n{on_strands}"
    return on_statehitl


def calls(model: Any) -> int:
    """How many times the scripted model was asked (Strands' side wraps statehitl's)."""
    return int(getattr(model, "inner", model).calls)


def two_calls(first: str, second: str) -> dict[str, Any]:
    """An assistant message asking for two tools at once, each with ``x``."""
    message = uses("t1", first, {"x": 1})
    message["content"].append(uses("t2", second, {"x": 2})["content"][0])
    return message


def tools(side: Side, agent_of: list[Any], log: list[str]) -> dict[str, Any]:
    """Tools that log their runs: ``other``; ``stop_now`` (cancels at once); ``stop_after`` (cancels after the
    batch, with a message)."""

    @side.tool
    def other(x: int) -> str:
        """Do the other thing.

        Args:
            x: a number
        """
        log.append(f"other {x}")
        return f"other {x}"

    @side.tool
    def stop_now(x: int) -> str:
        """Cancel the call at once.

        Args:
            x: a number
        """
        log.append(f"stop_now {x}")
        agent_of[0].cancel()
        return f"stopped {x}"

    @side.tool
    def stop_after(x: int) -> str:
        """Cancel the call once this batch is done.

        Args:
            x: a number
        """
        log.append(f"stop_after {x}")
        agent_of[0].cancel(after_current_tools=True, message="that is enough")
        return f"stopping {x}"

    return {"other": other, "stop_now": stop_now, "stop_after": stop_after}


def events_of(side: Side, agent: Any, log: list[Any]) -> None:
    """Log the tool and model hook events ``agent`` fires."""
    h = side.hooks
    agent.add_hook(lambda e: log.append("BeforeTools"), h.BeforeToolsEvent)
    agent.add_hook(lambda e: log.append(f"BeforeToolCall {e.tool_use['name']}"), h.BeforeToolCallEvent)
    agent.add_hook(lambda e: log.append(f"AfterToolCall {e.tool_use['name']}"), h.AfterToolCallEvent)
    agent.add_hook(lambda e: log.append(("AfterTools", e.message["content"])), h.AfterToolsEvent)
    agent.add_hook(lambda e: log.append(("AfterModelCall", e.stop_response.stop_reason,
                                         e.stop_response.message["content"])), h.AfterModelCallEvent)


# -- agent.cancel() ------------------------------------------------------------------------------------


@pytest.mark.parametrize("message", [None, "stop now"])
def test_a_cancel_before_the_call_cuts_its_first_model_stream_and_the_next_call_runs(message: str | None) -> None:
    def program(side: Side) -> Any:
        model = side.model(["never shown", "the second answer"])
        agent = side.Agent(model=model, callback_handler=None)
        agent.cancel(message=message)
        result = agent("hi")
        first = (result.stop_reason, str(result).strip(), conversation(agent.messages), calls(model),
                 agent.cancel_signal.is_set())
        again = agent("and now?")
        return first, again.stop_reason, str(again).strip(), len(agent.messages)

    reply = message or "Cancelled by user"
    assert side_by_side(program) == (
        ("cancelled", reply, [("user", [{"text": "hi"}]), ("assistant", [{"text": reply}])], 1, False),
        "end_turn", "the second answer", 4)


def test_a_cancel_in_the_model_stream_is_what_after_model_call_hooks_see_and_the_message_replaces_it() -> None:
    def program(side: Side) -> Any:
        model = side.model(["never shown"])
        agent = side.Agent(model=model, callback_handler=None)
        log: list[Any] = []
        events_of(side, agent, log)
        agent.add_hook(lambda e: e.agent.cancel(message="bye"), side.hooks.BeforeModelCallEvent)
        result = agent("hi")
        return result.stop_reason, str(result).strip(), conversation(agent.messages), log

    assert side_by_side(program) == (
        "cancelled", "bye", [("user", [{"text": "hi"}]), ("assistant", [{"text": "bye"}])],
        [("AfterModelCall", "cancelled", [{"text": "Cancelled by user"}])])


@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_cancel_before_the_tools_gives_each_an_error_result_and_fires_no_per_tool_event(checkpointing: bool) -> None:
    """With checkpointing, the call does not pause after the model: it goes on to the cancelled batch."""
    def program(side: Side) -> Any:
        log: list[Any] = []
        ran: list[str] = []
        agent_of: list[Any] = []
        model = side.model([two_calls("other", "other"), "never shown"])
        agent = side.Agent(model=model, tools=[tools(side, agent_of, ran)["other"]], callback_handler=None,
                           checkpointing=checkpointing)
        agent_of.append(agent)
        events_of(side, agent, log)
        agent.add_hook(lambda e: e.agent.cancel(), side.hooks.AfterModelCallEvent)
        result = agent("go")
        return (result.stop_reason, result.checkpoint, result.message["content"], conversation(agent.messages), ran,
                log[1:], calls(model))

    cancelled = {"status": "error", "content": [{"text": "Tool execution cancelled"}]}
    results = [{"toolResult": {"toolUseId": "t1", **cancelled}}, {"toolResult": {"toolUseId": "t2", **cancelled}}]
    asked = two_calls("other", "other")["content"]
    assert side_by_side(program) == (
        "cancelled", None, asked, [("user", [{"text": "go"}]), ("assistant", asked), ("user", results)], [],
        ["BeforeTools", ("AfterTools", results)], 1)


@pytest.mark.parametrize("executor", ["SequentialToolExecutor", "ConcurrentToolExecutor"])
def test_a_cancel_from_a_tool_stops_a_sequential_batch_at_the_next_tool_but_not_a_concurrent_one(
        executor: str) -> None:
    def program(side: Side) -> Any:
        log: list[Any] = []
        ran: list[str] = []
        agent_of: list[Any] = []
        box = tools(side, agent_of, ran)
        model = side.model([two_calls("stop_now", "other"), "never shown"])
        agent = side.Agent(model=model, tools=[box["stop_now"], box["other"]], callback_handler=None,
                           tool_executor=getattr(EXECUTORS[side.name], executor)())
        agent_of.append(agent)
        events_of(side, agent, log)
        result = agent("go")
        return (result.stop_reason, conversation(agent.messages)[2:], sorted(ran), sorted(map(str, log[1:])),
                calls(model))

    observed = side_by_side(program)
    ran = observed[2]
    assert observed[0] == "cancelled"
    if executor == "SequentialToolExecutor":
        assert ran == ["stop_now 1"]
        assert observed[1][0][1][1]["toolResult"]["content"] == [{"text": "Tool execution cancelled"}]
    else:
        assert ran == ["other 2", "stop_now 1"]  # both were running: a concurrent batch is not stopped midway


def test_after_current_tools_lets_the_batch_finish_and_ends_with_the_message_before_the_model_is_called() -> None:
    def program(side: Side) -> Any:
        ran: list[str] = []
        agent_of: list[Any] = []
        box = tools(side, agent_of, ran)
        model = side.model([two_calls("stop_after", "other"), "never shown"])
        agent = side.Agent(model=model, tools=[box["stop_after"], box["other"]], callback_handler=None)
        agent_of.append(agent)
        result = agent("go")
        return result.stop_reason, str(result).strip(), conversation(agent.messages)[2:], sorted(ran), calls(model)

    ok = {"status": "success"}
    assert side_by_side(program) == (
        "cancelled", "that is enough",
        [("user", [{"toolResult": {"toolUseId": "t1", **ok, "content": [{"text": "stopping 1"}]}},
                   {"toolResult": {"toolUseId": "t2", **ok, "content": [{"text": "other 2"}]}}]),
         ("assistant", [{"text": "that is enough"}])],
        ["other 2", "stop_after 1"], 1)


def test_after_current_tools_is_a_no_op_when_the_model_asks_for_no_tool() -> None:
    def program(side: Side) -> Any:
        model = side.model(["a plain answer"])
        agent = side.Agent(model=model, callback_handler=None)
        agent.add_hook(lambda e: e.agent.cancel(after_current_tools=True), side.hooks.BeforeModelCallEvent)
        result = agent("hi")
        return result.stop_reason, str(result).strip(), len(agent.messages)

    assert side_by_side(program) == ("end_turn", "a plain answer", 2)


def test_an_interrupt_takes_precedence_over_a_cancel() -> None:
    def program(side: Side) -> Any:
        agent_of: list[Any] = []

        @side.tool(context=True)
        def ask(x: int, tool_context: Any) -> str:
            """Ask first.

            Args:
                x: a number
            """
            agent_of[0].cancel()
            return str(tool_context.interrupt("go-ahead", reason=f"x={x}"))

        model = side.model([uses("t1", "ask", {"x": 1}), "never shown"])
        agent = side.Agent(model=model, tools=[ask], callback_handler=None)
        agent_of.append(agent)
        result = agent("go")
        return result.stop_reason, [(i.name, i.reason) for i in result.interrupts], agent.cancel_signal.is_set()

    assert side_by_side(program) == ("interrupt", [("go-ahead", "x=1")], False)


def test_a_resume_cancelled_before_its_tools_gives_the_answered_tool_an_error_result() -> None:
    """The answer is taken, the tool does not run, the call ends cancelled: the same on both. Then Strands
    still holds the interrupt as active and refuses a new prompt (``must resume from interrupt``), though
    nothing waits; statehitl's thread ended with the call, so the next prompt goes on from it."""
    def program(side: Side) -> Any:
        ran: list[str] = []

        @side.tool(context=True)
        def ask(x: int, tool_context: Any) -> str:
            """Ask first.

            Args:
                x: a number
            """
            ran.append(str(tool_context.interrupt("go-ahead", reason=f"x={x}")))
            return "asked"

        agent = side.Agent(model=side.model([uses("t1", "ask", {"x": 1}), "the next answer"]), tools=[ask],
                           callback_handler=None)
        first = agent("go")
        agent.cancel()
        resumed = agent([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}])
        try:
            after: Any = str(agent("next")).strip()
        except Exception as error:  # Strands refuses the prompt: compared below
            after = type(error).__name__
        return resumed.stop_reason, conversation(agent.messages)[1:3], ran, after

    on_strands, on_statehitl = program(BOTH[0]), program(BOTH[1])
    cancelled = ("cancelled", [("assistant", [{"toolUse": {"toolUseId": "t1", "name": "ask", "input": {"x": 1}}}]),
                               ("user", [{"toolResult": {"toolUseId": "t1", "status": "error",
                                                         "content": [{"text": "Tool execution cancelled"}]}}])], [])
    assert on_statehitl[:3] == on_strands[:3] == cancelled
    assert (on_strands[3], on_statehitl[3]) == ("TypeError", "the next answer")


def test_an_after_tool_call_retry_is_not_honoured_once_the_call_is_cancelled() -> None:
    def program(side: Side) -> Any:
        ran: list[str] = []
        agent_of: list[Any] = []
        model = side.model([uses("t1", "stop_now", {"x": 1}), "never shown"])
        agent = side.Agent(model=model, tools=[tools(side, agent_of, ran)["stop_now"]], callback_handler=None)
        agent_of.append(agent)
        agent.add_hook(lambda e: setattr(e, "retry", True), side.hooks.AfterToolCallEvent)
        result = agent("go")
        return result.stop_reason, ran

    assert side_by_side(program) == ("cancelled", ["stop_now 1"])


class Gate:
    """Holds a model's stream after its first event until released, so another thread can act mid-stream."""

    def __init__(self) -> None:
        self.first = threading.Event()
        self.release = threading.Event()

    async def hold(self, events: Any) -> Any:
        started = False
        async for event in events:
            yield event
            if not started:
                started = True
                self.first.set()
                while not self.release.is_set():
                    await asyncio.sleep(0.005)


def gated_model(side: Side, script: list[Any], gate: Gate) -> Any:
    base = type(side.model(script))

    class Gated(base):  # type: ignore[misc,valid-type]
        async def stream(self, *args: Any, **kwargs: Any) -> Any:
            async for event in gate.hold(super().stream(*args, **kwargs)):
                yield event

    return Gated(script)


def test_a_cancel_from_another_thread_stops_the_stream_it_is_reading() -> None:
    def program(side: Side) -> Any:
        gate = Gate()
        agent = side.Agent(model=gated_model(side, ["a long answer nobody reads", "next"], gate),
                           callback_handler=None)
        done: dict[str, Any] = {}
        caller = threading.Thread(target=lambda: done.setdefault("result", agent("hi")))
        caller.start()
        assert gate.first.wait(30)
        agent.cancel(message="stopped from the UI")  # e.g. a web request, while the caller's thread waits
        gate.release.set()
        caller.join(30)
        result = done["result"]
        return result.stop_reason, str(result).strip(), conversation(agent.messages), str(agent("again")).strip()

    assert side_by_side(program) == ("cancelled", "stopped from the UI", [
        ("user", [{"text": "hi"}]), ("assistant", [{"text": "stopped from the UI"}])], "next")


# -- an invocation's cancel_signal ----------------------------------------------------------------------


def test_a_cancel_signal_already_set_cancels_the_call_and_is_never_cleared_by_the_agent() -> None:
    def program(side: Side) -> Any:
        signal = threading.Event()
        signal.set()
        model = side.model(["never shown", "answered"])
        agent = side.Agent(model=model, callback_handler=None)
        result = agent("hi", cancel_signal=signal)
        after = agent("again")
        return (result.stop_reason, str(result).strip(), signal.is_set(), agent.cancel_signal.is_set(),
                str(after).strip())

    assert side_by_side(program) == ("cancelled", "Cancelled by user", True, False, "answered")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_sees_the_callers_signal_on_its_context_and_stops_early(kind: str) -> None:
    """The caller's event reaches ``tool_context.cancel_signal`` while the tool runs (a sync tool polling it
    included); the call then ends cancelled after the batch."""
    def program(side: Side) -> Any:
        signal = threading.Event()

        def wait_for_cancel(tool_context: Any) -> str:
            signal.set()  # the caller cancels (a client went away) while the tool works
            return "gave up early" if tool_context.cancel_signal.wait(30) else "never told"

        if kind == "sync":
            @side.tool(context=True)
            def work(x: int, tool_context: Any) -> str:
                """Work for a long time.

                Args:
                    x: a number
                """
                return wait_for_cancel(tool_context)
        else:
            @side.tool(context=True)
            async def work(x: int, tool_context: Any) -> str:
                """Work for a long time.

                Args:
                    x: a number
                """
                for _ in range(3000):
                    if tool_context.cancel_signal.is_set():
                        signal.set()
                        return "gave up early"
                    signal.set()
                    await asyncio.sleep(0.01)
                return "never told"

        model = side.model([uses("t1", "work", {"x": 1}), "never shown"])
        agent = side.Agent(model=model, tools=[work], callback_handler=None)
        result = agent("go", cancel_signal=signal)
        return result.stop_reason, conversation(agent.messages)[-1], calls(model)

    assert side_by_side(program) == (
        "cancelled", ("user", [{"toolResult": {"toolUseId": "t1", "status": "success",
                                               "content": [{"text": "gave up early"}]}}]), 1)


def test_invoke_async_and_stream_async_take_a_cancel_signal_too() -> None:
    def program(side: Side) -> Any:
        signal = threading.Event()
        signal.set()
        agent = side.Agent(model=side.model(["never shown", "never shown"]), callback_handler=None)

        async def both() -> tuple[Any, Any]:
            invoked = await agent.invoke_async("hi", cancel_signal=signal)
            streamed = [e async for e in agent.stream_async("again", cancel_signal=signal)][-1]["result"]
            return invoked.stop_reason, streamed.stop_reason

        return asyncio.run(both())

    assert side_by_side(program) == ("cancelled", "cancelled")


# -- what a cancelled call leaves behind ------------------------------------------------------------------


def test_a_cancelled_call_is_saved_and_a_new_agent_on_the_session_goes_on_from_it(tmp_path: Path) -> None:
    def program(side: Side) -> Any:
        session, storage = SESSIONS[side.name]
        where = tmp_path / side.name

        def build(script: list[Any]) -> tuple[Any, Any]:
            manager = session.SnapshotSessionManager("chat-1", storage=storage.LocalFileStorage(str(where)))
            model = side.model(script)
            return side.Agent(model=model, tools=[box["other"]], callback_handler=None,
                              session_manager=manager), model

        ran: list[str] = []
        agent_of: list[Any] = []
        box = tools(side, agent_of, ran)
        agent, _ = build([uses("t1", "other", {"x": 1}), "never shown"])
        agent.add_hook(lambda e: e.agent.cancel(message="stopped there"), side.hooks.AfterToolCallEvent)
        first = agent("go")
        later, model = build(["carried on"])
        later("go on")
        asked = getattr(model, "inner", model).requests[0]["messages"]
        return first.stop_reason, ran, conversation(later.messages), conversation(asked)

    reply, ran, messages, asked = side_by_side(program)
    assert (reply, ran) == ("cancelled", ["other 1"])
    assert [role for role, _ in messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert messages[3] == ("assistant", [{"text": "stopped there"}])
    assert asked == messages[:5]  # the model was given the cancelled call's whole conversation


def test_a_graph_node_whose_agent_is_cancelled_at_once_fails_and_one_stopped_after_its_tools_completes() -> None:
    def program(side: Side, tool: str) -> Any:
        ran: list[str] = []
        agent_of: list[Any] = []
        box = tools(side, agent_of, ran)
        worker = side.Agent(model=side.model([uses("t1", tool, {"x": 1}), "never shown"]), tools=[box[tool]],
                            callback_handler=None, name="worker")
        agent_of.append(worker)
        builder = GRAPHS[side.name].GraphBuilder()
        builder.add_node(worker, "worker")
        builder.set_max_node_executions(5)
        result = builder.build()("go")
        node = result.results["worker"]
        return node.status.value, node.result.stop_reason, ran, worker.cancel_signal.is_set()

    assert side_by_side(program, "stop_now") == ("failed", "cancelled", ["stop_now 1"], False)
    assert side_by_side(program, "stop_after") == ("completed", "cancelled", ["stop_after 1"], False)
