"""Bad resume input: a clear error of the right built-in type, and the stored checkpoint left untouched.

Every case runs on the memory store (compared through the storage API and ``app.history``) and on the
file store (compared byte for byte on disk, hidden files included).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer, FileCheckpointer, MemoryCheckpointer
from statehitl.errors import (
    InterruptResponseError,
    InvalidResponseError,
    NotInterruptedError,
    ResumeInputError,
    UnknownInterruptError,
)
from statehitl.graph import END, START, NodeContext, StateGraph, append
from statehitl.hooks import BeforeNodeCallEvent, HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.resume import is_response_list, parse_responses


class S(BaseModel):
    log: Annotated[list[str], append] = []


def ask(name: str):
    def node(state: S, ctx: NodeContext) -> dict[str, Any]:
        return {"log": f"{name}={ctx.interrupt(f'{name}-q', reason=name)}"}

    return node


def build(checkpointer: Checkpointer, hooks: list[HookRegistry] = ()):
    """Two concurrent nodes that each ask, then ``tail`` that asks again."""
    g = StateGraph(S)
    g.add_node("left", ask("left"))
    g.add_node("right", ask("right"))
    g.add_node("tail", ask("tail"))
    g.add_edge(START, "left")
    g.add_edge(START, "right")
    g.add_edge(["left", "right"], "tail")
    g.add_edge("tail", END)
    return g.compile(checkpointer=checkpointer, hooks=hooks)


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path, disk_snapshot):
    """``(app, snapshot)``: ``snapshot()`` is everything stored, to compare before and after a call."""
    if request.param == "memory":
        checkpointer: Checkpointer = MemoryCheckpointer()
    else:
        checkpointer = FileCheckpointer(tmp_path / "store")
    app = build(checkpointer)

    def snapshot() -> Any:
        async def stored() -> dict[str, bytes]:
            keys = await checkpointer.storage.list("threads/")
            return {key: (await checkpointer.storage.read(key))[0] for key in keys}

        on_disk = disk_snapshot(tmp_path) if request.param == "file" else None
        return asyncio.run(stored()), on_disk, app.history("t")

    return app, snapshot


def response(iid: Any, value: Any = "y") -> dict[str, Any]:
    return {"interruptResponse": {"interruptId": iid, "response": value}}


def interrupted(app: Any) -> list[Interrupt]:
    result = app.invoke({}, thread_id="t")
    assert [i.name for i in result.interrupts] == ["left-q", "right-q"]
    return result.interrupts


BAD_WHILE_INTERRUPTED = {
    "plain dict": (lambda ids: {"log": ["hi"]}, ResumeInputError, TypeError, r"is waiting on interrupts"),
    "model": (lambda ids: S(), ResumeInputError, TypeError, r"resume it with a list like .*not a S"),
    "none": (lambda ids: None, ResumeInputError, TypeError, r"no answer to them is stored"),
    "single dict": (lambda ids: response(ids[0]), ResumeInputError, TypeError, r"not a dict"),
    "plain string": (lambda ids: "y", ResumeInputError, TypeError, r"not a str"),
    "empty list": (lambda ids: [], InvalidResponseError, ValueError, r"the list of interrupt responses is empty"),
    "unknown id": (lambda ids: [response("v1:nope")], UnknownInterruptError, KeyError,
                   r"interrupt id 'v1:nope' \(item 0\) is not pending; pending: 'left-q'"),
    "unknown id after a good one": (lambda ids: [response(ids[0]), response("v1:nope")], UnknownInterruptError,
                                    KeyError, r"'v1:nope' \(item 1\)"),
    "missing response": (lambda ids: [{"interruptResponse": {"interruptId": ids[0]}}], InvalidResponseError,
                         ValueError, r"the response to interrupt 'left-q' .* is missing its 'response'"),
    "missing id": (lambda ids: [{"interruptResponse": {"response": "y"}}], InvalidResponseError, ValueError,
                   r"has no 'interruptId'"),
    "answered twice": (lambda ids: [response(ids[0]), response(ids[0], "n")], InvalidResponseError, ValueError,
                       r"interrupt 'left-q' .* is answered twice"),
    "item not a block": (lambda ids: [response(ids[0]), "y"], ResumeInputError, TypeError,
                         r"item 1 of the resume list is 'y'"),
    "extra key": (lambda ids: [{**response(ids[0]), "extra": 1}], ResumeInputError, TypeError,
                  r"every item must be \{'interruptResponse'"),
    "block not a dict": (lambda ids: [{"interruptResponse": "y"}], ResumeInputError, TypeError,
                         r"interruptResponse must be a dict"),
    "non-JSON response": (lambda ids: [response(ids[0], {"at": object()})], InterruptResponseError, TypeError,
                          r"the response to interrupt 'left-q' (must be JSON-serializable, but|cannot be stored:) "
                          r"at \$\.at it holds (<object object|a builtins.object)"),
}


@pytest.mark.parametrize("case", BAD_WHILE_INTERRUPTED)
def test_bad_input_while_interrupted_is_refused_and_changes_nothing(store, case: str) -> None:
    app, snapshot = store
    pending = interrupted(app)
    make, error, builtin, message = BAD_WHILE_INTERRUPTED[case]
    before = snapshot()
    with pytest.raises(error, match=message) as err:
        app.invoke(make([i.id for i in pending]), thread_id="t")
    assert isinstance(err.value, builtin)
    assert "thread 't'" in str(err.value) or error is InterruptResponseError
    assert snapshot() == before
    # the thread is as good as before: the right answers still resume it
    result = app.invoke([response(i.id, i.name) for i in pending], thread_id="t")
    assert [i.name for i in result.interrupts] == ["tail-q"]
    assert result.state.log == ["left=left-q", "right=right-q"]


def test_answers_to_an_already_resumed_checkpoint_are_refused(store) -> None:
    app, snapshot = store
    pending = interrupted(app)
    stale = [response(i.id) for i in pending]
    app.invoke(stale, thread_id="t")  # now waiting on tail-q
    before = snapshot()
    with pytest.raises(UnknownInterruptError, match=r"is not pending; pending: 'tail-q'"):
        app.invoke(stale, thread_id="t")
    assert snapshot() == before


@pytest.mark.parametrize("state", ["completed", "new", "cancelled"])
def test_responses_to_a_thread_that_is_not_interrupted(store, state: str) -> None:
    app, snapshot = store
    if state == "completed":
        result = app.invoke({}, thread_id="t")
        while result.interrupts:
            result = app.invoke([response(i.id) for i in result.interrupts], thread_id="t")
    elif state == "cancelled":
        cancel_all = HookRegistry()
        cancel_all.add_callback(BeforeNodeCallEvent, lambda e: setattr(e, "cancel_node", True))
        assert build(app.checkpointer, hooks=[cancel_all]).invoke({}, thread_id="t").stop_reason == "cancelled"
    before = snapshot()
    with pytest.raises(NotInterruptedError) as err:
        app.invoke([response("v1:whatever")], thread_id="t")
    assert isinstance(err.value, ValueError)
    expected = {"new": "it has no checkpoint", "completed": "its status is completed",
                "cancelled": "its status is failed"}[state]
    assert f"thread 't' is not waiting on any interrupt ({expected})" in str(err.value)
    assert snapshot() == before


def test_a_list_that_is_not_responses_on_an_idle_thread(store) -> None:
    app, snapshot = store
    with pytest.raises(ResumeInputError, match=r"input is a list but not of interruptResponse blocks"):
        app.invoke(["hello"], thread_id="t")
    assert snapshot()[0] == {}


def test_answers_for_another_position_are_unknown(store) -> None:
    app, _ = store
    pending = interrupted(app)
    other = build(MemoryCheckpointer())
    result = other.invoke({}, thread_id="o")
    result = other.invoke([response(i.id) for i in result.interrupts], thread_id="o")  # at tail-q now
    with pytest.raises(UnknownInterruptError):
        app.invoke([response(result.interrupts[0].id)], thread_id="t")
    assert [i.id for i in app.get_state("t").interrupts] == [i.id for i in pending]


# -- the parser alone -------------------------------------------------------------------------------


def test_parse_responses_returns_id_to_response() -> None:
    pending = [Interrupt("id-a", "a"), Interrupt("id-b", "b")]
    payload = [response("id-b", {"ok": True}), response("id-a", None)]
    assert parse_responses(payload, pending, thread="t") == {"id-b": {"ok": True}, "id-a": None}
    assert parse_responses([response("id-a", 1)], pending, thread="t") == {"id-a": 1}  # answering some is fine


def test_unknown_interrupt_error_reads_without_quotes() -> None:
    with pytest.raises(UnknownInterruptError) as err:
        parse_responses([response("x")], [Interrupt("id-a", "a")], thread="thread 't'")
    assert str(err.value).startswith("thread 't': interrupt id 'x'")


def test_is_response_list() -> None:
    assert is_response_list([response("x")])
    assert is_response_list(["junk", response("x")])
    assert not is_response_list(response("x"))
    assert not is_response_list([])
    assert not is_response_list([{"text": "hi"}])
