"""``Agent(checkpointing=True)``, side by side with Strands 1.62: each program runs on both frameworks
and what it observes (stop reasons, checkpoints, tool runs, answers, hook events, the conversation at
the end) must be the same. Where statehitl differs on purpose (the assistant message whose tools have
not run is not yet in ``agent.messages``, docs/agents.md), the program observes ``result.message``."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from strands_side import Side, conversation, side, uses


def adder(on: Side, calls: list[tuple[int, int]]) -> Any:
    @on.tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: the first
            b: the second
        """
        calls.append((a, b))
        return a + b

    return add


def drive(agent: Any, first: Any, log: list[Any], answer: str = "y") -> Any:
    """Call ``agent`` with ``first``, then resume every checkpoint and answer every interrupt, logging each
    stop as ``(stop_reason, checkpoint dict or interrupt names, message)``."""
    result = agent(first)
    while result.stop_reason in ("checkpoint", "interrupt"):
        if result.stop_reason == "checkpoint":
            log.append(("checkpoint", result.checkpoint.to_dict(), result.message["content"]))
            result = agent({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
        else:
            log.append(("interrupt", [i.name for i in result.interrupts], result.message["content"]))
            result = agent([{"interruptResponse": {"interruptId": i.id, "response": answer}}
                            for i in result.interrupts])
    log.append((result.stop_reason, str(result).strip()))
    return result


def two_cycles(name: str) -> dict[str, Any]:
    on, calls = side(name), []
    script = [uses("t1", "add", {"a": 1, "b": 2}), uses("t2", "add", {"a": 3, "b": 4}), "done"]
    agent = on.Agent(model=on.model(script), tools=[adder(on, calls)], callback_handler=None, checkpointing=True)
    log: list[Any] = []
    result = drive(agent, "go", log)
    return {"log": log, "calls": calls, "conversation": conversation(agent.messages),
            "checkpoint": result.checkpoint}


def test_it_pauses_at_both_boundaries_of_every_tool_cycle_as_strands_does() -> None:
    theirs, ours = two_cycles("strands"), two_cycles("statehitl")
    assert ours == theirs
    positions = [(entry[1]["position"], entry[1]["cycle_index"]) for entry in theirs["log"][:-1]]
    assert positions == [("after_model", 0), ("after_tools", 0), ("after_model", 1), ("after_tools", 1)]
    assert theirs["calls"] == [(1, 2), (3, 4)]
    assert theirs["log"][-1] == ("end_turn", "done")


def interrupt_in_second_cycle(name: str) -> list[Any]:
    on, calls = side(name), []

    def ask(event: Any) -> None:
        if event.tool_use["toolUseId"] == "t2" and event.interrupt("approve", reason="t2?") != "y":
            event.cancel_tool = "refused"

    script = [uses("t1", "add", {"a": 1, "b": 2}), uses("t2", "add", {"a": 3, "b": 4}), "done"]
    agent = on.Agent(model=on.model(script), tools=[adder(on, calls)], callback_handler=None, checkpointing=True)
    agent.add_hook(ask, on.hooks.BeforeToolCallEvent)
    log: list[Any] = []
    drive(agent, "go", log)
    return [*log, calls]


def test_an_interrupt_takes_precedence_and_its_answer_ends_the_cycle_at_after_tools() -> None:
    theirs = interrupt_in_second_cycle("strands")
    assert interrupt_in_second_cycle("statehitl") == theirs
    stops = [entry[0] for entry in theirs[:-2]]
    assert stops == ["checkpoint", "checkpoint", "checkpoint", "interrupt", "checkpoint"]
    assert theirs[4][1] == {"position": "after_tools", "cycle_index": 0, "schema_version": "1.0"}  # Strands counts anew


def cancelled_batch(name: str) -> list[Any]:
    on, calls = side(name), []

    def cancel(event: Any) -> None:
        event.cancel = "batch refused"

    agent = on.Agent(model=on.model([uses("t1", "add", {"a": 1, "b": 2}), "ok"]), tools=[adder(on, calls)],
                     callback_handler=None, checkpointing=True)
    agent.add_hook(cancel, on.hooks.BeforeToolsEvent)
    log: list[Any] = []
    drive(agent, "go", log)
    return [*log, calls, conversation(agent.messages)]


def test_a_cancelled_tool_batch_still_pauses_after_tools_with_the_error_results() -> None:
    theirs = cancelled_batch("strands")
    assert cancelled_batch("statehitl") == theirs
    assert theirs[-2] == []  # no tool ran
    assert theirs[-1][2][1][0]["toolResult"]["content"] == [{"text": "batch refused"}]


def no_tools(name: str) -> Any:
    on = side(name)
    agent = on.Agent(model=on.model(["hello"]), callback_handler=None, checkpointing=True)
    result = agent("hi")
    return result.stop_reason, result.checkpoint, str(result).strip()


def test_a_turn_without_tools_never_pauses() -> None:
    assert no_tools("statehitl") == no_tools("strands") == ("end_turn", None, "hello")


def new_prompt_while_paused(name: str, pauses: int) -> list[Any]:
    on, calls = side(name), []
    script = [uses("t1", "add", {"a": 1, "b": 2}), "fresh answer", "unused"]
    agent = on.Agent(model=on.model(script), tools=[adder(on, calls)], callback_handler=None, checkpointing=True)
    result = agent("go")
    for _ in range(pauses - 1):
        result = agent({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
    position = result.checkpoint.position
    result = agent("something else")
    return [position, result.stop_reason, str(result).strip(), calls, conversation(agent.messages)]


@pytest.mark.parametrize("pauses", [1, 2], ids=["after_model", "after_tools"])
def test_a_new_prompt_while_paused_starts_a_new_turn_as_strands_does(pauses: int) -> None:
    theirs = new_prompt_while_paused("strands", pauses)
    assert new_prompt_while_paused("statehitl", pauses) == theirs
    if pauses == 1:  # the tool never ran: its call is closed with an error result before the new prompt
        assert theirs[3] == []
        assert theirs[4][2] == ("user", [{"toolResult": {"toolUseId": "t1", "status": "error",
                                                         "content": [{"text": "Tool was interrupted."}]}}])


def invocation_hooks(name: str) -> list[Any]:
    on, events = side(name), []
    agent = on.Agent(model=on.model([uses("t1", "add", {"a": 1, "b": 2}), "done"]), tools=[adder(on, [])],
                     callback_handler=None, checkpointing=True)
    agent.add_hook(lambda event: events.append("before"), on.hooks.BeforeInvocationEvent)
    agent.add_hook(lambda event: events.append(("after", event.result.stop_reason)), on.hooks.AfterInvocationEvent)
    drive(agent, "go", [])
    return events


def test_invocation_hooks_fire_on_every_pause_and_resume() -> None:
    theirs = invocation_hooks("strands")
    assert invocation_hooks("statehitl") == theirs
    assert theirs == ["before", ("after", "checkpoint"), "before", ("after", "checkpoint"), "before",
                      ("after", "end_turn")]


def refusals(name: str) -> list[tuple[set[str], str]]:
    """Each malformed resume's error: which of Strands' ``except`` clauses catch it, and its message."""
    import strands.types.exceptions

    import statehitl.types.exceptions

    on = side(name)
    framework = strands.types.exceptions if name == "strands" else statehitl.types.exceptions
    clauses = {"ValueError": ValueError, "KeyError": KeyError, "CheckpointException": framework.CheckpointException}
    plain = on.Agent(model=on.model(["x"]), callback_handler=None)
    checkpointing = on.Agent(model=on.model(["x"]), callback_handler=None, checkpointing=True)
    attempts = [
        (plain, {"checkpointResume": {"checkpoint": {"position": "after_model", "schema_version": "1.0"}}}),
        (checkpointing, {"checkpointResume": {}}),
        (checkpointing, {"checkpointResume": "after_model"}),
        (checkpointing, {"checkpointResume": {"checkpoint": {"position": "after_model"}}}),
        (checkpointing, {"checkpointResume": {"checkpoint": {"position": "after_model", "schema_version": "2.0"}}}),
    ]
    outcomes: list[tuple[set[str], str]] = []
    for agent, prompt in attempts:
        with pytest.raises(Exception) as raised:  # noqa: PT011 - which exception is what is compared
            agent(prompt)
        outcomes.append(({c for c, kind in clauses.items() if isinstance(raised.value, kind)}, str(raised.value)))
    return outcomes


def test_malformed_resumes_are_refused_with_strands_errors() -> None:
    theirs, ours = refusals("strands"), refusals("statehitl")
    assert [message for _, message in ours] == [message for _, message in theirs]
    for (our_clauses, _), (their_clauses, _) in zip(ours, theirs, strict=True):
        assert our_clauses >= their_clauses  # every except clause written for Strands catches statehitl's
    assert theirs[0] == ({"ValueError"}, "Received checkpointResume block but agent was created with "
                                         "checkpointing=False. Pass checkpointing=True when constructing the Agent.")
    assert theirs[1] == ({"KeyError"}, "'checkpoint | missing required key in checkpointResume block'")
    assert theirs[4] == ({"CheckpointException"},
                         "Checkpoints with schema version '2.0' are not compatible with current version 1.0.")


def test_unknown_checkpoint_fields_are_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    from statehitl.experimental.checkpoint import Checkpoint

    with caplog.at_level(logging.WARNING):
        checkpoint = Checkpoint.from_dict({"position": "after_tools", "cycle_index": 3, "schema_version": "1.0",
                                           "from_the_future": True})
    assert checkpoint == Checkpoint("after_tools", 3)
    assert "ignoring unknown fields in checkpoint data" in caplog.text


def result_dicts(name: str) -> Any:
    on = side(name)
    agent = on.Agent(model=on.model([uses("t1", "add", {"a": 1, "b": 2}), "done"]), tools=[adder(on, [])],
                     callback_handler=None, checkpointing=True)
    stored = agent("go").to_dict()
    return stored["stop_reason"], stored["checkpoint"]


def test_a_paused_result_serialises_its_checkpoint() -> None:
    from statehitl.agent import AgentResult

    assert result_dicts("statehitl") == result_dicts("strands")
    on = side("statehitl")
    agent = on.Agent(model=on.model([uses("t1", "add", {"a": 1, "b": 2}), "done"]), tools=[adder(on, [])],
                     callback_handler=None, checkpointing=True)
    result = agent("go")
    assert AgentResult.from_dict(result.to_dict()).checkpoint == result.checkpoint
    finished = agent({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
    assert "checkpoint" in finished.to_dict()
    done = agent({"checkpointResume": {"checkpoint": finished.checkpoint.to_dict()}})
    assert "checkpoint" not in done.to_dict()  # only a paused result carries one
