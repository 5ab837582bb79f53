"""What statehitl keeps for functional-API workflows that LangGraph lacks: the answer to an ``interrupt()`` in
an entrypoint or a task is bound, audited and applied once across processes; a finished task does not run
again in another process; values that cannot be stored are refused, naming the task, with the thread unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from statehitl.checkpoint import FileCheckpointer, InMemorySaver
from statehitl.errors import (
    AlreadyAnsweredError,
    CheckpointConflict,
    GraphValidationError,
    NotInterruptedError,
    NotJSONError,
)
from statehitl.func import Workflow, entrypoint, task
from statehitl.types import Command, interrupt


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def payment(store: Any, paid: list[str]) -> Workflow:
    @task
    def quote(amount: int) -> dict[str, int]:
        return {"amount": amount, "fee": 1}

    @task
    def pay(bill: dict[str, int]) -> str:
        paid.append(f"paid {bill['amount'] + bill['fee']}")
        return "paid"

    @entrypoint(checkpointer=store)
    def checkout(amount: int) -> str:
        bill = quote(amount).result()
        if interrupt({"pay": bill}) != "yes":
            return "cancelled"
        return str(pay(bill).result())

    return checkout


def test_the_answer_is_audited_and_binds(tmp_path: Path) -> None:
    paid: list[str] = []
    app = payment(FileCheckpointer(tmp_path), paid)
    stopped = app.invoke(41, config("t"))
    (waiting,) = stopped["__interrupt__"]
    assert (waiting.value, waiting.node) == ({"pay": {"amount": 41, "fee": 1}}, "checkout")
    assert payment(FileCheckpointer(tmp_path), paid).invoke(Command(resume="yes"), config("t")) == "paid"
    assert paid == ["paid 42"]
    (row,) = app.audit("t")
    assert (row.interrupt_id, row.response, row.via) == (waiting.id, "yes", "app")
    with pytest.raises(NotInterruptedError):  # a late second answer
        app.invoke(Command(resume="no"), config("t"))
    assert paid == ["paid 42"]


def test_two_processes_racing_to_resume_pay_once(tmp_path: Path) -> None:
    paid: list[str] = []
    first, second = payment(FileCheckpointer(tmp_path), paid), payment(FileCheckpointer(tmp_path), paid)
    first.invoke(10, config("race"))
    assert second.get_state(config("race")).next == ("checkout",)
    assert first.invoke(Command(resume="yes"), config("race")) == "paid"
    with pytest.raises((AlreadyAnsweredError, CheckpointConflict, NotInterruptedError)):
        second.invoke(Command(resume="no"), config("race"))
    assert paid == ["paid 11"]
    assert [r.response for r in first.audit("race")] == ["yes"]


def test_a_task_result_that_cannot_be_stored_is_refused_naming_the_task_and_the_thread_is_unchanged() -> None:
    @task
    def load(x: int) -> Any:
        return {"when": object()} if x else {"ok": True}

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(x: int) -> Any:
        return load(x).result()

    assert workflow.invoke(0, config("j")) == {"ok": True}
    before = workflow.get_state(config("j"))
    with pytest.raises(NotJSONError, match=r"task 'load'.*holds a builtins.object"):
        workflow.invoke(1, config("j"))
    after = workflow.get_state(config("j"))
    assert after.values == before.values == {"ok": True}


def test_a_return_value_that_cannot_be_stored_is_refused_naming_the_entrypoint() -> None:
    @entrypoint(checkpointer=InMemorySaver())
    def workflow(x: int) -> Any:
        return {"handle": object()}

    with pytest.raises(NotJSONError, match=r"entrypoint 'workflow'.*at \$.handle it holds a builtins.object"):
        workflow.invoke(1, config("r"))


def test_a_task_called_outside_an_entrypoint_is_refused() -> None:
    @task
    def alone() -> int:
        return 1

    with pytest.raises(RuntimeError, match=r"task 'alone' was called outside an entrypoint"):
        alone()


def test_misfits_are_refused_when_the_workflow_is_made() -> None:
    with pytest.raises(GraphValidationError, match="first positional parameter"):
        entrypoint()(lambda **kw: None)
    with pytest.raises(TypeError, match="cache_policy must be a CachePolicy"):
        task(cache_policy=object())(lambda: None)


NEW_PROCESS = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.func import entrypoint, task
    from statehitl.types import Command, interrupt

    store, step = sys.argv[1], sys.argv[2]
    ran = Path(store) / "ran.txt"

    @task
    def draft(topic):
        with ran.open("a") as out:
            out.write("draft\\n")
        return f"essay on {topic}"

    @task
    def review(text):
        return f"{text} ({interrupt({'review': text})})"

    @entrypoint(checkpointer=FileCheckpointer(store))
    def write_essay(topic, *, previous=None):
        return {"essay": review(draft(topic).result()).result(), "before": previous}

    config = {"configurable": {"thread_id": "essay"}}
    result = write_essay.invoke(step if step == "cats" else Command(resume=step), config)
    print(json.dumps({k: (v if k != "__interrupt__" else [i.value for i in v]) for k, v in result.items()}))
''')


def test_a_workflow_resumes_in_a_new_process_without_running_finished_tasks_again(tmp_path: Path) -> None:
    script = tmp_path / "essay.py"
    script.write_text(NEW_PROCESS)
    store = tmp_path / "store"
    store.mkdir()

    def run(arg: str) -> Any:
        done = subprocess.run([sys.executable, str(script), str(store), arg], capture_output=True, text=True,
                              check=True)
        return json.loads(done.stdout)

    assert run("cats") == {"__interrupt__": [{"review": "essay on cats"}]}
    assert run("approved") == {"essay": "essay on cats (approved)", "before": None}
    assert (store / "ran.txt").read_text() == "draft\n"


def test_a_task_asking_after_a_kept_task_that_called_tasks_gets_its_answer() -> None:
    """The calls a finished task made are not made again on the resume: the tasks after it keep their keys, so
    the one that asked is matched to its answer (and its interrupt keeps its id)."""
    ran: list[str] = []

    @task
    def leaf(x: int) -> int:
        ran.append("leaf")
        return x + 1

    @task
    def branch(x: int) -> int:
        ran.append("branch")
        return int(leaf(x).result()) + int(leaf(x + 1).result())

    @task
    def ask(x: int) -> Any:
        ran.append("ask")
        return interrupt({"x": x})

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(x: int) -> Any:
        return [ask(branch(x).result()).result(), leaf(0).result()]

    (asked,) = workflow.invoke(1, config("k"))["__interrupt__"]
    assert asked.value == {"x": 5}
    assert workflow.get_state(config("k")).interrupts[0].id == asked.id
    assert workflow.invoke(Command(resume="fine"), config("k")) == ["fine", 1]
    assert ran == ["branch", "leaf", "leaf", "ask", "ask", "leaf"]


def test_an_input_that_cannot_be_stored_is_refused_naming_the_entrypoint_and_nothing_is_stored() -> None:
    ran: list[Any] = []

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(x: Any) -> Any:
        ran.append(x)
        return "ok"

    with pytest.raises(NotJSONError, match=r"entrypoint 'workflow''s input.*holds a builtins.object"):
        workflow.invoke(object(), config("in"))
    assert ran == []
    assert workflow.get_state(config("in")).values == {}  # LangGraph's snapshot of a thread never run


def test_the_inbox_answers_a_task_s_interrupt_and_the_next_call_applies_it(tmp_path: Path) -> None:
    """Any door answers a workflow's interrupt: the inbox lists the one a task asked, stores the answer, and
    ``invoke(None)`` in another process applies it without running the finished task again."""
    from statehitl import inbox

    paid: list[str] = []

    def refunds(store: Any) -> Workflow:
        @task
        def quote(order: str) -> int:
            paid.append(f"quoted {order}")
            return 42

        @task
        def approve(amount: int) -> Any:
            return interrupt({"refund": amount})

        @entrypoint(checkpointer=store)
        def refund(order: str) -> str:
            amount = quote(order).result()
            return f"{approve(amount).result()}: {amount}"

        return refund

    (waiting,) = refunds(FileCheckpointer(tmp_path)).invoke("o-1", config("inbox"))["__interrupt__"]
    (listed,) = inbox.pending(FileCheckpointer(tmp_path))
    assert (listed.id, listed.reason) == (waiting.id, {"refund": 42})
    inbox.answer(FileCheckpointer(tmp_path), waiting.id, "approved", responder="ann")
    assert refunds(FileCheckpointer(tmp_path)).invoke(None, config("inbox")) == "approved: 42"
    assert paid == ["quoted o-1"]
    (row,) = refunds(FileCheckpointer(tmp_path)).audit("inbox")
    assert (row.response, row.responder, row.via) == ("approved", "ann", "inbox")


def test_many_tasks_each_waiting_on_a_task_of_its_own_all_finish() -> None:
    """More tasks than a core-sized pool has workers, each blocked on a task it called: none starves."""

    @task
    def leaf(x: int) -> int:
        return x * 2

    @task
    def branch(x: int) -> int:
        return int(leaf(x).result()) + 1

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(n: int) -> list[int]:
        futures = [branch(i) for i in range(n)]
        return [f.result() for f in futures]

    assert workflow.invoke(20, config("wide")) == [2 * i + 1 for i in range(20)]
