"""LangGraph state schemas (TypedDict, dataclass, pydantic, root value) as the engine's pydantic model.

Where the real LangGraph is installed, the same graph is run there and here, node by node: what each
node gets and what ``invoke`` returns must match (absent keys included)."""

from __future__ import annotations

import collections.abc
import dataclasses
import operator
from collections.abc import Callable
from typing import Annotated, Any, NotRequired

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypedDict

from statehitl.channels import StateSchema, append
from statehitl.errors import InvalidUpdateError
from statehitl.graph.state_kinds import ROOT, StateKind, schema_of, state_kind


def concat(current: str, new: str) -> str:
    return f"{current}+{new}"


class Chat(TypedDict):
    question: str
    turns: Annotated[int, operator.add]
    notes: Annotated[list[str], operator.add]
    maybe: Annotated[list[int] | None, operator.add]
    joined: Annotated[Any, concat]
    mood: NotRequired[str]


class Nullable(TypedDict):
    note: str | None


class ChatIn(TypedDict):
    question: str


class ChatOut(TypedDict):
    answer: str


class Full(TypedDict):
    question: str
    answer: str
    notes: Annotated[list[str], operator.add]


class Private(TypedDict):
    secret: str
    question: str


@dataclasses.dataclass
class Order:
    item: str
    qty: int = 1
    tags: list[str] = dataclasses.field(default_factory=lambda: ["new"])
    log: Annotated[list[str], operator.add] = dataclasses.field(default_factory=list)


class Ticket(BaseModel):
    text: str = ""
    log: Annotated[list[str], append] = []
    score: int = Field(default=0, ge=0)

    @field_validator("text")
    @classmethod
    def strip(cls, value: str) -> str:
        return value.strip()


class Draft(BaseModel):
    text: str = "?"


class Opaque:
    """A type pydantic cannot build a schema for."""


class WithOpaque(TypedDict):
    thing: Opaque
    count: Annotated[int, operator.add]


class Conflict(TypedDict):
    question: int
    extra: Annotated[list[str], operator.add]


Step = tuple[str, Callable[[Any], Any]]


def run_here(kind: StateKind, given: Any, steps: list[Step], wants: Any = None) -> tuple[list[Any], Any]:
    """A straight line of nodes through the kind and ``StateSchema``, as the engine runs them."""
    schema = StateSchema(kind.model)
    state = schema.initial(kind.input_of(given))
    seen = []
    for name, node in steps:
        view = kind.node_input(state, wants)
        seen.append(view)
        state = schema.apply(state, [(name, kind.update_of(node(view), name) or {})])
    return seen, kind.values(state)


def run_langgraph(state: Any, given: Any, steps: list[Step], **kw: Any) -> tuple[list[Any], Any]:
    import langgraph.graph as graph_mod  # the oracle: ./dev.sh test installs it
    graph = graph_mod.StateGraph(state, **kw)
    seen: list[Any] = []
    previous = graph_mod.START
    for name, node in steps:
        graph.add_node(name, _recording(node, seen))
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, graph_mod.END)
    return seen, graph.compile().invoke(given)


def _recording(node: Callable[[Any], Any], seen: list[Any]) -> Callable[[Any], Any]:
    def recorded(state: Any) -> Any:
        seen.append(dict(state) if isinstance(state, dict) else state)
        return node(state)

    return recorded


# -- TypedDict ---------------------------------------------------------------------------------------


def test_typeddict_model_keeps_reducers_and_zero_values() -> None:
    kind = state_kind(Chat)
    assert kind.kind == "typeddict"
    assert kind.schema is Chat
    assert list(kind.model.model_fields) == ["question", "turns", "notes", "maybe", "joined", "mood"]
    reducers = StateSchema(kind.model).reducers
    assert set(reducers) == {"turns", "notes", "maybe", "joined"}
    assert reducers["turns"] is operator.add
    assert reducers["notes"] is operator.add
    state = kind.model()
    assert (state.turns, state.notes, state.maybe, state.joined) == (0, [], None, None)  # type: ignore[attr-defined]
    assert kind.node_input(state) == {"turns": 0, "notes": []}  # only what LangGraph shows before any write


def test_operator_add_list_reducer_merges_writes() -> None:
    class Plain(TypedDict):
        items: Annotated[list, operator.add]  # type: ignore[type-arg]

    kind = state_kind(Plain)
    schema = StateSchema(kind.model)
    state = schema.apply(kind.model(), [("a", {"items": [1]})])
    state = schema.apply(state, [("b", {"items": [2]})])
    assert kind.values(state) == {"items": [1, 2]}


def test_a_reducer_without_zero_value_takes_its_first_write_as_is() -> None:
    kind = state_kind(Chat)
    schema = StateSchema(kind.model)
    state = schema.apply(kind.model(), [("a", {"joined": "first", "maybe": [1]})])
    state = schema.apply(state, [("b", {"joined": "second", "maybe": [2]})])
    assert kind.values(state)["joined"] == "first+second"
    assert kind.values(state)["maybe"] == [1, 2]
    assert schema.describe().count("concat") == 1  # the wrapper keeps the reducer's name


def test_typeddict_matches_langgraph_node_inputs_and_result() -> None:
    steps: list[Step] = [("x", lambda s: {"joined": "first"}), ("y", lambda s: {"joined": "second", "maybe": [1]})]
    for given in ({"question": "hi"}, {}):
        here = run_here(state_kind(Chat), given, steps)
        there = run_langgraph(Chat, given, steps)
        assert here == there
    assert here[1] == {"turns": 0, "notes": [], "maybe": [1], "joined": "first+second"}


def test_absent_channels_stay_absent_through_a_checkpoint() -> None:
    kind = state_kind(Chat)
    schema = StateSchema(kind.model)
    state = schema.apply(schema.initial({"question": "q"}), [("a", {"turns": 2})])
    dumped = schema.dump_values(state)
    # notes (a list that operator.add extends) is stored as the pieces steps add, apart from the other channels
    assert schema.append_channels == {"notes"}
    assert dumped == {"question": "q", "turns": 2}
    assert schema.dump_items(state, "notes", 0) == []
    assert kind.node_input(schema.load({**dumped, "notes": []})) == {"question": "q", "turns": 2, "notes": []}


def test_a_channel_written_none_is_present() -> None:
    kind = state_kind(Nullable)
    state = StateSchema(kind.model).apply(kind.model(), [("a", {"note": None})])
    assert kind.node_input(state) == {"note": None}
    assert kind.node_input(kind.model()) == {}


def test_none_for_a_channel_that_does_not_allow_it_is_refused() -> None:
    """A documented deviation: LangGraph does not validate a TypedDict and would store it."""
    kind = state_kind(Chat)
    with pytest.raises(InvalidUpdateError, match="'mood'"):
        StateSchema(kind.model).apply(kind.model(), [("a", {"mood": None})])


# -- dataclass ---------------------------------------------------------------------------------------


def test_dataclass_node_gets_the_dataclass_and_values_only_written_channels() -> None:
    steps: list[Step] = [("x", lambda s: {"item": s.item + "!", "log": [str(s.qty)]})]
    seen, values = run_here(state_kind(Order), {"item": "tea"}, steps)
    assert seen == [Order(item="tea", qty=1, tags=["new"], log=[])]
    assert values == {"item": "tea!", "log": ["1"]}
    assert (seen, values) == run_langgraph(Order, {"item": "tea"}, steps)


def test_dataclass_defaults_are_kept_in_the_model() -> None:
    kind = state_kind(Order)
    fields = kind.model.model_fields
    assert fields["qty"].default == 1
    assert fields["tags"].default_factory is not None
    assert kind.model().tags == ["new"]  # type: ignore[attr-defined]
    assert set(StateSchema(kind.model).reducers) == {"log"}


def test_a_returned_dataclass_writes_all_its_fields() -> None:
    kind = state_kind(Order)
    assert kind.update_of(Order(item="x"), "n") == {"item": "x", "qty": 1, "tags": ["new"], "log": []}


# -- pydantic ----------------------------------------------------------------------------------------


def test_pydantic_without_private_channels_is_the_native_model() -> None:
    kind = state_kind(Ticket, extra=[Ticket, None])
    assert kind.model is Ticket
    state = Ticket(text=" hi ")
    assert kind.node_input(state) is state
    assert kind.node_input(state, Ticket) is state
    assert kind.values(state) == {"text": "hi", "log": [], "score": 0}
    assert kind.update_of(Ticket(score=3), "n") == {"text": "", "log": [], "score": 3}  # defaults too (LangGraph's)
    assert kind.input_of(Ticket(text="a")) == {"text": "a", "log": [], "score": 0}


def test_pydantic_with_private_channels_stores_a_subclass_and_shows_the_user_class() -> None:
    kind = state_kind(Ticket, extra=[Private])
    assert kind.model is not Ticket
    assert issubclass(kind.model, Ticket)
    schema = StateSchema(kind.model)
    assert schema.reducers == {"log": append}
    state = schema.initial(kind.input_of({"text": " a ", "secret": "s"}, kind.input_keys(Private) | {"text"}))
    state = schema.apply(state, [("n", kind.update_of({"log": "x", "question": "q"}, "n") or {})])
    mine = kind.node_input(state)
    assert type(mine) is Ticket
    assert mine == Ticket(text="a", log=["x"])
    assert kind.values(state) == {"text": "a", "log": ["x"], "score": 0}
    assert kind.node_input(state, Private) == {"secret": "s", "question": "q"}
    with pytest.raises(InvalidUpdateError, match="score"):  # the user's constraints still hold
        schema.apply(state, [("n", {"score": -1})])


def test_a_node_annotated_with_another_model_gets_that_model() -> None:
    kind = state_kind(Chat, extra=[Draft])
    state = StateSchema(kind.model).initial({"question": "q"})
    assert kind.node_input(state, Draft) == Draft()  # absent channel: the model's own default
    state = StateSchema(kind.model).apply(state, [("n", {"text": "t"})])
    assert kind.node_input(state, Draft) == Draft(text="t")


# -- root value --------------------------------------------------------------------------------------


def test_root_value_with_reducer() -> None:
    kind = state_kind(Annotated[list, operator.add])
    assert kind.kind == "root"
    assert list(kind.model.model_fields) == [ROOT]
    steps: list[Step] = [("x", lambda s: [2])]
    seen, values = run_here(kind, [1], steps)
    assert (seen, values) == ([[1]], [1, 2])
    assert (seen, values) == run_langgraph(Annotated[list, operator.add], [1], steps)


def test_root_value_without_reducer() -> None:
    kind = state_kind(int)
    steps: list[Step] = [("x", lambda s: s + 1)]
    assert run_here(kind, 1, steps) == run_langgraph(int, 1, steps) == ([1], 2)
    assert kind.update_of(0, "x") == {ROOT: 0}
    assert kind.update_of(None, "x") is None
    assert kind.input_of(5) == {ROOT: 5}


def test_root_value_cannot_take_private_channels() -> None:
    with pytest.raises(TypeError, match="root-value state"):
        state_kind(int, extra=[Private])


# -- private channels, input and output schemas -------------------------------------------------------


def test_private_channels_match_langgraph() -> None:
    def a(s: Any) -> dict[str, Any]:
        return {"secret": "s-" + s["question"], "notes": ["a"]}

    def b(s: Any) -> dict[str, Any]:
        return {"answer": s["secret"]}

    kind = state_kind(Full, extra=[ChatIn, ChatOut, Private])
    assert set(kind.channels) == {"question", "answer", "notes", "secret"}
    schema = StateSchema(kind.model)
    state = schema.initial(kind.input_of({"question": "q"}))
    seen = [kind.node_input(state)]
    state = schema.apply(state, [("a", kind.update_of(a(seen[-1]), "a") or {})])
    seen.append(kind.node_input(state, Private))
    state = schema.apply(state, [("b", kind.update_of(b(seen[-1]), "b") or {})])
    assert seen == [{"question": "q", "notes": []}, {"secret": "s-q", "question": "q"}]
    assert kind.values(state, only=ChatOut) == {"answer": "s-q"}
    assert kind.values(state) == {"question": "q", "answer": "s-q", "notes": ["a"]}  # not the private one
    import langgraph.graph as graph_mod  # the oracle: ./dev.sh test installs it
    graph = graph_mod.StateGraph(Full, input_schema=ChatIn, output_schema=ChatOut)
    there: list[Any] = []
    graph.add_node("a", _recording(a, there))
    graph.add_node("b", _annotated(_recording(b, there)))
    graph.add_edge(graph_mod.START, "a")
    graph.add_edge("a", "b")
    assert graph.compile().invoke({"question": "q"}) == {"answer": "s-q"}
    assert there == seen


def _annotated(node: Callable[[Any], Any]) -> Callable[[Private], Any]:
    def b(s: Private) -> Any:
        return node(s)

    return b


def test_the_state_schema_wins_a_conflicting_annotation() -> None:
    kind = state_kind(Chat, extra=[Conflict])
    assert kind.model.model_fields["question"].annotation is str
    assert set(StateSchema(kind.model).reducers) >= {"extra"}


def test_a_view_of_an_undeclared_schema_is_refused() -> None:
    kind = state_kind(Chat)
    with pytest.raises(ValueError, match=r"\['secret'\].*extra="):
        kind.node_input(kind.model(), Private)


# -- updates and inputs ------------------------------------------------------------------------------


def test_unknown_update_keys_are_dropped_as_langgraph_drops_them() -> None:
    kind = state_kind(Chat)
    assert kind.update_of({"question": "q", "nope": 1}, "n") == {"question": "q"}
    update = {"question": "q"}
    assert kind.update_of(update, "n") is update  # nothing to drop: the update itself


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = ""


def test_a_pydantic_state_that_forbids_extras_refuses_unknown_keys_with_who_and_the_channels() -> None:
    kind = state_kind(Closed)
    with pytest.raises(InvalidUpdateError, match=r"node 'n' wrote unknown channel\(s\) \['nope'\]; Closed forbids "
                       r"extra fields and has \['text'\]"):
        kind.update_of({"text": "q", "nope": 1}, "n")
    with pytest.raises(InvalidUpdateError, match=r"^the input has unknown channel\(s\) \['junk'\]"):
        kind.input_of({"junk": 1})


def test_a_return_value_that_is_no_update_is_refused() -> None:
    kind = state_kind(Chat)
    with pytest.raises(InvalidUpdateError, match="node 'x' returned int 5; return a dict of channel updates, a Chat"):
        kind.update_of(5, "x")
    with pytest.raises(InvalidUpdateError, match=r"^node 'x' returned"):  # the phrase, when given, is kept
        kind.update_of(5, "node 'x'")
    assert kind.update_of({"junk": 1}, "input") == {}


def test_input_keeps_the_keys_of_the_input_schema_and_drops_others() -> None:
    kind = state_kind(Chat, extra=[Private])
    assert kind.input_of({"secret": "s", "turns": 1}, kind.input_keys(Private)) == {"secret": "s"}
    assert kind.input_of({"secret": "s", "question": "q"}) == {"question": "q"}  # the state schema's keys
    assert kind.input_of(None) == {}
    assert kind.input_of({"question": "q", "junk": 1}) == {"question": "q"}
    with pytest.raises(InvalidUpdateError, match="the input is str 'q'; give a dict of channel values or a Chat"):
        kind.input_of("q")


def test_values_are_validated_in_lax_mode() -> None:
    kind = state_kind(Order)
    schema = StateSchema(kind.model)
    state = schema.apply(kind.model(), [("n", {"qty": "2"})])
    assert kind.values(state) == {"qty": 2, "log": []}
    with pytest.raises(InvalidUpdateError, match="node 'n' wrote an invalid value to 'qty'"):
        schema.apply(state, [("n", {"qty": "many"})])


# -- odd schemas -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "zero"),
    [(list, []), (list[str], []), (dict, {}), (int, 0), (collections.abc.Sequence[int], []), (set[str], set())],
)
def test_zero_values_of_reducer_channels(annotation: Any, zero: Any) -> None:
    kind = state_kind(Annotated[annotation, operator.add])
    assert kind.values(kind.model()) == zero


def test_a_type_pydantic_cannot_validate_falls_back_to_any() -> None:
    kind = state_kind(WithOpaque)
    thing = Opaque()
    state = StateSchema(kind.model).apply(kind.model(), [("n", {"thing": thing, "count": 1})])
    assert kind.node_input(state) == {"thing": thing, "count": 1}


def test_a_reducer_with_the_wrong_signature_fails_at_once() -> None:
    class Bad(TypedDict):
        items: Annotated[list[int], lambda only: only]

    with pytest.raises(ValueError, match="takes two arguments"):
        state_kind(Bad)


def test_schema_of_reads_a_node_s_first_annotation() -> None:
    def typed(s: Private) -> None: ...

    def model(s: Draft, config: Any) -> None: ...

    def plain(s: dict[str, Any]) -> None: ...

    assert schema_of(typed) is Private
    assert schema_of(model) is Draft
    assert schema_of(plain) is None
    assert schema_of(lambda s: s) is None
    assert schema_of(print) is None
