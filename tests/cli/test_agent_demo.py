"""``statehitl demo --agent``: the file-cleanup agent stops for a human and resumes in a new process.

Each run is a real ``python -m statehitl.cli`` process in a temp dir; the session is on disk in between.
"""

from __future__ import annotations

import re
import shlex
import sys

import pytest
from cli_support import FakeTTY, assert_one_line_error, entered, latest, run_on_pty

from statehitl import observe
from statehitl.cli.cleanup_agent import APPROVAL, DENIED, TARGETS
from statehitl.cli.observer import TransitionPrinter

pytestmark = pytest.mark.slow

STORE = ".statehitl"
QUESTION = f"Delete 2 files: {', '.join(TARGETS)}?"


def _printed_command(out: str, answer: str) -> list[str]:
    """The resume command the demo printed for ``answer``, as argv."""
    match = re.search(rf"^\s+(statehitl demo --agent --resume \S+ --answer {answer}\b[^#\n]*)", out,
                      flags=re.MULTILINE)
    assert match, out
    return shlex.split(match.group(1))


def _deleted_lines(out: str) -> list[str]:
    """What ``delete_files`` returned, as the demo printed it when the tool ran."""
    return re.findall(r'^\s+(?:↳|<-) (\{"deleted": .*)$', out, flags=re.MULTILINE)


def test_no_wait_stops_at_the_approval_with_the_session_on_disk(proc, tmp_path):
    done = proc("demo", "--agent", "--no-wait")

    assert done.code == 0, done.err
    assert done.err == ""
    # the agent's machine first, drawn like the graph's
    assert "The machine (agent)" in done.out
    assert "model ┈┈▶ tools | END" in done.out
    assert "tools ┈┈▶ model | END" in done.out
    # then each transition: the model asks for both tools in one batch; inspect runs, delete waits
    assert entered(done.out) == ["model", "tools"]
    assert "inspect_files(paths=" in done.out
    assert "tool inspect_files: success" in done.out
    assert '"age_days": 12' in done.out
    assert f"⏸ interrupt '{APPROVAL}' from hook delete_files" in done.out
    assert "tool delete_files" not in done.out
    assert _deleted_lines(done.out) == []
    assert "checkpoint 1 saved (interrupted)" in done.out
    # and how to answer later, exactly
    assert f"Waiting for a human: {QUESTION}" in done.out
    command = _printed_command(done.out, "y")
    session = command[4]
    assert session.startswith("cleanup-")
    assert f"statehitl demo --agent --resume {session} --answer n" in done.out

    record = latest(tmp_path / STORE, session)
    assert record is not None
    assert record.status == "interrupted"
    assert record.machine == "agent"
    assert [i.name for i in record.interrupts] == [APPROVAL]
    assert record.interrupts[0].reason["paths"] == TARGETS
    assert not any((tmp_path / path).exists() for path in TARGETS)


def test_resume_yes_in_a_new_process_runs_delete_and_ends(proc, tmp_path):
    first = proc("demo", "--agent", "--no-wait")
    command = _printed_command(first.out, "y")
    session = command[4]

    second = proc(*command[1:])  # exactly what the first process said to run

    assert second.code == 0, second.err
    assert f"resuming session {session}" in second.out
    assert f"↳ answer to '{APPROVAL}' at delete_files: \"y\"" in second.out
    assert entered(second.out) == ["tools", "model"]  # only the waiting tool runs, then the model once
    assert "tool inspect_files" not in second.out  # its result was kept from the first process
    assert "tool delete_files: success" in second.out
    assert _deleted_lines(second.out) == [f'{{"deleted": ["{TARGETS[0]}", "{TARGETS[1]}"], "pretend": true}}']
    assert "──▶ END" in second.out
    assert f"✓ Deleted 2 files (pretend): {', '.join(TARGETS)}." in second.out
    assert "Conversation (4 messages)" in second.out
    assert "4. assistant  Deleted 2 files older than 5 days" in second.out
    assert "cleanup-approval  y" in second.out
    record = latest(tmp_path / STORE, session)
    assert record.status == "completed"
    assert record.values["agent_state"] == {APPROVAL: "y", "deleted": TARGETS}
    assert [m["role"] for m in record.values["messages"]] == ["user", "assistant", "user", "assistant"]
    assert not any((tmp_path / path).exists() for path in TARGETS)  # it only pretends


def test_resume_no_ends_with_the_denial_and_deletes_nothing(proc, tmp_path):
    proc("demo", "--agent", "--thread", "s-no", "--no-wait")

    done = proc("demo", "--agent", "--resume", "s-no", "--answer", "n")

    assert done.code == 0, done.err
    assert entered(done.out) == ["tools", "model"]
    assert "tool delete_files: error" in done.out
    assert DENIED in done.out
    assert _deleted_lines(done.out) == []
    assert "✗ Deletion denied: nothing was deleted." in done.out
    assert "I deleted nothing: you denied permission" in done.out
    record = latest(tmp_path / STORE, "s-no")
    assert record.status == "completed"
    assert record.values["agent_state"] == {APPROVAL: "n"}
    results = [b["toolResult"] for b in record.values["messages"][2]["content"]]
    assert [r["status"] for r in results] == ["success", "error"]
    assert results[1]["content"] == [{"text": DENIED}]


def test_an_answer_piped_into_a_new_run_finishes_it(proc, tmp_path):
    done = proc("demo", "--agent", "--thread", "s-pipe", input="y\n")  # printf 'y\n' | statehitl demo --agent

    assert done.code == 0, done.err
    assert f"{QUESTION} [y/N] y  (from stdin)" in done.out
    assert "✓ Deleted 2 files (pretend)" in done.out
    assert latest(tmp_path / STORE, "s-pipe").values["agent_state"]["deleted"] == TARGETS


def test_no_wait_stops_even_with_an_answer_piped(proc, tmp_path):
    done = proc("demo", "--agent", "--thread", "s-pipe", "--no-wait", input="y\n")

    assert done.code == 0, done.err
    assert "[y/N]" not in done.out
    assert "statehitl demo --agent --resume s-pipe --answer y" in done.out
    assert latest(tmp_path / STORE, "s-pipe").status == "interrupted"


def test_resume_reads_the_answer_piped_on_stdin(proc, tmp_path):
    proc("demo", "--agent", "--thread", "s-piped", "--no-wait")

    done = proc("demo", "--agent", "--resume", "s-piped", input="y\n")

    assert done.code == 0, done.err
    assert "tool delete_files: success" in done.out
    assert latest(tmp_path / STORE, "s-piped").values["agent_state"]["deleted"] == TARGETS


def test_a_second_resume_of_an_answered_session_is_a_clear_error(proc, tmp_path):
    proc("demo", "--agent", "--thread", "s-twice", "--no-wait")
    assert proc("demo", "--agent", "--resume", "s-twice", "--answer", "y").code == 0
    before = latest(tmp_path / STORE, "s-twice")

    again = proc("demo", "--agent", "--resume", "s-twice", "--answer", "y")

    assert_one_line_error(again, "session 's-twice' is not waiting for an answer", "completed",
                          "statehitl threads show s-twice")
    assert latest(tmp_path / STORE, "s-twice") == before


def test_threads_list_shows_the_session_as_interrupted(proc):
    proc("demo", "--agent", "--thread", "s-list", "--no-wait", "--store", "file://elsewhere")

    listed = proc("threads", "list", "--store", "file://elsewhere")

    assert listed.code == 0, listed.err
    rows = {line.split()[0]: line.split() for line in listed.out.splitlines()[1:]}
    assert rows["s-list"][1] == "interrupted"
    assert "agent" in rows["s-list"]
    assert f"{APPROVAL} at delete_files (hook):" in listed.out
    shown = proc("threads", "show", "s-list", "--store", "file://elsewhere")
    assert shown.code == 0, shown.err
    # the finished inspect_files result waits in the checkpoint, next to the pending approval
    assert 'tools (partly done): {"results": {"inspect-1": {"status": "success"' in shown.out


def test_another_store_is_named_in_the_resume_command_and_used(proc, tmp_path):
    done = proc("demo", "--agent", "--thread", "s-else", "--no-wait", "--store", "file://elsewhere")

    assert "statehitl demo --agent --resume s-else --answer y --store file://elsewhere" in done.out
    assert not (tmp_path / STORE).exists()
    assert proc(*_printed_command(done.out, "y")[1:]).code == 0
    assert latest(tmp_path / "elsewhere", "s-else").status == "completed"


@pytest.mark.parametrize(("args", "fragments"), [
    (["demo", "--agent", "--resume", "ghost", "--answer", "y"], ["unknown session 'ghost'", "threads list"]),
    (["demo", "--agent", "--amount", "5"], ["--amount applies only to the refund demo"]),
    (["demo", "--agent", "--thread", "a@b", "--no-wait"], ["session id 'a@b' is not allowed"]),
])
def test_bad_input_is_one_line(proc, args, fragments):
    assert_one_line_error(proc(*args), *fragments)


def test_graph_threads_and_agent_sessions_are_not_mixed_up(proc, tmp_path):
    proc("demo", "--thread", "t-graph", "--no-wait")
    proc("demo", "--agent", "--thread", "s-agent", "--no-wait")

    assert_one_line_error(proc("demo", "--agent", "--resume", "t-graph", "--answer", "y"), "'RefundGraph'",
                          "statehitl demo --agent")
    assert_one_line_error(proc("demo", "--resume", "s-agent", "--answer", "y"), "machine 'agent'")
    assert_one_line_error(proc("demo", "--agent", "--thread", "s-agent"), "already exists",
                          "statehitl demo --agent --resume s-agent --answer y")
    assert latest(tmp_path / STORE, "t-graph").status == "interrupted"
    assert latest(tmp_path / STORE, "s-agent").status == "interrupted"


# -- at a terminal ----------------------------------------------------------------------------------


def test_terminal_prompt_yes_finishes_in_one_go(cli, workdir):
    done = cli("demo", "--agent", "--thread", "s1", stdin=FakeTTY("y\n"))

    assert done.code == 0, done.err
    assert f"{QUESTION} [y/N]" in done.out
    assert entered(done.out) == ["model", "tools", "tools", "model"]  # tools re-enters with the answer
    assert "✓ Deleted 2 files (pretend)" in done.out
    assert "--resume" not in done.out
    assert latest(workdir / STORE, "s1").values["agent_state"]["deleted"] == TARGETS
    assert not any(isinstance(o, TransitionPrinter) for o in observe.observers)


def test_terminal_prompt_defaults_to_no(cli, workdir):
    done = cli("demo", "--agent", "--thread", "s1", stdin=FakeTTY("\n"))

    assert done.code == 0, done.err
    assert "✗ Deletion denied" in done.out
    assert latest(workdir / STORE, "s1").values["agent_state"] == {APPROVAL: "n"}


def test_hints_name_the_command_the_user_has(cli, monkeypatch):
    monkeypatch.setenv("STATEHITL_COMMAND", "./dev.sh cli")

    done = cli("demo", "--agent", "--thread", "s1", "--no-wait")

    assert "./dev.sh cli demo --agent --resume s1 --answer y" in done.out


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="needs a pty")
def test_on_a_real_terminal_the_agent_demo_asks_and_finishes(tmp_path):
    code, text = run_on_pty(tmp_path, "demo", "--agent", "--thread", "s-tty", prompt=b"[y/N]", answer=b"y\n")

    assert code == 0
    assert f"{QUESTION} [y/N]" in text
    assert "Deleted 2 files (pretend)" in text
    assert latest(tmp_path / STORE, "s-tty").values["agent_state"]["deleted"] == TARGETS
