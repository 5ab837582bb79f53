"""``statehitl demo`` in-process through ``main([...])``: the run, the prompt, resuming, bad input."""

from __future__ import annotations

import pytest
from cli_support import FakeTTY, Piped, assert_one_line_error, entered, latest

from statehitl import observe
from statehitl.cli.demo import build_graph
from statehitl.cli.observer import TransitionPrinter
from statehitl.cli.refund import APPROVAL
from statehitl.graph import StateGraph

STORE = ".statehitl"


def test_no_wait_stops_at_the_interrupt_and_prints_the_resume_command(cli, workdir):
    done = cli("demo", "--thread", "t1", "--no-wait")

    assert done.code == 0, done.err
    assert done.err == ""
    # the machine comes first, as a text diagram
    assert "The machine (RefundGraph)" in done.out
    assert "assess  ┈┈▶ pay | approve" in done.out
    assert "pay     ──▶ END" in done.out
    # then each transition, in order
    assert entered(done.out) == ["intake", "assess", "approve"]
    assert 'log += "intake: Ada Lovelace asks for $120.00 back: The blender arrived broken."' in done.out
    assert f"⏸ interrupt '{APPROVAL}' from node approve" in done.out
    # the run's first checkpoint (0) is saved after its first node, so the interrupted one is 2
    assert done.out.index("step 0  ▶ intake") < done.out.index("checkpoint 0 saved (executing)")
    assert "checkpoint 2 saved (interrupted)" in done.out
    # and how to answer later, exactly
    assert "Waiting for a human: Approve refund of $120.00 to Ada Lovelace?" in done.out
    assert "statehitl demo --resume t1 --answer y" in done.out
    assert "statehitl demo --resume t1 --answer n" in done.out

    record = latest(workdir / STORE, "t1")
    assert record is not None
    assert record.status == "interrupted"
    assert [i.name for i in record.interrupts] == [APPROVAL]
    assert record.interrupts[0].reason == {
        "customer": "Ada Lovelace",
        "amount": 120.0,
        "request": "The blender arrived broken.",
        "question": "Approve refund of $120.00 to Ada Lovelace?",
    }


@pytest.mark.parametrize(("piped", "decision", "last"), [("y\n", "approved", "pay"), ("No\n", "rejected", "reject"),
                                                       ("\n", "rejected", "reject")])  # a blank line is N, as Enter is
def test_an_answer_piped_on_stdin_answers_a_new_run(cli, workdir, piped, decision, last):
    done = cli("demo", "--thread", "t1", stdin=Piped(piped))

    assert done.code == 0, done.err
    shown = piped.strip() or "(blank line: N)"
    assert f"Approve refund of $120.00 to Ada Lovelace? [y/N] {shown}  (from stdin)" in done.out
    assert entered(done.out) == ["intake", "assess", "approve", "approve", last]
    assert "--resume" not in done.out
    record = latest(workdir / STORE, "t1")
    assert record.status == "completed"
    assert record.values["decision"] == decision


@pytest.mark.parametrize("piped", [""])
def test_a_pipe_without_an_answer_leaves_the_new_run_waiting(cli, workdir, piped):
    done = cli("demo", "--thread", "t1", stdin=Piped(piped))

    assert done.code == 0, done.err
    assert "[y/N]" not in done.out
    assert "statehitl demo --resume t1 --answer y" in done.out
    assert latest(workdir / STORE, "t1").status == "interrupted"


def test_a_bad_answer_piped_into_a_new_run_is_an_error_and_the_thread_waits(cli, workdir):
    done = cli("demo", "--thread", "t1", stdin=Piped("perhaps\n"))

    assert_one_line_error(done, "the answer on stdin must be y or n", "'perhaps'")
    assert latest(workdir / STORE, "t1").status == "interrupted"


def test_no_wait_leaves_a_piped_answer_unread(cli, workdir):
    stdin = Piped("y\n")
    done = cli("demo", "--thread", "t1", "--no-wait", stdin=stdin)

    assert done.code == 0
    assert "statehitl demo --resume t1 --answer y" in done.out
    assert stdin.read() == "y\n"  # left for whoever reads next
    assert latest(workdir / STORE, "t1").status == "interrupted"


def test_a_fresh_thread_id_is_generated_and_quoted_in_the_resume_command(cli, workdir):
    done = cli("demo", "--no-wait")

    thread = next(line.split()[1] for line in done.out.splitlines() if line.strip().startswith("thread "))
    assert thread.startswith("refund-")
    assert f"statehitl demo --resume {thread} --answer y" in done.out
    assert latest(workdir / STORE, thread).status == "interrupted"


@pytest.mark.parametrize(("answer", "decision", "paid", "last"), [
    ("y", "approved", True, "pay"),
    ("YES", "approved", True, "pay"),
    ("n", "rejected", False, "reject"),
])
def test_resume_with_answer_finishes_the_thread(cli, workdir, answer, decision, paid, last):
    cli("demo", "--thread", "t1", "--no-wait")

    done = cli("demo", "--resume", "t1", "--answer", answer)

    assert done.code == 0, done.err
    assert "resuming thread t1" in done.out
    assert f"↳ answer to '{APPROVAL}' at approve" in done.out
    assert entered(done.out) == ["approve", last]
    assert "──▶ END" in done.out
    assert f"decision  {decision}" in done.out
    assert f"paid      {'true' if paid else 'false'}" in done.out
    assert ("Refund of $120.00 paid to Ada Lovelace" in done.out) is paid
    record = latest(workdir / STORE, "t1")
    assert record.status == "completed"
    assert record.values["decision"] == decision
    assert record.values["paid"] is paid
    assert len(record.values["log"]) == 4


def test_terminal_prompt_yes_pays_in_one_go(cli, workdir):
    done = cli("demo", "--thread", "t1", stdin=FakeTTY("y\n"))

    assert done.code == 0, done.err
    assert "Approve refund of $120.00 to Ada Lovelace? [y/N]" in done.out
    assert entered(done.out) == ["intake", "assess", "approve", "approve", "pay"]  # approve re-runs with the answer
    assert "✓ Refund of $120.00 paid to Ada Lovelace (approved)." in done.out
    assert "--resume" not in done.out
    assert latest(workdir / STORE, "t1").values["paid"] is True


def test_terminal_prompt_defaults_to_no(cli, workdir):
    done = cli("demo", "--thread", "t1", stdin=FakeTTY("\n"))

    assert done.code == 0
    assert "✗ Refund of $120.00 to Ada Lovelace rejected." in done.out
    assert latest(workdir / STORE, "t1").values["decision"] == "rejected"


def test_terminal_prompt_asks_again_after_a_bad_answer(cli, workdir):
    done = cli("demo", "--thread", "t1", stdin=FakeTTY("maybe\nyes\n"))

    assert done.code == 0
    assert "Please answer y or n." in done.out
    assert done.out.count("[y/N]") == 2
    assert latest(workdir / STORE, "t1").values["decision"] == "approved"


def test_end_of_input_at_the_prompt_leaves_the_thread_waiting(cli, workdir):
    done = cli("demo", "--thread", "t1", stdin=FakeTTY(""))

    assert done.code == 0
    assert "[y/N]" in done.out
    assert "statehitl demo --resume t1 --answer y" in done.out
    assert latest(workdir / STORE, "t1").status == "interrupted"


def test_no_wait_beats_a_terminal(cli, workdir):
    done = cli("demo", "--thread", "t1", "--no-wait", stdin=FakeTTY("y\n"))

    assert "[y/N]" not in done.out
    assert latest(workdir / STORE, "t1").status == "interrupted"


def test_resume_reads_the_answer_from_piped_stdin(cli, workdir):
    cli("demo", "--thread", "t1", "--no-wait")

    done = cli("demo", "--resume", "t1", stdin=Piped("y\n"))

    assert done.code == 0, done.err
    assert latest(workdir / STORE, "t1").values["paid"] is True


def test_resume_asks_on_a_terminal(cli, workdir):
    cli("demo", "--thread", "t1", "--no-wait")

    done = cli("demo", "--resume", "t1", stdin=FakeTTY("n\n"))

    assert "Approve refund of $120.00 to Ada Lovelace? [y/N]" in done.out
    assert latest(workdir / STORE, "t1").values["decision"] == "rejected"


def test_resume_with_no_wait_and_no_answer_only_repeats_the_instructions(cli, workdir):
    cli("demo", "--thread", "t1", "--no-wait")

    done = cli("demo", "--resume", "t1", "--no-wait", stdin=FakeTTY("y\n"))

    assert done.code == 0
    assert "[y/N]" not in done.out
    assert "statehitl demo --resume t1 --answer y" in done.out
    assert latest(workdir / STORE, "t1").status == "interrupted"


def test_small_amounts_are_auto_approved_without_asking(cli, workdir):
    done = cli("demo", "--thread", "t1", "--amount", "20", "--customer", "Grace", "--request", "Too small")

    assert done.code == 0
    assert "⏸" not in done.out
    assert entered(done.out) == ["intake", "assess", "pay"]
    assert "✓ Refund of $20.00 paid to Grace (auto-approved)." in done.out
    record = latest(workdir / STORE, "t1")
    assert record.values["decision"] == "auto-approved"
    assert record.values["request"] == "Too small"


def test_another_store_url_is_used_and_named_in_the_resume_command(cli, workdir):
    done = cli("demo", "--thread", "t1", "--no-wait", "--store", "file://elsewhere")

    assert "statehitl demo --resume t1 --answer y --store file://elsewhere" in done.out
    assert latest(workdir / "elsewhere", "t1").status == "interrupted"
    assert not (workdir / STORE).exists()
    assert cli("demo", "--resume", "t1", "--answer", "y", "--store", "file://elsewhere").code == 0
    assert latest(workdir / "elsewhere", "t1").values["paid"] is True


def test_memory_store_warns_that_it_will_not_outlive_the_process(cli):
    done = cli("demo", "--thread", "t1", "--no-wait", "--store", "memory://cli-demo-warning")

    assert "memory:// store ends with this process" in done.out


def test_the_printer_is_detached_after_the_run(cli):
    cli("demo", "--thread", "t1", "--no-wait")
    cli("demo", "--resume", "t1", "--answer", "y")

    assert not any(isinstance(o, TransitionPrinter) for o in observe.observers)


def test_the_recorder_sees_the_same_run(cli, transition_recorder):
    cli("demo", "--thread", "t1", "--no-wait")
    cli("demo", "--resume", "t1", "--answer", "y")

    entered = [line for line in transition_recorder.log if line.startswith("enter ")]
    assert entered == [
        "enter intake (step 0)",
        "enter assess (step 1)",
        "enter approve (step 2)",
        "enter approve (step 2)",
        "enter pay (step 3)",
    ]


# -- bad input: exit 2, one line on stderr ---------------------------------------------------------


def test_resume_of_an_unknown_thread(cli):
    assert_one_line_error(cli("demo", "--resume", "nope", "--answer", "y"), "unknown thread 'nope'",
                          "statehitl threads list")


def test_a_bad_answer_changes_nothing(cli, workdir):
    cli("demo", "--thread", "t1", "--no-wait")
    before = latest(workdir / STORE, "t1")

    assert_one_line_error(cli("demo", "--resume", "t1", "--answer", "maybe"), "--answer must be y or n",
                          "'maybe'")
    assert latest(workdir / STORE, "t1") == before


def test_a_bad_piped_answer(cli):
    cli("demo", "--thread", "t1", "--no-wait")

    assert_one_line_error(cli("demo", "--resume", "t1", stdin=Piped("perhaps\n")), "y or n", "'perhaps'")


def test_no_answer_at_all_when_stdin_is_empty(cli):
    cli("demo", "--thread", "t1", "--no-wait")

    assert_one_line_error(cli("demo", "--resume", "t1", stdin=Piped("")), "no answer", "--answer y|n")


def test_a_store_url_with_no_backend(cli):
    assert_one_line_error(cli("demo", "--no-wait", "--store", "ftp://host/x"), "ftp://")


def test_answer_without_resume(cli):
    assert_one_line_error(cli("demo", "--answer", "y"), "--answer goes with --resume")


def test_resume_with_new_run_options(cli):
    assert_one_line_error(cli("demo", "--resume", "t1", "--answer", "y", "--amount", "5"), "--amount")


def test_resuming_a_finished_thread(cli):
    cli("demo", "--thread", "t1", "--amount", "5")

    assert_one_line_error(cli("demo", "--resume", "t1", "--answer", "y"), "not waiting for an answer",
                          "completed")


def test_starting_over_an_existing_thread(cli):
    cli("demo", "--thread", "t1", "--no-wait")

    assert_one_line_error(cli("demo", "--thread", "t1"), "already exists",
                          "statehitl demo --resume t1 --answer y")
    cli("demo", "--resume", "t1", "--answer", "n")
    assert_one_line_error(cli("demo", "--thread", "t1"), "already exists", "statehitl threads delete t1")


def test_a_thread_id_that_would_escape_the_store(cli, workdir):
    assert_one_line_error(cli("demo", "--thread", "../evil", "--no-wait"), "'../evil'")
    assert not (workdir / STORE).exists()


@pytest.mark.parametrize("amount", ["-5", "0", "nan", "lots"])
def test_a_bad_amount(cli, amount):
    assert_one_line_error(cli("demo", "--amount", amount), "--amount")


def test_a_thread_of_another_machine_is_not_resumed(cli, workdir):
    from pydantic import BaseModel

    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import END, START

    class Other(BaseModel):
        n: int = 0

    def ask(state: Other, ctx) -> dict:
        return {"n": ctx.interrupt(APPROVAL, reason={"amount": 1})}

    graph = StateGraph(Other)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    graph.compile(checkpointer=FileCheckpointer(workdir / STORE)).invoke({}, thread_id="other")

    assert_one_line_error(cli("demo", "--resume", "other", "--answer", "y"), "OtherGraph")
    assert_one_line_error(cli("demo", "--thread", "other"), "already exists")
    assert latest(workdir / STORE, "other").status == "interrupted"


def test_unknown_options_are_one_line_too(cli):
    assert_one_line_error(cli("demo", "--bogus"), "--bogus", "statehitl --help")


def test_build_graph_is_the_demo_machine():
    app = build_graph().compile()
    assert list(app.machine.nodes) == ["intake", "assess", "approve", "pay", "reject"]


def test_hints_name_the_command_the_user_has(cli, workdir, monkeypatch):
    monkeypatch.setenv("STATEHITL_COMMAND", "./dev.sh cli")  # what ./dev.sh demo sets: statehitl is not on PATH

    done = cli("demo", "--thread", "t1", "--no-wait")

    assert "./dev.sh cli demo --resume t1 --answer y" in done.out
