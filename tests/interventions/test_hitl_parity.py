"""``HumanInTheLoop``, side by side: each program runs on Strands 1.62 and on statehitl, which must observe
the same interrupt names, prompts, tool calls, trust and classifier decisions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from intervention_sides import Side, answers, both, tool_results, use

PROMPT_A = 'Approve "delete_file"?\n  Input: {"path": "a"}'


def tools(side: Side, ran: list[str]) -> list[Any]:
    @side.tool
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: the file
        """
        ran.append(f"delete {path}")
        return f"deleted {path}"

    @side.tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        ran.append(f"read {path}")
        return f"contents of {path}"

    return [delete_file, read_file]


def read_and_delete() -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": "a"}}},
        {"toolUse": {"toolUseId": "t2", "name": "delete_file", "input": {"path": "a"}}}]}


def hitl_agent(side: Side, script: list[Any], **options: Any) -> tuple[Any, Any, list[str]]:
    ran: list[str] = []
    agent, model = side.agent(script, tools=tools(side, ran), interventions=[side.hitl.HumanInTheLoop(**options)])
    return agent, model, ran


def test_allowed_tools_run_and_every_other_call_stops_with_strands_interrupt_and_prompt() -> None:
    def program(side: Side) -> Any:
        agent, _, ran = hitl_agent(side, [read_and_delete(), "done"], allowed_tools=["read_file"])
        asked = agent("tidy up")
        stopped = (asked.stop_reason, [(i.name, i.reason) for i in asked.interrupts], list(ran))
        done = agent(answers(asked, "y"))
        return stopped, done.stop_reason, ran, tool_results(agent.messages)

    assert both(program) == (
        ("interrupt", [("strands:human-in-the-loop", PROMPT_A)], ["read a"]),
        "end_turn", ["read a", "delete a"], [("success", "contents of a"), ("success", "deleted a")])


@pytest.mark.parametrize(("allowed", "asked_about"), [
    (None, ["read_file", "delete_file"]),
    (["*"], []),
    (["*", "!delete_file"], ["delete_file"]),
    (["read_file", "delete_file"], []),
])
def test_which_calls_are_asked_about(allowed: list[str] | None, asked_about: list[str]) -> None:
    def program(side: Side) -> Any:
        agent, _, _ = hitl_agent(side, [read_and_delete(), "done"], allowed_tools=allowed)
        result = agent("tidy up")
        return sorted(i.reason.split('"')[1] for i in result.interrupts or [])

    assert both(program) == sorted(asked_about)


def test_a_refusal_cancels_the_call_with_the_prompt() -> None:
    def program(side: Side) -> Any:
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"])
        agent(answers(agent("tidy up"), "n"))
        return ran, tool_results(agent.messages)

    assert both(program) == ([], [("error", f"CONFIRMATION_FAILED: {PROMPT_A}")])


@pytest.mark.parametrize("malformed", [5, {"x": 1}, [1]])
def test_a_malformed_answer_refuses_the_call_in_strands_and_is_refused_itself_here(malformed: Any) -> None:
    """Neither a typed answer nor a string or boolean. Strands reads it as a refusal; statehitl refuses the
    answer before storing it (an answer is stored once and binds: a typo must not become a final "no"), the
    agent still waits, and the refusal the human then gives ends the call as Strands ended it."""
    from statehitl.errors import ResponseValidationError

    def program(side: Side) -> Any:
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"])
        asked = agent("tidy up")
        if side.name == "statehitl":
            with pytest.raises(ResponseValidationError, match="strands:human-in-the-loop"):
                agent(answers(asked, malformed))
            assert [i.id for i in agent.interrupts] == [i.id for i in asked.interrupts]  # still waiting on it
            done = agent(answers(asked, "n"))
        else:
            done = agent(answers(asked, malformed))
        return done.stop_reason, ran, tool_results(agent.messages)

    assert both(program) == ("end_turn", [], [("error", f"CONFIRMATION_FAILED: {PROMPT_A}")])


@pytest.mark.parametrize("malformed", [5, {"x": 1}, [1]])
def test_a_malformed_answer_from_an_inline_ask_refuses_the_call_as_in_strands(malformed: Any) -> None:
    """No one is left to answer again inline: the answer is read, as Strands reads it, as a refusal."""
    def program(side: Side) -> Any:
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"],
                                   ask=lambda prompt, **kwargs: malformed)
        return agent("tidy up").stop_reason, ran, tool_results(agent.messages)

    assert both(program) == ("end_turn", [], [("error", f"CONFIRMATION_FAILED: {PROMPT_A}")])


def test_trust_approves_and_remembers_the_tool_for_the_session() -> None:
    def program(side: Side) -> Any:
        script = [use("t1", "delete_file", {"path": "a"}), "ok", use("t2", "delete_file", {"path": "b"}), "ok again"]
        agent, _, ran = hitl_agent(side, script, enable_trust=True)
        agent(answers(agent("tidy up"), "T"))
        again = agent("and b")
        return ran, agent.state.get("hitl:trusted_tools"), again.stop_reason

    assert both(program) == (["delete a", "delete b"], ["delete_file"], "end_turn")


def test_trust_is_a_refusal_unless_enabled_and_never_trusts_a_negated_tool() -> None:
    def program(side: Side, options: dict[str, Any]) -> Any:
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"], **options)
        agent(answers(agent("tidy up"), "trust"))
        return ran, agent.state.get("hitl:trusted_tools"), tool_results(agent.messages)

    refused = ([], None, [("error", f"CONFIRMATION_FAILED: {PROMPT_A}")])
    assert both(lambda side: program(side, {})) == refused
    assert both(lambda side: program(side, {"enable_trust": True, "allowed_tools": ["*", "!delete_file"]})) == refused


def test_custom_evaluate_and_evaluate_trust_read_the_answers() -> None:
    def program(side: Side) -> Any:
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"], enable_trust=True,
                                   evaluate=lambda r: r == "ship it", evaluate_trust=lambda r: r == "always")
        first = agent("tidy up")
        agent(answers(first, "ship it"))
        return ran, agent.state.get("hitl:trusted_tools")

    assert both(program) == (["delete a"], None)


def test_inline_ask_prompts_and_applies_the_answer_without_stopping() -> None:
    def program(side: Side, answer: Any) -> Any:
        prompts: list[str] = []

        async def ask(prompt: str) -> Any:
            await asyncio.sleep(0)
            prompts.append(prompt)
            return answer

        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"], ask=ask)
        result = agent("tidy up")
        return result.stop_reason, prompts, ran, tool_results(agent.messages)

    assert both(lambda side: program(side, "yes")) == ("end_turn", [PROMPT_A], ["delete a"], [("success", "deleted a")])
    assert both(lambda side: program(side, "n")) == (
        "end_turn", [PROMPT_A], [], [("error", f"CONFIRMATION_FAILED: {PROMPT_A}")])
    assert both(lambda side: program(side, None)) == (
        "end_turn", [PROMPT_A], [],
        [("error", 'DENIED: Tool "delete_file" denied: approval callback returned no response.')])


def test_a_classifier_decides_and_its_reason_joins_the_prompt() -> None:
    def program(side: Side) -> Any:
        def classify(event: Any) -> Any:
            risky = event.tool_use["input"]["path"].startswith("/etc")
            return side.ClassifierResult(requires_human_in_the_loop=risky, reason="system file" if risky else None)

        batch = {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": "delete_file", "input": {"path": "/tmp/x"}}},
            {"toolUse": {"toolUseId": "t2", "name": "delete_file", "input": {"path": "/etc/hosts"}}}]}
        agent, _, ran = hitl_agent(side, [batch, "ok"], classifier=classify)
        asked = agent("tidy up")
        return [i.reason for i in asked.interrupts], ran

    assert both(program) == (['Approve "delete_file" — system file?\n  Input: {"path": "/etc/hosts"}'],
                             ["delete /tmp/x"])


@pytest.mark.parametrize("classify", [
    lambda event: (_ for _ in ()).throw(RuntimeError("classifier down")),
    lambda event: {"requires_human_in_the_loop": False},
])
def test_a_failing_or_malformed_classifier_asks_the_human(classify: Any) -> None:
    def program(side: Side) -> Any:
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"], classifier=classify)
        return [i.reason for i in agent("tidy up").interrupts], ran

    assert both(program) == ([PROMPT_A], [])


def test_the_classifier_is_not_asked_again_when_the_answer_comes() -> None:
    def program(side: Side) -> Any:
        classified: list[str] = []

        def classify(event: Any) -> Any:
            classified.append(event.tool_use["toolUseId"])
            return side.ClassifierResult(requires_human_in_the_loop=True, reason="risky")

        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"], classifier=classify)
        agent(answers(agent("tidy up"), "y"))
        return classified, ran

    assert both(program) == (["t1"], ["delete a"])


def decision(requires: bool, reason: str) -> dict[str, Any]:
    return use("c1", "_RiskDecision", {"requires_approval": requires, "reason": reason})


@pytest.mark.parametrize(("replies", "expected"), [
    ([decision(True, "deletes data")], ['Approve "delete_file" — deletes data?\n  Input: {"path": "a"}']),
    ([decision(False, "scratch file")], []),
    (["looks harmless", '{"requires_approval": true, "reason": "second look"}'],
     ['Approve "delete_file" — second look?\n  Input: {"path": "a"}']),
    (["no idea", "still no idea"], [PROMPT_A]),
])
def test_the_llm_risk_classifier_decides_with_the_model_it_is_given(replies: list[Any], expected: list[str]) -> None:
    def program(side: Side) -> Any:
        classifier_model = side.model(replies)
        agent, model, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"],
                                       classifier=side.hitl.LLMClassifierConfig(model=classifier_model))
        result = agent("tidy up")
        request = classifier_model.requests[0]
        return ([i.reason for i in result.interrupts or []], ran, classifier_model.calls, model.calls,
                [spec["name"] for spec in request["tool_specs"]], request["messages"][0]["content"][0]["text"][-28:])

    reasons, ran, classifier_calls, agent_calls, specs, question_end = both(program)
    assert reasons == expected
    assert ran == ([] if expected else ["delete a"])
    assert classifier_calls == len(replies)
    assert agent_calls == (1 if expected else 2)
    assert specs == ["_RiskDecision"]
    assert question_end == 'Tool: delete_file\nInput: {\n  "path": "a"\n}'[-28:]


def test_the_llm_classifier_uses_the_agents_model_without_one_of_its_own() -> None:
    def program(side: Side) -> Any:
        script = [use("t1", "delete_file", {"path": "a"}), decision(False, "scratch file"), "ok"]
        agent, model, ran = hitl_agent(side, script, classifier=True)
        result = agent("tidy up")
        return result.stop_reason, ran, model.calls

    assert both(program) == ("end_turn", ["delete a"], 3)


def test_allowed_tools_must_be_a_list() -> None:
    def program(side: Side) -> Any:
        with pytest.raises(ValueError, match="allowed_tools") as raised:
            side.hitl.HumanInTheLoop(allowed_tools="read_file")
        return str(raised.value)

    assert both(program) == "allowed_tools must be a list of tool names, not a single string"


@pytest.mark.parametrize(("trust", "typed", "ran_after"), [
    (False, "y", ["delete a"]),
    (True, " t ", ["delete a"]),
    (False, "n", []),
])
def test_stdio_asks_on_the_terminal(monkeypatch: pytest.MonkeyPatch, trust: bool, typed: str,
                                    ran_after: list[str]) -> None:
    def program(side: Side) -> Any:
        shown: list[str] = []

        def fake_input(prompt: str) -> str:
            shown.append(prompt)
            return typed

        monkeypatch.setattr("builtins.input", fake_input)
        agent, _, ran = hitl_agent(side, [use("t1", "delete_file", {"path": "a"}), "ok"], ask="stdio",
                                   enable_trust=trust)
        result = agent("tidy up")
        return result.stop_reason, shown, ran, agent.state.get("hitl:trusted_tools")

    options = "(y/n/t)" if trust else "(y/n)"
    assert both(program) == ("end_turn", [f"{PROMPT_A} {options}: "], ran_after,
                             ["delete_file"] if typed.strip() == "t" else None)
