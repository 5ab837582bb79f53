"""statehitl's promises for ``create_react_agent(approve_tools=...)``: one typed question per tool call, bound to its
digest, one binding answer whichever door it came through, and an approved call run exactly once, with its
idempotency key, even when several processes race to resume it."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

import statehitl.inbox
from statehitl.checkpoint import FileCheckpointer
from statehitl.errors import (
    AlreadyAnsweredError,
    DigestMismatchError,
    InterruptOutsideRunError,
    ResponseValidationError,
)
from statehitl.prebuilt import APPROVAL_INTERRUPT, InjectedIdempotencyKey, ToolNode, create_react_agent
from statehitl.types import Command

sys.path.insert(0, str(Path(__file__).parents[1]))
from resume_processes import _race


class FakeModel(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


RAN: list[tuple[int, str, str]] = []


@tool
def pay(cents: int, to: str, key: Annotated[str, InjectedIdempotencyKey]) -> str:
    """Pay someone."""
    RAN.append((cents, to, key))
    return f"paid {cents} to {to}"


@tool
def look(q: str) -> str:
    """Look something up."""
    return f"saw {q}"


def agent(store: Path, version: str = "v2") -> Any:
    replies = [AIMessage(content="", id="ai-1", tool_calls=[
        {"name": "pay", "args": {"cents": 500, "to": "acme"}, "id": "c1"},
        {"name": "pay", "args": {"cents": 700, "to": "bolt"}, "id": "c2"},
        {"name": "look", "args": {"q": "balance"}, "id": "c3"}]), AIMessage(content="done", id="ai-2")]
    return create_react_agent(FakeModel(responses=replies), [pay, look], approve_tools=["pay"],
                              checkpointer=FileCheckpointer(store), version=version)


CONFIG = {"configurable": {"thread_id": "t"}}


def start(store: Path, version: str = "v2") -> tuple[Any, list[Any]]:
    RAN.clear()
    app = agent(store, version)
    result = app.invoke({"messages": [HumanMessage("pay them", id="h1")]}, CONFIG)
    return app, result["__interrupt__"]


def test_one_typed_digest_bound_question_per_listed_call(tmp_path: Path) -> None:
    app, asked = start(tmp_path)
    assert [(i.name, i.reason) for i in asked] == [
        (APPROVAL_INTERRUPT, {"tool": "pay", "args": {"cents": 500, "to": "acme"}, "id": "c1"}),
        (APPROVAL_INTERRUPT, {"tool": "pay", "args": {"cents": 700, "to": "bolt"}, "id": "c2"})]
    assert all(i.digest and i.digest.startswith("sha256:") for i in asked)
    assert asked[0].digest != asked[1].digest
    assert asked[0].response_schema["$defs"]["Edit"]["properties"]["input"]["required"] == ["cents", "to"]
    assert RAN == []
    assert app.get_state(CONFIG).next == ("tools", "tools")  # version "v2": each call a task of its own
    result = app.invoke(Command(resume={asked[0].id: {"type": "approve"},
                                        asked[1].id: {"type": "edit", "input": {"cents": 100, "to": "bolt"}}}), CONFIG)
    tools = [(m.content, m.tool_call_id, m.status) for m in result["messages"] if m.type == "tool"]
    assert tools == [("paid 500 to acme", "c1", "success"), ("paid 100 to bolt", "c2", "success"),
                     ("saw balance", "c3", "success")]
    assert sorted(r[:2] for r in RAN) == [(100, "bolt"), (500, "acme")]
    keys = {r[2] for r in RAN}
    assert len(keys) == 2
    assert all(k.startswith("statehitl-") for k in keys)
    audit = [(e.outcome, e.name) for e in app.audit("t")]
    assert audit == [("applied", APPROVAL_INTERRUPT), ("edited", APPROVAL_INTERRUPT)]


def test_reject_returns_the_reason_to_the_model(tmp_path: Path) -> None:
    app, asked = start(tmp_path)
    result = app.invoke(Command(resume={asked[0].id: {"type": "reject", "message": "not this vendor"},
                                        asked[1].id: {"type": "approve"}}), CONFIG)
    tools = [(m.content, m.status) for m in result["messages"] if m.type == "tool"]
    assert tools == [("not this vendor", "error"), ("paid 700 to bolt", "success"), ("saw balance", "success")]
    assert [r[:2] for r in RAN] == [(700, "bolt")]


def test_an_answer_for_another_call_or_a_bad_edit_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    app, asked = start(tmp_path)
    block = {"interruptId": asked[0].id, "response": {"type": "approve"}, "digest": asked[1].digest}
    with pytest.raises(DigestMismatchError):
        app.invoke([{"interruptResponse": block}], thread_id="t")
    with pytest.raises(ResponseValidationError):
        app.invoke(Command(resume={asked[0].id: {"type": "edit", "input": {"cents": "lots"}},
                                   asked[1].id: {"type": "approve"}}), CONFIG)
    assert RAN == []
    assert [i.id for i in app.get_state(CONFIG).interrupts] == [i.id for i in asked]
    app.invoke(Command(resume={asked[0].id: {"type": "approve"}, asked[1].id: {"type": "approve"}}), CONFIG)
    assert len(RAN) == 2


def test_the_inbox_answer_binds_and_a_bare_resume_applies_it(tmp_path: Path) -> None:
    app, asked = start(tmp_path)
    for interrupt in asked:
        statehitl.inbox.answer(str(tmp_path), interrupt.id, {"type": "approve"}, responder="ann")
    with pytest.raises(AlreadyAnsweredError):
        app.invoke(Command(resume={asked[0].id: {"type": "reject"}, asked[1].id: {"type": "approve"}}), CONFIG)
    result = app.invoke(None, CONFIG)  # applies the stored answers
    assert result["messages"][-1].content == "done"
    assert len(RAN) == 2
    assert {e.responder for e in app.audit("t")} == {"ann"}


def test_tool_node_outside_a_run_cannot_wait() -> None:
    node = ToolNode([pay], approve_tools=True)
    with pytest.raises(InterruptOutsideRunError):
        node.invoke({"messages": [AIMessage("", tool_calls=[{"name": "pay", "args": {"cents": 1, "to": "x"},
                                                            "id": "c"}])]})
    with pytest.raises(ValueError, match="not among the tools"):
        ToolNode([pay], approve_tools=["refund"])


RESUMER = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from typing import Annotated
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.errors import CheckpointConflict, NotInterruptedError
    from statehitl.prebuilt import InjectedIdempotencyKey, create_react_agent
    from statehitl.types import Command

    store, ledger, go, ready = sys.argv[1:5]

    class FakeModel(FakeMessagesListChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    @tool
    def pay(cents: int, to: str, key: Annotated[str, InjectedIdempotencyKey]) -> str:
        """Pay someone."""
        with open(ledger, "a") as f:
            f.write(json.dumps([cents, to, key]) + "\\n")
        return f"paid {cents} to {to}"

    asks = AIMessage(content="", id="ai-1",
                     tool_calls=[{"name": "pay", "args": {"cents": 500, "to": "acme"}, "id": "c1"}])
    # each process's fake model replies from the start of its list: the resumer's next reply is the last one
    model = FakeModel(responses=[asks] if ready == "start" else [AIMessage(content="done", id="ai-2")])
    app = create_react_agent(model, [pay], approve_tools=True, checkpointer=FileCheckpointer(store))
    config = {"configurable": {"thread_id": "t"}}
    if ready == "start":
        print(json.dumps([i.id for i in app.invoke({"messages": [("user", "pay acme")]}, config)["__interrupt__"]]))
        sys.exit(0)
    [waiting] = app.get_state(config).interrupts
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.005)
    try:
        result = app.invoke(Command(resume={waiting.id: {"type": "approve"}}), config)
    except (CheckpointConflict, NotInterruptedError) as exc:
        print(f"conflict: {type(exc).__name__}")
        sys.exit(3)
    print(result["messages"][-1].content)
''')


def test_racing_processes_run_the_approved_call_once(tmp_path: Path) -> None:
    import subprocess

    script, store, ledger, go = tmp_path / "resume.py", tmp_path / "store", tmp_path / "ledger.txt", tmp_path / "go"
    script.write_text(RESUMER)
    started = subprocess.run([sys.executable, str(script), str(store), str(ledger), str(go), "start"],
                             capture_output=True, text=True, timeout=120, check=True)
    assert len(json.loads(started.stdout)) == 1
    assert not ledger.exists()
    outcomes = _race([sys.executable, str(script), str(store), str(ledger), str(go)], tmp_path, go, 4)
    codes = sorted(code for _, _, code in outcomes)
    assert codes == [0, 3, 3, 3], [err for _, err, _ in outcomes]
    assert [out.strip() for out, _, code in outcomes if code == 0] == ["done"]
    [line] = ledger.read_text().splitlines()
    cents, to, key = json.loads(line)
    assert (cents, to) == (500, "acme")
    assert key.startswith("statehitl-")


def test_v1_answering_some_calls_runs_nothing_until_all_are_answered(tmp_path: Path) -> None:
    app, asked = start(tmp_path, "v1")  # version "v1": the reply's calls are one task
    assert app.get_state(CONFIG).next == ("tools",)
    result = app.invoke(Command(resume={asked[0].id: {"type": "approve"}}), CONFIG)
    assert [i.id for i in result["__interrupt__"]] == [asked[1].id]  # the first answer is kept, not asked again
    assert RAN == []
    result = app.invoke(Command(resume={asked[1].id: {"type": "approve"}}), CONFIG)
    assert sorted(r[:2] for r in RAN) == [(500, "acme"), (700, "bolt")]  # run in parallel: in either order
    assert result["messages"][-1].content == "done"
    assert [e.outcome for e in app.audit("t")] == ["applied", "applied"]


def test_v2_each_answered_call_runs_once_as_its_own_task(tmp_path: Path) -> None:
    app, asked = start(tmp_path)  # version "v2" (the default): each call is a task, answered and run on its own
    result = app.invoke(Command(resume={asked[0].id: {"type": "approve"}}), CONFIG)
    assert [i.id for i in result["__interrupt__"]] == [asked[1].id]
    assert [r[:2] for r in RAN] == [(500, "acme")]
    result = app.invoke(Command(resume={asked[1].id: {"type": "approve"}}), CONFIG)
    assert [r[:2] for r in RAN] == [(500, "acme"), (700, "bolt")]  # the first call did not run again
    assert result["messages"][-1].content == "done"
    assert [e.outcome for e in app.audit("t")] == ["applied", "applied"]


def test_without_the_extra_the_import_says_what_to_install() -> None:
    import subprocess

    code = ("import sys\nsys.modules['langchain_core'] = None\nimport statehitl\n"
            "try:\n    import statehitl.prebuilt\nexcept ImportError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "statehitl.prebuilt needs langchain-core, the statehitl[langchain] extra" in done.stdout


def test_the_worker_applies_an_approval_answered_in_the_inbox(tmp_path: Path) -> None:
    import importlib.util

    from statehitl.worker import Worker

    path = Path(__file__).parents[2] / "examples" / "langgraph" / "react_approval.py"
    spec = importlib.util.spec_from_file_location("react_approval_for_worker", path)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    def build(thread_id: str) -> Any:
        return example.build(FileCheckpointer(tmp_path))

    config = {"configurable": {"thread_id": "refund-42"}}
    [asked] = build("refund-42").invoke({"messages": [("user", "please refund order 42")]}, config)["__interrupt__"]
    statehitl.inbox.answer(str(tmp_path), asked.id, {"type": "edit", "input": {"order_id": 42, "cents": 900}},
                           responder="ann")
    report = Worker(str(tmp_path), build).run(once=True)
    assert report.counts["resumed"] == 1
    messages = build("refund-42").get_state(config).values["messages"]
    assert messages[-1].content.endswith("refunded 900 cents on order 42")
    audit = build("refund-42").audit("refund-42")
    assert [(e.outcome, e.responder, e.via) for e in audit] == [("edited", "ann", "inbox")]
    assert Worker(str(tmp_path), build).run(once=True).counts["resumed"] == 0  # applied once
