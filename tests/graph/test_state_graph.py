"""StateGraph: the hand-written API, node updates and how they merge into the pydantic state."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from statehitl.checkpoint import FileCheckpointer, MemoryCheckpointer
from statehitl.errors import InvalidUpdateError
from statehitl.graph import END, START, GraphRunResult, NodeContext, StateGraph, Status, append


class Ticket(BaseModel):
    text: str
    log: Annotated[list[str], append] = []
    approved: bool = False
    score: int = Field(default=0, ge=0)


def linear(*nodes: tuple[str, Any], schema: type[BaseModel] = Ticket, **compile_kwargs: Any):
    g = StateGraph(schema)
    previous = START
    for name, fn in nodes:
        g.add_node(name, fn)
        g.add_edge(previous, name)
        previous = name
    g.add_edge(previous, END)
    return g.compile(**compile_kwargs)


def parallel(nodes: dict[str, Any], schema: type[BaseModel] = Ticket):
    """START -> every node -> END: all of them run in the same step."""
    g = StateGraph(schema)
    for name, fn in nodes.items():
        g.add_node(name, fn)
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile()


# -- the main flow ----------------------------------------------------------------------------------


def classify(state: Ticket) -> dict[str, Any]:
    return {"log": f"classified {state.text!r}"}


def review(state: Ticket, ctx: NodeContext) -> dict[str, Any]:
    answer = ctx.interrupt("refund-approval", reason={"text": state.text})
    return {"approved": answer == "y", "log": f"reviewed: {answer}"}


def refund_app():
    g = StateGraph(Ticket)
    g.add_node("classify", classify)
    g.add_node("review", review)
    g.add_edge(START, "classify")
    g.add_conditional_edges("classify", lambda s: "review" if "refund" in s.text else END)
    g.add_edge("review", END)
    return g.compile(checkpointer=MemoryCheckpointer())


def test_refund_flow(transition_recorder, snapshot) -> None:
    app = refund_app()
    result = app.invoke({"text": "refund please"}, thread_id="t-1")
    assert isinstance(result, GraphRunResult)
    assert (result.stop_reason, result.status) == ("interrupt", Status.INTERRUPTED)
    assert [(i.name, i.reason, i.source, i.node) for i in result.interrupts] == [
        ("refund-approval", {"text": "refund please"}, "node", "review")
    ]
    while result.stop_reason == "interrupt":
        result = app.invoke(
            [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in result.interrupts],
            thread_id="t-1",
        )
    assert (result.stop_reason, result.status) == ("end", Status.COMPLETED)
    assert result.state == Ticket(text="refund please", log=["classified 'refund please'", "reviewed: y"],
                                  approved=True)
    assert result.interrupts == []
    assert result.thread_id == "t-1"
    assert transition_recorder.log == snapshot


def test_branch_that_needs_no_human(transition_recorder, snapshot) -> None:
    result = refund_app().invoke(Ticket(text="hello"), thread_id="t-2")
    assert result.stop_reason == "end"
    assert result.state.log == ["classified 'hello'"]
    assert transition_recorder.log == snapshot


def test_a_kept_graph_called_without_a_thread_is_refused_and_stores_nothing() -> None:
    app = refund_app()
    for call in (lambda: app.invoke({"text": "hi"}), lambda: app.invoke({"text": "hi"}, {"configurable": {}})):
        with pytest.raises(ValueError, match="thread_id"):
            call()
    assert asyncio.run(app.checkpointer.threads()) == []
    unkept = linear(("a", lambda s: {"log": "a"}))
    first, second = unkept.invoke({"text": "x"}), unkept.invoke({"text": "x"})
    assert first.thread_id != second.thread_id  # nothing is kept: each call is a thread of its own


def test_ainvoke_from_a_running_loop_and_invoke_inside_one() -> None:
    app = linear(("a", lambda s: {"log": "a"}))

    async def main() -> tuple[list[str], list[str]]:
        via_async = await app.ainvoke({"text": "x"}, thread_id="t")
        via_sync = app.invoke({"text": "x"}, thread_id="u")  # sync wrapper inside a running loop
        return via_async.state.log, via_sync.state.log

    assert asyncio.run(main()) == (["a"], ["a"])


# -- what nodes may return --------------------------------------------------------------------------


def test_node_may_return_a_dict_a_model_or_none() -> None:
    app = linear(
        ("as_dict", lambda s: {"log": "dict"}),
        ("as_model", lambda s: Ticket(text=s.text, approved=True)),  # only the set fields are written
        ("as_none", lambda s: None),
    )
    result = app.invoke({"text": "x", "log": ["start"]})
    assert result.state == Ticket(text="x", log=["start", "dict"], approved=True)


def test_a_returned_model_writes_its_fields_but_those_left_at_a_default_of_none() -> None:
    """LangGraph's rule: a default other than None is written (``approved=False`` overwrites the state's)."""
    app = linear(("a", lambda s: Ticket(text="changed")))
    result = app.invoke({"text": "x", "log": ["kept"], "approved": True})
    assert result.state == Ticket(text="changed", log=["kept"], approved=False)


def test_async_nodes_and_context() -> None:
    seen: list[tuple[str, int, str, dict[str, Any]]] = []

    async def a(state: Ticket, ctx: NodeContext) -> dict[str, Any]:
        seen.append((ctx.node, ctx.step, ctx.thread_id, ctx.invocation_state))
        return {"log": "async"}

    app = linear(("a", a))
    result = app.invoke({"text": "x"}, thread_id="t", invocation_state={"user": "ann"})
    assert result.state.log == ["async"]
    assert seen == [("a", 0, "t", {"user": "ann"})]


class Strict(Ticket):
    model_config = ConfigDict(extra="forbid")


def test_an_unknown_field_is_dropped_unless_the_model_forbids_extras() -> None:
    app = linear(("a", lambda s: {"colour": "red", "approved": True}))
    assert app.invoke({"text": "x"}) == {"text": "x", "log": [], "approved": True, "score": 0}  # as LangGraph drops it
    strict = linear(("a", lambda s: {"colour": "red", "approved": True}), schema=Strict)
    with pytest.raises(InvalidUpdateError, match=r"node 'a' wrote unknown channel\(s\) \['colour'\]; Strict forbids"):
        strict.invoke({"text": "x"})


@pytest.mark.parametrize("returned", [42, "text", ["log", "x"]])
def test_update_of_the_wrong_kind_is_an_invalid_update(returned: Any) -> None:
    app = linear(("a", lambda s: returned))
    with pytest.raises(InvalidUpdateError, match=r"node 'a' returned .*return a dict of channel updates"):
        app.invoke({"text": "x"})


def test_a_model_of_another_class_writes_the_fields_it_sets() -> None:
    class Other(BaseModel):
        text: str = ""
        colour: str = ""

    app = linear(("a", lambda s: Other(text="y", colour="red")))  # LangGraph's rule: its fields are updates
    assert app.invoke({"text": "x", "score": 2}) == {"text": "y", "log": [], "approved": False, "score": 2}


def test_value_of_the_wrong_type_is_an_invalid_update() -> None:
    app = linear(("a", lambda s: {"approved": "not a bool"}))
    with pytest.raises(InvalidUpdateError, match=r"node 'a' wrote an invalid value to 'approved' of Ticket"):
        app.invoke({"text": "x"})


def test_value_of_the_wrong_type_for_an_append_channel() -> None:
    app = linear(("a", lambda s: {"log": [{"not": "a str"}]}))
    with pytest.raises(InvalidUpdateError, match=r"wrote an invalid value to 'log'"):
        app.invoke({"text": "x"})


def test_field_constraints_are_checked_and_nothing_invalid_is_committed() -> None:
    """A value the model's constraints reject must fail the step, not poison the thread's checkpoint."""
    app = linear(("a", lambda s: {"score": -1}), checkpointer=MemoryCheckpointer())
    with pytest.raises(InvalidUpdateError, match=r"wrote an invalid value to 'score'.*greater than or equal"):
        app.invoke({"text": "x"}, thread_id="t")
    failed = app.get_state("t")  # the failure is recorded, the invalid value is not
    assert failed is not None
    assert (failed.status, failed.values.score, failed.next) == (Status.FAILED, 0, ("a",))
    assert failed.error is not None
    assert (failed.error.node, failed.error.type) == ("a", "InvalidUpdateError")
    with pytest.raises(InvalidUpdateError):  # new input starts a new run on the failed thread (and fails again)
        app.invoke({"text": "y"}, thread_id="t")
    assert app.get_state("t").values.text == "y"


def test_annotated_validators_run_on_updates_before_the_next_node_sees_them() -> None:
    class Shouty(BaseModel):
        word: Annotated[str, AfterValidator(str.upper)] = ""
        words: Annotated[list[Annotated[str, AfterValidator(str.upper)]], append] = []
        seen: str = ""

    app = linear(
        ("a", lambda s: {"word": "hi", "words": ["a", "b"]}),
        ("b", lambda s: {"seen": f"{s.word} {s.words}"}),
        schema=Shouty,
    )
    assert app.invoke({}).state == Shouty(word="HI", words=["A", "B"], seen="HI ['A', 'B']")


def test_values_are_coerced_by_the_field_type() -> None:
    class Typed(BaseModel):
        n: int = 0
        inner: Ticket | None = None

    app = linear(("a", lambda s: {"n": "7", "inner": {"text": "nested"}}), schema=Typed)
    state = app.invoke({}).state
    assert state.n == 7
    assert state.inner == Ticket(text="nested")


# -- concurrent writes ------------------------------------------------------------------------------


def test_concurrent_writes_without_reducer_name_channel_and_both_nodes() -> None:
    app = parallel({"left": lambda s: {"approved": True}, "right": lambda s: {"approved": False}})
    with pytest.raises(InvalidUpdateError) as err:
        app.invoke({"text": "x"})
    message = str(err.value)
    assert "nodes 'left' and 'right' both wrote 'approved' in the same step" in message
    assert "has no reducer" in message


def test_concurrent_writes_to_an_append_channel_merge_in_node_order() -> None:
    app = parallel({
        "left": lambda s: {"log": "left"},
        "middle": lambda s: {"log": ["m1", "m2"]},
        "right": lambda s: {"log": None},
    })
    assert app.invoke({"text": "x", "log": ["start"]}).state.log == ["start", "left", "m1", "m2"]


def test_concurrent_writes_to_different_fields_are_fine() -> None:
    app = parallel({"left": lambda s: {"approved": True}, "right": lambda s: {"score": 3}})
    state = app.invoke({"text": "x"}).state
    assert (state.approved, state.score) == (True, 3)


def test_custom_reducer_merges_concurrent_writes() -> None:
    def total(current: int, new: int) -> int:
        return current + new

    class Counter(BaseModel):
        n: Annotated[int, total] = 0

    app = parallel({"a": lambda s: {"n": 2}, "b": lambda s: {"n": 5}}, schema=Counter)
    assert app.invoke({"n": 1}).state.n == 8


def test_append_reducer_function() -> None:
    assert append(None, "a") == ["a"]
    assert append(["a"], ["b", "c"]) == ["a", "b", "c"]
    assert append(["a"], ("b",)) == ["a", "b"]
    assert append(["a"], None) == ["a"]


# -- input ------------------------------------------------------------------------------------------


def test_input_may_be_a_dict_or_a_model() -> None:
    app = linear(("a", lambda s: None))
    assert app.invoke({"text": "d"}).state.text == "d"
    assert app.invoke(Ticket(text="m")).state.text == "m"


def test_input_that_does_not_fit_the_schema() -> None:
    app = linear(("a", lambda s: None))
    with pytest.raises(ValidationError, match=r"1 validation error for Ticket\ntext\n  Field required"):
        app.invoke({"log": []})  # text is required: pydantic's error, as LangGraph raises it
    with pytest.raises(TypeError, match=r"input must be a dict or a Ticket, got str"):
        app.invoke("just text")


KNOWN = r"; Strict forbids extra fields and has \['approved', 'log', 'score', 'text'\]"


def test_an_unknown_input_field_is_refused_on_a_new_thread_and_nothing_is_stored(tmp_path, disk_snapshot) -> None:
    app = linear(("a", lambda s: None), checkpointer=FileCheckpointer(tmp_path), schema=Strict)
    app.invoke({"text": "x"}, thread_id="other")  # the store exists and holds something
    before = disk_snapshot(tmp_path)

    with pytest.raises(InvalidUpdateError, match=r"^the input has unknown channel\(s\) \['colour'\]" + KNOWN + "$"):
        app.invoke({"text": "x", "colour": "red"}, thread_id="new")

    assert disk_snapshot(tmp_path) == before
    assert app.get_state("new") is None


def test_an_unknown_input_field_is_refused_on_an_existing_thread_and_nothing_is_stored(tmp_path,
                                                                                       disk_snapshot) -> None:
    app = linear(("a", lambda s: None), checkpointer=FileCheckpointer(tmp_path), schema=Strict)
    app.invoke({"text": "x"}, thread_id="t")
    before = disk_snapshot(tmp_path)

    with pytest.raises(InvalidUpdateError, match=r"^the input has unknown channel\(s\) \['colour', 'size'\]" + KNOWN):
        app.invoke({"colour": "red", "log": ["y"], "size": 2}, thread_id="t")

    assert disk_snapshot(tmp_path) == before


def test_a_model_of_another_class_as_input_gives_the_fields_the_state_has() -> None:
    class Wider(BaseModel):
        text: str
        colour: str

    assert linear(("a", lambda s: None)).invoke(Wider(text="x", colour="red")).state == Ticket(text="x")
    with pytest.raises(InvalidUpdateError, match=r"the input has unknown channel\(s\) \['colour'\]"):
        linear(("a", lambda s: None), schema=Strict).invoke(Wider(text="x", colour="red"))


def test_a_field_may_be_given_under_its_alias_in_a_new_thread_s_input() -> None:
    class Aliased(BaseModel):
        text: str = Field(alias="body")

    assert linear(("a", lambda s: None), schema=Aliased).invoke({"body": "x"}).state.text == "x"


def test_new_input_on_a_completed_thread_starts_from_start_on_the_current_state() -> None:
    calls: list[str] = []

    def first(state: Ticket) -> dict[str, Any]:
        calls.append("first")
        return {"log": f"first saw {len(state.log)}", "score": state.score + 1}

    app = linear(("first", first), checkpointer=MemoryCheckpointer())
    app.invoke({"text": "hello", "log": ["user: hi"]}, thread_id="chat")
    result = app.invoke({"log": ["user: again"]}, thread_id="chat")
    assert calls == ["first", "first"]
    assert result.stop_reason == "end"
    # the new input went through the append reducer onto the stored state, unset fields kept
    assert result.state == Ticket(text="hello", log=["user: hi", "first saw 1", "user: again", "first saw 3"],
                                  score=2)
    # a model as input merges only the fields it sets
    result = app.invoke(Ticket(text="changed"), thread_id="chat")
    assert result.state.text == "changed"
    assert result.state.log[-1] == "first saw 4"
    assert result.state.score == 3


def test_new_input_on_an_existing_thread_is_validated() -> None:
    app = linear(("a", lambda s: None), checkpointer=MemoryCheckpointer())
    app.invoke({"text": "x"}, thread_id="t")
    assert app.invoke({"nope": 1, "score": 1}, thread_id="t").state == Ticket(text="x", score=1)  # "nope" dropped
    with pytest.raises(InvalidUpdateError, match=r"^the input wrote an invalid value to 'score'"):
        app.invoke({"score": -3}, thread_id="t")


class Shadowed(BaseModel):
    log: list[str] = []


def test_a_node_annotated_with_a_class_that_only_shares_the_state_s_name_reads_the_state() -> None:
    """Under ``from __future__ import annotations`` a node's annotation is resolved in its module, where the
    name may be another class: the node must still get the graph's own state, not that class's view."""

    def make() -> Any:
        class Shadowed(BaseModel):  # the graph's state, shadowing the module's class of the same name
            n: int = 0

        def inc(state: Shadowed) -> dict[str, Any]:
            return {"n": state.n + 1}

        return linear(("inc", inc), schema=Shadowed)

    assert make().invoke({"n": 1})["n"] == 2
