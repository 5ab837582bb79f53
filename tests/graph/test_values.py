"""Values JSON cannot hold, in a StateGraph's state, Send arguments and answers: stored as tagged JSON and
read back as they were, in another process; anything else refused where it is written, naming the node
and the channel, with the thread failed (``statehitl.values``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, TypedDict

import pytest
from values_app import VALUES, Kept, check, graph

from statehitl.checkpoint import Checkpointer
from statehitl.errors import NestingTooDeepError, ValueNotStorableError
from statehitl.graph import END, START, StateGraph
from statehitl.types import Command
from statehitl.values import TAG, decode_value, register

HERE = Path(__file__).resolve().parent


def read_elsewhere(store: str, thread: str) -> str:
    """What another process reads of the thread (``values_app.py``)."""
    code = f"import values_app; values_app.main({store!r}, {thread!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=HERE)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_state_sends_and_answers_round_trip_in_another_process(tmp_path: Path) -> None:
    store = f"file://{tmp_path}"
    app = graph().compile(checkpointer=Checkpointer.from_url(store))
    cfg = {"configurable": {"thread_id": "v"}}
    app.invoke({}, cfg)
    assert check(app.get_state(cfg).values) == []
    assert read_elsewhere(store, "v") == "False []"  # written here, read there: every value as it was
    app.invoke(Command(resume={"at": VALUES["naive"], "ids": frozenset({1})}), cfg)
    assert check(app.get_state(cfg).values) == []
    assert read_elsewhere(store, "v") == "True []"
    [wrote] = [h.writes["write"] for h in app.get_state_history(cfg) if "write" in h.writes]
    assert wrote["anything"]["dt"] == VALUES["dt"]  # the history shows the writes as the node wrote them


def test_the_records_stay_json(tmp_path: Path) -> None:
    app = graph().compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}", compress=False))
    app.invoke({}, {"configurable": {"thread_id": "j"}})
    log = (tmp_path / "threads" / "j~log").read_text()
    assert '{"$t":"bytes","v":"/wAgbm90IHV0Zi04"}' in log
    assert '{"$t":"datetime","v":"2024-01-02T03:04:05.000006+02:00"}' in log


class Loose(TypedDict, total=False):
    anything: Any
    after: int


def _writes(value: Any) -> Any:
    def node(state: Loose) -> dict[str, Any]:
        return {"anything": value}

    g = StateGraph(Loose)
    g.add_node("put", node)
    g.add_node("after", lambda s: {"after": 1})
    g.add_edge(START, "put")
    g.add_edge("put", "after")
    g.add_edge("after", END)
    return g


@pytest.mark.parametrize(("value", "error", "what"), [
    (object(), ValueNotStorableError, "it holds a builtins.object"),
    ({"k": [Kept("x")]}, ValueNotStorableError, r"at \$.k\[0\] it holds a values_app.Kept"),
    (open, ValueNotStorableError, "builtins.builtin_function_or_method"),
])
def test_a_value_it_cannot_store_fails_the_step_naming_node_and_channel(tmp_path: Path, value: Any,
                                                                       error: type[Exception], what: str) -> None:
    app = _writes(value).compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    with pytest.raises(error, match=rf"node 'put' wrote to channel 'anything' a value that cannot be stored: "
                                    rf".*{what}"):
        app.invoke({}, {"configurable": {"thread_id": "bad"}})
    other = _writes(value).compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    snapshot = other.get_state({"configurable": {"thread_id": "bad"}})
    assert snapshot.status == "failed"  # not left "executing", and readable by anyone
    assert snapshot.error.node == "put"
    assert snapshot.error.type == error.__name__
    assert "after" not in snapshot.values


def test_a_value_nested_too_deep_is_refused_at_the_write(tmp_path: Path) -> None:
    deep: Any = 1
    for _ in range(210):
        deep = [deep]
    app = _writes(deep).compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    with pytest.raises(NestingTooDeepError, match=r"node 'put' wrote to channel 'anything' .* deeper than 100 levels"):
        app.invoke({}, {"configurable": {"thread_id": "deep"}})
    other = _writes(deep).compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    assert other.get_state({"configurable": {"thread_id": "deep"}}).status == "failed"


def test_a_class_of_the_users_own_is_stored_once_registered(tmp_path: Path) -> None:
    import dataclasses

    @dataclasses.dataclass
    class Mine:
        name: str

    app = _writes({"mine": Mine("x")}).compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    with pytest.raises(ValueNotStorableError, match=r"register it with statehitl\.values\.register"):
        app.invoke({}, {"configurable": {"thread_id": "r1"}})
    register(Mine, name="tests.Mine")
    app.invoke({}, {"configurable": {"thread_id": "r2"}})
    other = _writes(None).compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    assert other.get_state({"configurable": {"thread_id": "r2"}}).values["anything"] == {"mine": Mine("x")}


def test_a_stored_dict_of_before_tags_reads_as_it_was() -> None:
    """A user's dict that happens to hold the tag key, stored before tags existed, is not taken for one."""
    old = {TAG: "mine", "v": 1, "other": 2}
    assert decode_value(old) == old
    assert decode_value({TAG: "no such tag", "v": [1]}) == {TAG: "no such tag", "v": [1]}
    assert decode_value(json.loads(json.dumps({"plain": [1, "two", None]}))) == {"plain": [1, "two", None]}


# -- the same program on LangGraph -------------------------------------------------------------------

def _values_program(lg: Any, saver: Any, reread: Any) -> list[Any]:
    """Values of the standard types in state, in a Send's argument and in an answer, read back from the
    checkpointer (a tuple, a complex and a pure path are left out: LangGraph gives a tuple back as a list, and
    cannot store the other two; statehitl keeps all three)."""
    values = {k: v for k, v in VALUES.items() if k not in ("tup", "c", "pure")}

    class S(TypedDict, total=False):
        state: Any
        sent: list[Any]
        answer: Any

    def write(state: S) -> dict[str, Any]:
        return {"state": values}

    def take(arg: Any) -> dict[str, Any]:
        return {"sent": [arg]}

    def ask(state: S) -> dict[str, Any]:
        return {"answer": lg.interrupt("when?")}

    g = lg.StateGraph(S)
    g.add_node("write", write)
    g.add_node("take", take)
    g.add_node("ask", ask)
    g.add_edge(lg.START, "write")
    g.add_conditional_edges("write", lambda s: [lg.Send("take", {"at": values["dt"], "ids": values["s"]})],
                            ["take"])
    g.add_edge("take", "ask")
    g.add_edge("ask", lg.END)
    cfg = {"configurable": {"thread_id": "p"}}
    g.compile(checkpointer=saver).invoke({}, cfg)
    g.compile(checkpointer=saver).invoke(lg.Command(resume={"b": values["b"], "dec": values["dec"]}), cfg)
    read = g.compile(checkpointer=reread(saver)).get_state(cfg).values
    return [_typed(read["state"]), _typed(read["sent"]), _typed(read["answer"])]


def _typed(value: Any) -> Any:
    """``value`` with each leaf's type beside it, NaN made comparable."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def test_the_values_program_reads_back_what_it_reads_on_langgraph(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph as LGStateGraph
    from langgraph.types import Command as LGCommand
    from langgraph.types import Send as LGSend
    from langgraph.types import interrupt as lg_interrupt

    from statehitl.graph import END, START, StateGraph
    from statehitl.types import Command, Send, interrupt

    class Names:
        def __init__(self, **names: Any) -> None:
            self.__dict__.update(names)

    langgraph = Names(StateGraph=LGStateGraph, START=LG_START, END=LG_END, Send=LGSend, Command=LGCommand,
                      interrupt=lg_interrupt)
    ours = Names(StateGraph=StateGraph, START=START, END=END, Send=Send, Command=Command, interrupt=interrupt)
    store = f"file://{tmp_path}"
    on_langgraph = _values_program(langgraph, InMemorySaver(), lambda saver: saver)  # it deserializes every read
    on_statehitl = _values_program(ours, Checkpointer.from_url(store),
                                   lambda saver: Checkpointer.from_url(store, compress=True))  # a cold read
    assert on_statehitl == on_langgraph
