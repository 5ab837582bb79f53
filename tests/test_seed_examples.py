"""The seed's Python examples for Hooks, Tools and Session Management, run as programs on statehitl.

Each program in examples/seed/ is the seed's code with ``strands`` -> ``statehitl`` and ``model=`` added
(``test_examples_are_the_seed_verbatim`` holds them to that); these tests run them the way a user would,
in a fresh interpreter with answers piped to ``input()``, and check what actually happened: which tools
ran (their prints), what the model was told (the tool results it received), how many questions were
asked, and what the session left on disk.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import stored_records

SEED_EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "seed"
SEED_DOC = Path(__file__).resolve().parent.parent.parent / "shared" / "seed" / "interrupts.md"
PATHS = "['a/b/c.txt', 'd/e/f.txt']"
FINAL = '{"role": "assistant", "content": [{"text": "I have processed the files older than 5 days."}]}'


def _run(args: list[str], cwd: Path, answers: str | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``python ARGS`` in ``cwd`` (``answers`` on stdin, ``env`` added to ours); its stdout (it must succeed)."""
    done = subprocess.run(
        [sys.executable, *args],
        input=answers, capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_example(script: str, answers: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run examples/seed/``script`` in ``cwd`` with ``answers`` on stdin; its stdout (it must succeed)."""
    return _run([str(SEED_EXAMPLES / script)], cwd, answers, env)


def tool_results(stdout: str) -> dict[str, dict[str, Any]]:
    """The ``TOOL RESULT:`` lines (what the model received last), by toolUseId."""
    results = [json.loads(line.split("TOOL RESULT: ", 1)[1]) for line in stdout.splitlines() if "TOOL RESULT: " in line]
    return {result["toolUseId"]: result for result in results}


def result_text(result: dict[str, Any]) -> tuple[str, str]:
    return result["status"], result["content"][0]["text"]


def assert_both_deletions_refused(out: str, question: str, asked: int, reason: str) -> None:
    """``question`` was asked ``asked`` times, nothing was deleted, and the model got ``reason`` as the error
    result of both delete_files calls, then answered."""
    assert out.count(question) == asked
    assert "DELETING" not in out
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("error", reason)
    assert result_text(results["delete-2"]) == ("error", reason)
    assert f"MESSAGE: {FINAL}" in out


# --- Hooks: BeforeToolCallEvent ------------------------------------------------------------------------


def test_before_tool_call_yes_deletes_and_inspect_runs_once(tmp_path: Path) -> None:
    out = run_example("before_tool_call.py", "y\n", tmp_path)
    assert out.count(f"Do you want to delete {PATHS} (y/N): ") == 1
    assert out.count(f"DELETING {PATHS}") == 1
    # inspect_files finished in the interrupted cycle: the resume runs only delete_files
    assert out.count(f"INSPECTING {PATHS}") == 1
    assert f"MESSAGE: {FINAL}" in out
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("success", "True")
    assert results["inspect-1"]["status"] == "success"
    assert "MODEL CALLS: 2" in out  # the resumed agent did not call the model before running the tool


@pytest.mark.parametrize("answer", ["n\n", "\n"])
def test_before_tool_call_no_cancels_the_tool(tmp_path: Path, answer: str) -> None:
    out = run_example("before_tool_call.py", answer, tmp_path)
    assert out.count("Do you want to delete") == 1
    assert "DELETING" not in out
    assert out.count(f"INSPECTING {PATHS}") == 1
    assert f"MESSAGE: {FINAL}" in out
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("error", "User denied permission to delete files")
    assert results["inspect-1"]["status"] == "success"


# --- Hooks: BeforeToolsEvent ---------------------------------------------------------------------------


def test_before_tools_yes_runs_the_whole_batch(tmp_path: Path) -> None:
    out = run_example("before_tools.py", "y\n", tmp_path)
    assert out.count("Approve running ['delete_files', 'delete_files']? (y/N): ") == 1  # one question per batch
    assert out.count("DELETING ['a/b/c.txt']") == 1
    assert out.count("DELETING ['d/e/f.txt']") == 1
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("success", "True")
    assert result_text(results["delete-2"]) == ("success", "True")
    assert f"MESSAGE: {FINAL}" in out
    assert "MODEL CALLS: 2" in out


@pytest.mark.parametrize("answer", ["n\n", "\n"])
def test_before_tools_no_cancels_the_whole_batch(tmp_path: Path, answer: str) -> None:
    out = run_example("before_tools.py", answer, tmp_path)
    assert_both_deletions_refused(out, "Approve running", 1, "Batch cancelled by user")


# --- Tools: ToolContext.interrupt ----------------------------------------------------------------------


def test_tool_context_yes_deletes(tmp_path: Path) -> None:
    out = run_example("tool_context.py", "y\n", tmp_path)
    assert out.count(f"Do you want to delete {PATHS} (y/N): ") == 1
    assert out.count(f"DELETING {PATHS}") == 1
    assert out.count(f"INSPECTING {PATHS}") == 1
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("success", "True")
    assert f"MESSAGE: {FINAL}" in out
    assert "MODEL CALLS: 2" in out


def test_tool_context_no_returns_false_without_deleting(tmp_path: Path) -> None:
    out = run_example("tool_context.py", "n\n", tmp_path)
    assert out.count("Do you want to delete") == 1
    assert "DELETING" not in out
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("success", "False")  # the tool itself declined
    assert f"MESSAGE: {FINAL}" in out


# --- Session Management: the client, in one process ----------------------------------------------------


def session_records(store: Path, thread_id: str) -> list[str]:
    return stored_records.keys(store, f"threads/{thread_id}/")


def test_session_trust_asks_once_for_two_deletions(tmp_path: Path) -> None:
    out = run_example("session_client.py", "t\n", tmp_path)
    # the model asks for two deletions; "t" is stored in agent.state, so only the first one asks
    assert out.count("Do you want to delete") == 1
    assert "Do you want to delete ['a/b/c.txt'] (t/y/N): " in out
    assert out.count("DELETING ['a/b/c.txt']") == 1
    assert out.count("DELETING ['d/e/f.txt']") == 1
    results = tool_results(out)
    assert result_text(results["delete-1"]) == ("success", "True")
    assert result_text(results["delete-2"]) == ("success", "True")
    assert f"MESSAGE: {FINAL}" in out
    assert "MODEL CALLS: 3" in out  # no model call before the resumed tool (a 4th would be unscripted)
    store = tmp_path / "sessions"  # the default storage directory, under the working directory
    assert f"SESSION STORED IN: {store}" in out
    assert session_records(store, "myapp")


def test_session_yes_approves_one_deletion_at_a_time(tmp_path: Path) -> None:
    out = run_example("session_client.py", "y\ny\n", tmp_path)
    assert out.count("Do you want to delete") == 2
    assert "Do you want to delete ['a/b/c.txt'] (t/y/N): " in out
    assert "Do you want to delete ['d/e/f.txt'] (t/y/N): " in out
    assert out.count("DELETING") == 2
    assert f"MESSAGE: {FINAL}" in out


def test_session_no_denies_each_deletion(tmp_path: Path) -> None:
    out = run_example("session_client.py", "n\nn\n", tmp_path)
    assert_both_deletions_refused(out, "Do you want to delete", 2, "User denied permission to delete files")


def test_session_storage_dir_comes_from_the_environment(tmp_path: Path) -> None:
    store = tmp_path / "elsewhere"
    out = run_example("session_client.py", "t\n", tmp_path, env={"SESSION_STORAGE_DIR": str(store)})
    assert f"SESSION STORED IN: {store}" in out
    assert session_records(store, "myapp")
    assert not (tmp_path / "sessions").exists()


# --- Session Management: the server, one process per call ----------------------------------------------

# One server call per interpreter: import the seed's server.py half, give it the program's one model (the
# whole conversation's script, keyed by position, the same in every process), call server(prompt) (which
# builds a new Agent on the session), report the result.
SERVER_CALL = """
import json, sys
sys.path.insert(0, sys.argv[1])
import session_server
from statehitl.models import ScriptedModel

session_server.MODEL = ScriptedModel(json.loads(sys.argv[2]), keyed_by="position")
result = session_server.server(json.loads(sys.argv[3]))
print("RESULT: " + json.dumps({
    "stop_reason": result.stop_reason,
    "interrupts": [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts],
    "message": result.message,
    "model_calls": session_server.MODEL.calls,
}))
"""

DONE_TEXT = "I have processed the files older than 5 days."


def delete_turn(use_id: str, path: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": use_id, "name": "delete_files", "input": {"paths": [path]}}}]}


SCRIPT = [delete_turn("delete-1", "a/b/c.txt"), delete_turn("delete-2", "d/e/f.txt"), DONE_TEXT,
          delete_turn("delete-3", "x/y/z.txt"), "done"]
"""The session's whole conversation, one reply per model turn, whichever process makes it."""


def serve(tmp_path: Path, prompt: Any) -> tuple[dict[str, Any], str]:
    out = _run(["-c", SERVER_CALL, str(SEED_EXAMPLES), json.dumps(SCRIPT), json.dumps(prompt)], tmp_path,
               env={"SESSION_STORAGE_DIR": str(tmp_path / "store")})
    [line] = [line for line in out.splitlines() if line.startswith("RESULT: ")]
    return json.loads(line.removeprefix("RESULT: ")), out


def answer(interrupt: dict[str, Any], response: str) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": interrupt["id"], "response": response}}]


@pytest.mark.slow
def test_session_resumes_in_a_new_process_and_keeps_trust_on_disk(tmp_path: Path) -> None:
    first, out = serve(tmp_path, f"paths=<{PATHS}>")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert (pending["name"], pending["reason"]) == ("myapp-approval", {"paths": ["a/b/c.txt"]})
    assert "DELETING" not in out
    assert session_records(tmp_path / "store", "myapp")

    # a second interpreter answers the stored interrupt: the interrupted tool runs first, then the model
    second, out = serve(tmp_path, answer(pending, "t"))
    assert second["stop_reason"] == "end_turn"
    assert second["interrupts"] == []
    assert second["message"] == {"role": "assistant", "content": [{"text": DONE_TEXT}]}
    assert second["model_calls"] == 2
    assert out.count("DELETING ['a/b/c.txt']") == 1
    assert out.count("DELETING ['d/e/f.txt']") == 1  # trusted: not interrupted again

    # a third interpreter, a new prompt: the trust stored in the session's agent.state still holds
    third, out = serve(tmp_path, "paths=<['x/y/z.txt']>")
    assert third["stop_reason"] == "end_turn"
    assert third["interrupts"] == []
    assert out.count("DELETING ['x/y/z.txt']") == 1


@pytest.mark.slow
def test_session_yes_in_a_new_process_asks_again_for_the_next_deletion(tmp_path: Path) -> None:
    first, _ = serve(tmp_path, f"paths=<{PATHS}>")
    [pending] = first["interrupts"]
    second, out = serve(tmp_path, answer(pending, "y"))
    assert out.count("DELETING ['a/b/c.txt']") == 1
    assert "DELETING ['d/e/f.txt']" not in out
    assert second["stop_reason"] == "interrupt"
    [again] = second["interrupts"]
    assert again["reason"] == {"paths": ["d/e/f.txt"]}
    assert again["id"] != pending["id"]
    assert second["model_calls"] == 1


# --- the programs are the seed's code ------------------------------------------------------------------


def seed_blocks() -> list[list[str]]:
    """The first four ```python blocks of the seed: BeforeToolCallEvent, BeforeToolsEvent, Tools, Session."""
    if not SEED_DOC.is_file():
        pytest.skip(f"the seed is not at {SEED_DOC}")
    blocks = re.findall(r"```python\n(.*?)```", SEED_DOC.read_text(), flags=re.DOTALL)[:4]
    assert "BeforeToolCallEvent" in blocks[0]
    assert "BeforeToolsEvent" in blocks[1]
    assert "ToolContext" in blocks[2]
    assert "##### server.py #####" in blocks[3]
    return [block.splitlines() for block in blocks]


def code_lines(lines: list[str]) -> list[str]:
    return [line.rstrip() for line in lines if line.strip()]


def assert_verbatim(seed: list[str], example: Path, replaced: dict[str, str] | None = None) -> None:
    """Every non-blank seed line appears in ``example``, in order and unchanged, but for the allowed edits.

    Allowed: ``strands`` -> ``statehitl`` in imports, ``replaced`` lines, a ``pass`` after ``# Implementation
    here`` dropped for a real body, and these additions inside the seed's code: ``model=scripted_model(),``,
    comment lines, the lines of an ``# Implementation here`` body, imports among the seed's imports, and a
    block between ``# --- not in the seed`` and ``# --- the seed`` comments (the scripted model).
    """
    replaced = replaced or {}
    expected: list[str] = []
    for line in code_lines(seed):
        if line.strip() == "pass" and expected and expected[-1].strip() == "# Implementation here":
            continue
        line = re.sub(r"^(\s*)from strands\b", r"\1from statehitl", line)
        expected.append(replaced.get(line, line))
    actual = code_lines(example.read_text().splitlines())
    found: list[int] = []
    for line in expected:
        start = found[-1] + 1 if found else 0
        assert line in actual[start:], f"{example.name}: seed line missing or changed: {line!r}"
        found.append(actual.index(line, start))
    implementing = marked = False
    imports = True
    for index in range(found[0], found[-1] + 1):
        line = actual[index].strip()
        if line.startswith("# --- not in the seed"):
            marked = True
        elif line.startswith("# --- the seed"):
            marked = False
        if index in found:
            implementing = line == "# Implementation here"
            imports = imports and line.startswith(("import ", "from ", "#"))
            continue
        added_import = imports and line.startswith(("import ", "from "))
        allowed = implementing or marked or added_import or line.startswith("#") or line == "model=scripted_model(),"
        assert allowed, f"{example.name}: line not in the seed: {line!r}"


def test_examples_are_the_seed_verbatim() -> None:
    before_tool_call, before_tools, tools, session = seed_blocks()
    assert_verbatim(before_tool_call, SEED_EXAMPLES / "before_tool_call.py")
    assert_verbatim(before_tools, SEED_EXAMPLES / "before_tools.py")
    # the Tools example's "..." is the Hooks example's interrupt loop
    loop = before_tool_call[next(i for i, line in enumerate(before_tool_call) if line.startswith("paths = ")):]
    ellipsis = tools.index("...")
    assert_verbatim([*tools[:ellipsis], *loop, *tools[ellipsis + 1:]], SEED_EXAMPLES / "tool_context.py")
    split = session.index("##### client.py #####")
    storage = '        session_manager=FileSessionManager(session_id="myapp", storage_dir="/path/to/storage"),'
    assert storage in session
    assert_verbatim(session[:split], SEED_EXAMPLES / "session_server.py", {
        storage: storage.replace('"/path/to/storage"', "STORAGE_DIR"),
    })
    assert_verbatim(session[split:], SEED_EXAMPLES / "session_client.py")


def test_every_seed_example_is_run() -> None:
    assert {p.name for p in SEED_EXAMPLES.glob("*.py")} == {
        "before_tool_call.py", "before_tools.py", "tool_context.py", "session_server.py", "session_client.py",
        "swarm.py", "graph.py",  # run by test_seed_multiagent_examples.py
    }
