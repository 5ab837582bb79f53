"""What statehitl keeps for LangGraph-style programs that LangGraph lacks: the answer to ``interrupt()`` is
bound, audited and applied once across processes; Sends and waiting edges survive a process boundary;
history and time travel come from the same durable records; misfits are refused with the store unchanged."""

from __future__ import annotations

import itertools
import operator
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import pytest

from statehitl.checkpoint import FileCheckpointer, InMemorySaver, MemorySaver
from statehitl.errors import (
    AlreadyAnsweredError,
    CheckpointConflict,
    GraphRecursionError,
    NotInterruptedError,
    ResumeInputError,
    StepLimitError,
)
from statehitl.graph import END, START, StateGraph
from statehitl.types import Command, Send, interrupt


class Log(TypedDict):
    log: Annotated[list, operator.add]


def config(thread: str, **more: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **more}}


def approval_graph(store: Any, paid: list[str]) -> Any:
    def plan(state: Log) -> dict[str, Any]:
        return {"log": ["planned"]}

    def approve(state: Log) -> Command:
        answer = interrupt({"pay": 42})
        return Command(goto="pay" if answer == "yes" else END, update={"log": [f"human said {answer}"]})

    def pay(state: Log) -> dict[str, Any]:
        paid.append("paid")
        return {"log": ["paid"]}

    g = StateGraph(Log)
    g.add_sequence([plan, approve])
    g.add_node(pay)
    g.add_edge(START, "plan")
    return g.compile(checkpointer=store)


def test_the_answer_to_interrupt_is_audited_and_bound_like_any_other(tmp_path: Path) -> None:
    paid: list[str] = []
    app = approval_graph(FileCheckpointer(tmp_path), paid)
    stopped = app.invoke({"log": []}, config("t"))
    (waiting,) = stopped["__interrupt__"]
    assert (waiting.value, waiting.name, waiting.node) == ({"pay": 42}, "interrupt", "approve")
    done = approval_graph(FileCheckpointer(tmp_path), paid).invoke(Command(resume="yes"), config("t"))
    assert done == {"log": ["planned", "human said yes", "paid"]}
    assert paid == ["paid"]
    (row,) = app.audit("t")
    assert (row.interrupt_id, row.response, row.via) == (waiting.id, "yes", "app")
    with pytest.raises(NotInterruptedError, match="not waiting on any interrupt"):  # a late second answer
        app.invoke(Command(resume="no"), config("t"))
    assert paid == ["paid"]


def test_two_processes_racing_to_resume_apply_one_answer(tmp_path: Path) -> None:
    paid: list[str] = []
    first, second = approval_graph(FileCheckpointer(tmp_path), paid), approval_graph(FileCheckpointer(tmp_path), paid)
    first.invoke({"log": []}, config("race"))
    stale = second.get_state(config("race"))  # the second process read the thread before the first resumed
    assert stale is not None
    assert stale.next == ("approve",)
    first.invoke(Command(resume="yes"), config("race"))
    with pytest.raises((AlreadyAnsweredError, CheckpointConflict, NotInterruptedError)):
        second.invoke(Command(resume="no"), config("race"))
    assert paid == ["paid"]
    assert [r.response for r in first.audit("race")] == ["yes"]


def test_several_waiting_interrupts_need_their_ids_and_nothing_is_stored_otherwise() -> None:
    def ask(name: str) -> Any:
        return lambda s: {"log": [interrupt(name)]}

    g = StateGraph(Log)
    g.add_node("a", ask("qa"))
    g.add_node("b", ask("qb"))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile(checkpointer=InMemorySaver())
    stopped = app.invoke({"log": []}, config("two"))
    before = app.get_state(config("two"))
    with pytest.raises(ResumeInputError, match="multiple pending interrupts"):
        app.invoke(Command(resume="x"), config("two"))
    assert app.get_state(config("two")) == before
    ids = {i.value: i.id for i in stopped["__interrupt__"]}
    assert app.invoke(Command(resume={ids["qa"]: 1, ids["qb"]: 2}), config("two")) == {"log": [1, 2]}


def test_unknown_input_keys_are_dropped_and_a_waiting_thread_still_takes_only_answers() -> None:
    app = approval_graph(InMemorySaver(), [])
    app.invoke({"log": [], "nope": 1}, config("k"))  # LangGraph's input keeps its input schema's keys only
    before = app.get_state(config("k"))
    assert before.next == ("approve",)
    assert "nope" not in before.values
    with pytest.raises(ResumeInputError):  # a thread waiting on a human takes answers, not new input
        app.invoke({"log": ["again"], "nope": 2}, config("k"))
    assert app.get_state(config("k")) == before


SENDS_AND_JOINS = textwrap.dedent('''
    import json, operator, sys
    from typing import Annotated, TypedDict
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import START, StateGraph
    from statehitl.types import Command, Send, interrupt

    class S(TypedDict):
        items: list
        done: Annotated[list, operator.add]

    def work(arg):
        answer = interrupt(arg["item"]) if arg["item"] == "b" else "auto"
        return {"done": [f"{arg['item']}:{answer}"]}

    g = StateGraph(S)
    g.add_node("plan", lambda s: {"done": ["planned"]})
    g.add_node("side", lambda s: {"done": ["side"]})
    g.add_node("work", work)
    g.add_node("sum", lambda s: {"done": [f"sum of {len(s['done'])}"]})
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: [Send("work", {"item": i}) for i in s["items"]], ["work"])
    g.add_edge(START, "side")
    g.add_edge(["plan", "side"], "sum")
    app = g.compile(checkpointer=FileCheckpointer(sys.argv[1]))
    config = {"configurable": {"thread_id": "map"}}
    if sys.argv[2] == "start":
        result = app.invoke({"items": ["a", "b", "c"], "done": []}, config)
    else:
        result = app.invoke(Command(resume=sys.argv[2]), config)
    print(json.dumps({k: v for k, v in result.items() if k != "__interrupt__"}))
    print(json.dumps([i.value for i in result.get("__interrupt__", [])]))
''')


def test_sends_and_a_waiting_edge_carry_on_in_a_new_process(tmp_path: Path) -> None:
    script = tmp_path / "sends.py"
    script.write_text(SENDS_AND_JOINS)

    def run(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, str(script), str(tmp_path / "store"), *args], capture_output=True,
                              text=True, check=True)
        return done.stdout.strip().splitlines()

    values, waiting = run("start")
    assert waiting == '["b"]'
    # plan and side ran; sum waited for both and ran with the Sends' step, where only the b task stopped (the
    # values show what the finished tasks of that step wrote, as LangGraph shows them)
    assert values == '{"items": ["a", "b", "c"], "done": ["planned", "side", "sum of 2", "a:auto", "c:auto"]}'
    values, waiting = run("approved")
    assert waiting == "[]"
    assert values == ('{"items": ["a", "b", "c"], "done": ["planned", "side", "sum of 2", "a:auto", "b:approved", '
                      '"c:auto"]}')


def test_history_time_travel_and_a_fork() -> None:
    g = StateGraph(Log)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s, name=name: {"log": [name]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    app = g.compile(checkpointer=MemorySaver())
    app.invoke({"log": []}, config("tt"))
    history = list(app.get_state_history(config("tt")))
    assert [(h.metadata["source"], h.metadata["step"], h.next, h.values["log"]) for h in history] == [
        ("loop", 3, (), ["a", "b", "c"]),
        ("loop", 2, ("c",), ["a", "b"]),
        ("loop", 1, ("b",), ["a"]),
        ("loop", 0, ("a",), []),
        ("input", -1, ("__start__",), []),
    ]
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config == older.config
    assert datetime.fromisoformat(history[0].created_at).tzinfo is not None
    assert list(app.get_state_history(config("tt"), limit=1)) == history[:1]
    assert list(app.get_state_history(config("tt"), before=history[1].config)) == history[2:]
    # replaying from the input checkpoint runs every node again, on a new branch
    assert app.invoke(None, history[-1].config) == {"log": ["a", "b", "c"]}
    # replaying the end runs nothing
    assert app.invoke(None, history[0].config) == {"log": ["a", "b", "c"]}
    # a fork: edit the checkpoint after a, then go on from the edit
    fork = app.update_state(history[2].config, {"log": ["edited"]})
    assert fork["configurable"]["thread_id"] == "tt"
    edited = app.get_state(fork)
    assert edited is not None
    assert (edited.metadata["source"], edited.next) == ("update", ("b",))
    assert app.invoke(None, fork) == {"log": ["a", "edited", "b", "c"]}
    # as_node moves the thread on along that node's edges
    moved = app.update_state(config("tt"), {"log": ["late"]}, as_node="b")
    assert app.get_state(moved).next == ("c",)


def test_recursion_limit_is_a_graph_recursion_error_that_leaves_the_thread_to_continue() -> None:
    class Count(TypedDict):
        n: int

    g = StateGraph(Count)
    g.add_node("again", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "again")
    g.add_conditional_edges("again", lambda s: "again" if s["n"] < 8 else END)
    app = g.compile(checkpointer=InMemorySaver())
    with pytest.raises(GraphRecursionError) as raised:
        app.invoke({"n": 0}, {**config("loop"), "recursion_limit": 5})
    assert isinstance(raised.value, StepLimitError)
    assert isinstance(raised.value, RecursionError)
    assert app.invoke(None, config("loop")) == {"n": 8}


def test_native_and_langgraph_styles_mix_in_one_graph() -> None:
    from statehitl.graph import NodeContext

    def native(state: Log, ctx: NodeContext) -> dict[str, Any]:
        return {"log": [ctx.interrupt("native-approval", reason="ok?")]}

    def langgraph_style(state: Log) -> dict[str, Any]:
        return {"log": [interrupt("and this?")]}

    g = StateGraph(Log)
    g.add_node("native", native)
    g.add_node("lg", langgraph_style)
    g.add_edge(START, "native")
    g.add_edge("native", "lg")
    app = g.compile()
    first = app.invoke({"log": []}, "mix")
    assert [i.name for i in first.interrupts] == ["native-approval"]
    second = app.invoke([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}], "mix")
    assert [i.name for i in second.interrupts] == ["interrupt"]
    assert app.invoke(Command(resume="sure"), "mix") == {"log": ["yes", "sure"]}


def test_send_and_command_mistakes_are_named() -> None:
    g = StateGraph(Log)
    g.add_node("a", lambda s: Command(goto="nowhere"))
    g.add_edge(START, "a")
    with pytest.raises(Exception, match="'nowhere' is not a node"):
        g.compile().invoke({"log": []})
    with pytest.raises(TypeError, match="JSON"):
        Send("a", {"when": object()})
    with pytest.raises(Exception, match=r"give a CachePolicy"):
        StateGraph(Log).add_node("a", lambda s: None, cache_policy=object())


def test_messages_mode_streams_the_text_of_an_agent_running_in_a_node() -> None:
    from statehitl import Agent
    from statehitl.models import ScriptedModel

    class Chat(TypedDict):
        question: str
        answer: str

    agent = Agent(model=ScriptedModel(["Because the sky scatters blue light."]), callback_handler=None)

    def respond(state: Chat) -> dict[str, Any]:
        return {"answer": str(agent(state["question"])).strip()}

    g = StateGraph(Chat)
    g.add_node("respond", respond)
    g.add_edge(START, "respond")
    chunks = list(g.compile().stream({"question": "why is the sky blue?"}, stream_mode=["messages", "updates"]))
    pieces = [chunk for mode, chunk in chunks if mode == "messages"]
    assert "".join(message.content for message, _ in pieces) == "Because the sky scatters blue light."
    assert {(meta["langgraph_node"], meta["langgraph_step"]) for _, meta in pieces} == {("respond", 1)}
    assert chunks[-1] == ("updates", {"respond": {"answer": "Because the sky scatters blue light."}})


def test_a_breakpoint_waits_like_an_interrupt_with_nothing_to_answer() -> None:
    g = StateGraph(Log)
    for name in ("a", "b"):
        g.add_node(name, lambda s, name=name: {"log": [name]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    assert app.invoke({"log": []}, config("bp")) == {"log": ["a"]}
    stopped = app.get_state(config("bp"))
    assert stopped is not None
    # it waits (a worker applying answers leaves it alone: there is none to apply), at b, on no interrupt
    assert (stopped.status.value, stopped.next, stopped.interrupts) == ("interrupted", ("b",), ())
    with pytest.raises(ResumeInputError, match="breakpoint before \\['b'\\]"):  # an answer to nothing
        app.invoke([{"interruptResponse": {"interruptId": "none", "response": "yes"}}], config("bp"))
    assert app.get_state(config("bp")) == stopped
    assert app.invoke(None, config("bp")) == {"log": ["a", "b"]}


def test_new_input_at_a_breakpoint_leaves_it_for_a_new_run_but_never_skips_a_question() -> None:
    g = StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("ask", lambda s: {"log": [interrupt("ok?")]})
    g.add_edge(START, "a")
    g.add_edge("a", "ask")
    app = g.compile(checkpointer=InMemorySaver(), interrupt_before=["ask"])
    assert app.invoke({"log": ["first"]}, config("bp")) == {"log": ["first", "a"]}
    # nothing was asked at the breakpoint: new input starts a new run from the thread's state, as LangGraph's
    assert app.invoke({"log": ["second"]}, config("bp")) == {"log": ["first", "a", "second", "a"]}
    assert app.invoke(None, config("bp"))["__interrupt__"][0].value == "ok?"
    waiting = app.get_state(config("bp"))
    # a question is pending now: new input is refused (the approval is not skipped) and changes nothing
    with pytest.raises(ResumeInputError, match="Command\\(resume="):
        app.invoke({"log": ["third"]}, config("bp"))
    assert app.get_state(config("bp")) == waiting
    assert app.invoke(Command(resume="yes"), config("bp")) == {"log": ["first", "a", "second", "a", "yes"]}


def route_on(state: Log) -> Command[Literal["yes", "no"]]:
    return Command(goto="yes")


def test_where_a_command_may_go_is_drawn_from_its_annotation_or_destinations() -> None:
    g = StateGraph(Log)
    g.add_node("ask", route_on)
    g.add_node("yes", lambda s: None)
    g.add_node("no", lambda s: None, destinations={"ask": "again"})  # a dict maps each destination to a label
    g.add_edge(START, "ask")
    drawn = g.compile().draw_mermaid()
    assert {"n0 -.-> n1", "n0 -.-> n2", "n2 -.-> n0"} <= {line.strip() for line in drawn.splitlines()}
    with pytest.raises(Exception, match="Found edge ending at unknown node `nowhere`"):
        StateGraph(Log).add_node("a", lambda s: None, destinations=["nowhere"]).add_edge(START, "a").compile()


def test_the_inbox_answers_an_interrupt_call_and_the_next_call_applies_it(tmp_path: Path) -> None:
    from statehitl import inbox

    paid: list[str] = []
    store = FileCheckpointer(tmp_path)
    stopped = approval_graph(store, paid).invoke({"log": []}, config("via-inbox"))
    (waiting,) = stopped["__interrupt__"]
    (listed,) = inbox.pending(FileCheckpointer(tmp_path))
    assert (listed.id, listed.name, listed.reason) == (waiting.id, "interrupt", {"pay": 42})
    inbox.answer(FileCheckpointer(tmp_path), waiting.id, "yes", responder="ann")
    done = approval_graph(FileCheckpointer(tmp_path), paid).invoke(None, config("via-inbox"))
    assert done == {"log": ["planned", "human said yes", "paid"]}
    assert paid == ["paid"]
    (row,) = approval_graph(FileCheckpointer(tmp_path), paid).audit("via-inbox")
    assert (row.response, row.responder, row.via) == ("yes", "ann", "inbox")


def test_a_retried_node_asks_its_interrupts_afresh_and_gets_its_answers_again() -> None:
    from statehitl.types import RetryPolicy

    attempts: list[Any] = []

    def pay(state: Log) -> dict[str, Any]:
        answer = interrupt("pay?")
        attempts.append(answer)
        if len(attempts) == 1:
            raise ConnectionError("the bank hung up")
        return {"log": [f"paid after {answer}"]}

    g = StateGraph(Log)
    g.add_node("pay", pay, retry_policy=RetryPolicy(initial_interval=0.01, jitter=False))
    g.add_edge(START, "pay")
    app = g.compile(checkpointer=InMemorySaver())
    assert [i.value for i in app.invoke({"log": []}, config("retry"))["__interrupt__"]] == ["pay?"]
    assert app.invoke(Command(resume="yes"), config("retry")) == {"log": ["paid after yes"]}
    assert attempts == ["yes", "yes"]


def test_new_input_on_a_thread_waiting_on_interrupt_is_told_to_answer_as_langgraph_does() -> None:
    """A LangGraph program answers with ``Command(resume=...)``: the refusal says that, not the interruptResponse
    list of the native style (which a native call on the same kind of graph is still told)."""
    def ask(state: Log) -> dict[str, Any]:
        return {"log": [interrupt("ok?")]}

    def ask_twice(state: Log) -> dict[str, Any]:
        return {"log": [interrupt("first?")]}

    g = StateGraph(Log)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=InMemorySaver())
    app.invoke({"log": []}, config("lg"))
    with pytest.raises(ResumeInputError, match=r"resume it with graph\.invoke\(Command\(resume=answer\), config\), "
                                               r"not a dict$"):
        app.invoke({"log": ["more"]}, config("lg"))
    app.invoke({"log": []}, thread_id="native")  # the thread still waits on LangGraph's interrupt(): same answer
    with pytest.raises(ResumeInputError, match=r"Command\(resume=answer\)"):
        app.invoke({"log": ["more"]}, thread_id="native")

    fan = StateGraph(Log)
    fan.add_node("ask", ask)
    fan.add_node("ask_twice", ask_twice)
    fan.add_edge(START, "ask")
    fan.add_edge(START, "ask_twice")
    two = fan.compile(checkpointer=InMemorySaver())
    two.invoke({"log": []}, config("two"))
    with pytest.raises(ResumeInputError, match=r"graph\.invoke\(Command\(resume=\{interrupt_id: answer, \.\.\.\}\), "
                                               r"config\), one answer per interrupt id"):
        two.invoke({"log": ["more"]}, config("two"))
    assert two.invoke(Command(resume={i.id: "y" for i in two.get_state(config("two")).interrupts}),
                      config("two"))["log"] == ["y", "y"]


def test_interrupt_from_statehitl_types_asks_even_after_strands_interrupt_module_was_imported(tmp_path: Path) -> None:
    """``statehitl.types.interrupt`` is both LangGraph's function and Strands' module path: whichever a program
    imports first, ``from statehitl.types import interrupt`` gives something that asks."""
    program = textwrap.dedent("""
        from typing import TypedDict

        from statehitl.types.interrupt import Interrupt  # Strands' path, imported first
        from statehitl.checkpoint import InMemorySaver
        from statehitl.graph import START, StateGraph
        from statehitl.types import Command, interrupt

        class S(TypedDict):
            answer: str

        g = StateGraph(S)
        g.add_node("ask", lambda state: {"answer": interrupt("ok?")})
        g.add_edge(START, "ask")
        app = g.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        asked = app.invoke({"answer": ""}, config)["__interrupt__"][0]
        print(isinstance(asked, Interrupt), asked.value, app.invoke(Command(resume="yes"), config)["answer"])
    """)
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True ok? yes\n"
