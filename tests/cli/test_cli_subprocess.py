"""The CLI as users run it: ``python -m statehitl.cli`` in fresh processes, the store on disk in between."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import SUBPROCESS_TIMEOUT, assert_one_line_error, entered, latest, run_on_pty, subprocess_env

pytestmark = pytest.mark.slow

STORE = ".statehitl"


def _printed_command(out: str, answer: str) -> list[str]:
    """The resume command the demo printed for ``answer``, as argv."""
    match = re.search(rf"^\s+(statehitl demo --resume \S+ --answer {answer}\b[^#\n]*)", out, flags=re.MULTILINE)
    assert match, out
    return shlex.split(match.group(1))


def test_no_wait_then_resume_yes_in_a_second_process(proc, tmp_path):
    first = proc("demo", "--no-wait")

    assert first.code == 0, first.err
    assert first.err == ""
    assert entered(first.out) == ["intake", "assess", "approve"]
    command = _printed_command(first.out, "y")
    assert command[0] == "statehitl"
    thread = command[3]
    assert latest(tmp_path / STORE, thread).status == "interrupted"

    second = proc(*command[1:])  # exactly what the first process said to run

    assert second.code == 0, second.err
    assert entered(second.out) == ["approve", "pay"]
    assert "✓ Refund of $120.00 paid to Ada Lovelace (approved)." in second.out
    record = latest(tmp_path / STORE, thread)
    assert record.status == "completed"
    assert record.values["paid"] is True
    assert record.values["log"][-1] == "pay: sent $120.00 to Ada Lovelace"


def test_the_inbox_the_demo_points_at_finishes_its_thread(proc, tmp_path):
    """On the default store the demo's page command names the demo's app, so answering there resumes."""
    first = proc("demo", "--no-wait")
    assert "(or a web page to answer from: statehitl inbox serve --app statehitl.cli.demo:inbox_app)" in first.out
    listed = proc("inbox")
    assert listed.code == 0, listed.err
    interrupt_id = listed.out.splitlines()[1].split()[0]

    answered = proc("inbox", "answer", interrupt_id, "y", "--as", "ada", "--app", "statehitl.cli.demo:inbox_app")

    assert answered.code == 0, answered.err
    assert ": completed" in answered.out
    thread = _printed_command(first.out, "y")[3]
    assert latest(tmp_path / STORE, thread).values["paid"] is True
    audit = proc("threads", "audit", thread)
    assert "by ada" in audit.out


@pytest.mark.parametrize("store", [None, "file://elsewhere"])
def test_the_worker_command_the_demo_prints_applies_an_inbox_answer(tmp_path, store):
    """``demo --no-wait`` prints the worker command that applies an answer given in the inbox without --app:
    answered so, then that very line run in a shell, the thread completes."""
    env = {**subprocess_env(), "STATEHITL_COMMAND": f"{shlex.quote(sys.executable)} -m statehitl.cli"}
    store_args = [] if store is None else ["--store", store]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "statehitl.cli", *args, *store_args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, check=False)
        assert done.returncode == 0, done.stderr
        return done

    first = cli("demo", "--thread", "t-worker", "--no-wait")
    printed = r"^    (.* worker --app statehitl\.cli\.demo:inbox_app --once.*?)    # "
    match = re.search(printed, first.stdout, re.MULTILINE)
    assert match, first.stdout
    interrupt_id = cli("inbox").stdout.splitlines()[1].split()[0]
    answered = cli("inbox", "answer", interrupt_id, "y", "--as", "ada")
    assert "stored" in answered.stdout

    worker = subprocess.run(match.group(1), shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=SUBPROCESS_TIMEOUT, check=False)

    assert worker.returncode == 0, worker.stderr
    assert "resumed 1 thread" in worker.stdout
    record = latest(tmp_path / (STORE if store is None else "elsewhere"), "t-worker")
    assert record.status == "completed"
    assert record.values["paid"] is True


def test_resume_no_in_a_second_process_rejects(proc, tmp_path):
    first = proc("demo", "--thread", "t-no", "--no-wait")
    second = proc(*_printed_command(first.out, "n")[1:])

    assert second.code == 0, second.err
    assert entered(second.out) == ["approve", "reject"]
    assert "✗ Refund of $120.00 to Ada Lovelace rejected." in second.out
    record = latest(tmp_path / STORE, "t-no")
    assert record.values["decision"] == "rejected"
    assert record.values["paid"] is False


def test_an_answer_piped_into_a_new_run_finishes_it(proc, tmp_path):
    done = proc("demo", "--thread", "t-pipe", input="y\n")  # printf 'y\n' | statehitl demo

    assert done.code == 0, done.err
    assert "[y/N] y  (from stdin)" in done.out
    assert "✓ Refund of $120.00 paid to Ada Lovelace (approved)." in done.out
    assert latest(tmp_path / STORE, "t-pipe").values["paid"] is True


def test_no_wait_stops_even_with_an_answer_piped(proc, tmp_path):
    done = proc("demo", "--thread", "t-pipe", "--no-wait", input="y\n")

    assert done.code == 0
    assert "statehitl demo --resume t-pipe --answer y" in done.out
    assert latest(tmp_path / STORE, "t-pipe").status == "interrupted"


def test_resume_with_the_answer_piped_on_stdin(proc, tmp_path):
    proc("demo", "--thread", "t-piped", "--no-wait")

    done = proc("demo", "--resume", "t-piped", input="y\n")

    assert done.code == 0, done.err
    assert latest(tmp_path / STORE, "t-piped").values["paid"] is True


def test_threads_list_and_show_in_other_processes(proc):
    proc("demo", "--thread", "t-wait", "--no-wait")
    proc("demo", "--thread", "t-small", "--amount", "12.5")

    listed = proc("threads", "list")
    assert listed.code == 0, listed.err
    rows = {line.split()[0]: line for line in listed.out.splitlines()[1:]}
    assert rows["t-wait"].split()[1:3] == ["interrupted", "2"]
    assert "refund-approval at approve:" in rows["t-wait"]
    assert rows["t-small"].split()[1:3] == ["completed", "3"]

    shown = proc("threads", "show", "t-wait")
    assert shown.code == 0, shown.err
    assert [line.split()[1] for line in shown.out.splitlines() if line.startswith("checkpoint ")] == [
        "000000000002", "000000000001", "000000000000",  # 0: the run's first, after its first node
    ]
    assert "interrupts  refund-approval at approve" in shown.out

    deleted = proc("threads", "delete", "t-small")
    assert deleted.code == 0
    assert "t-small" not in proc("threads", "list").out


def test_draw_in_a_process(proc):
    done = proc("draw", "statehitl.cli.demo:build_graph")

    assert done.code == 0, done.err
    assert done.out.startswith("flowchart TD\n")
    assert '["approve"]' in done.out


def test_draw_finds_modules_in_the_working_directory(proc, tmp_path):
    (tmp_path / "myflow.py").write_text(
        "from statehitl.cli.demo import build_graph\n"
        "app = build_graph().compile()\n"
    )
    done = proc("draw", "myflow:app")

    assert done.code == 0, done.err
    assert '["intake"]' in done.out


@pytest.mark.parametrize(("args", "fragment"), [
    (["demo", "--resume", "ghost", "--answer", "y"], "unknown thread 'ghost'"),
    (["demo", "--resume", "ghost", "--answer", "sure"], "--answer must be y or n"),
    (["threads", "list", "--store", "gopher://x"], "gopher://"),
    (["threads", "show", "ghost"], "no store at file://.statehitl"),
    (["draw", "nowhere_module_xyz:app"], "nowhere_module_xyz"),
    (["demo", "--nope"], "--nope"),
])
def test_bad_input_is_one_line_and_exit_2(proc, args, fragment):
    assert_one_line_error(proc(*args), fragment)


def test_no_command_prints_help_and_exits_2(proc):
    done = proc()

    assert done.code == 2
    assert "demo" in done.err
    assert "threads" in done.err


def test_help_and_version(proc):
    assert proc("--help").code == 0
    version = proc("--version")
    assert version.code == 0
    assert version.out.startswith("statehitl ")


def test_the_console_script_is_installed():
    script = Path(sys.executable).parent / "statehitl"
    if not script.exists():
        pytest.skip("the statehitl console script is not installed next to this interpreter")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("statehitl ")


# -- a real terminal --------------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="needs a pty")
def test_on_a_terminal_the_demo_asks_and_finishes(tmp_path):
    # typed only once the whole question is on the terminal, so it shows before the answer
    code, text = run_on_pty(tmp_path, "demo", "--thread", "t-tty",
                            prompt=b"Approve refund of $120.00 to Ada Lovelace? [y/N]", answer=b"y\n")

    assert code == 0
    assert "Approve refund of $120.00 to Ada Lovelace? [y/N]" in text
    assert "Refund of $120.00 paid to Ada Lovelace (approved)." in text
    assert "\x1b[" not in text  # NO_COLOR is set
    assert latest(tmp_path / STORE, "t-tty").values["paid"] is True
