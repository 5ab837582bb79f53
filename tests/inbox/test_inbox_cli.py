"""``statehitl inbox``: list, show, answer (stored, or resumed with --app), sweep, and its errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inbox_app import actions, build

from statehitl import inbox
from statehitl.cli import main


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("NO_COLOR", "1")

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def waiting(thread: str, **order: Any) -> str:
    return str(build(thread).invoke({"item": "book", **order}, thread_id=thread).interrupts[0].id)


def test_the_list_is_newest_first_with_age_and_expiry(app_store: str, cli: Any) -> None:
    old = waiting("t-old")
    new = waiting("t-new", expires_in=7200, on_expire="n", reason="ship now?")
    code, out, _ = cli("inbox", "--store", app_store)
    assert code == 0
    header, first, second, hint = out.splitlines()
    assert header.split() == ["ID", "THREAD", "NAME", "AGE", "EXPIRES", "REASON"]
    assert first.split()[:3] == [new, "t-new", "ship-approval"]
    assert "in 1h" in first
    assert '"ship now?"' in first
    assert second.split()[:3] == [old, "t-old", "ship-approval"]
    assert " - " in second
    assert hint.startswith("answer one with: ")
    assert "inbox answer ID RESPONSE --store" in hint
    assert cli("inbox", "list", "--store", app_store)[1] == out  # the subcommand says the same


def test_an_empty_inbox_says_so(store: str, cli: Any) -> None:
    Path(store.removeprefix("file://")).mkdir()  # a store that exists, with nothing in it
    assert cli("inbox", "--store", store)[:2] == (0, f"nothing waiting on a human in {store}\n")


def test_a_mistyped_store_directory_is_said_not_taken_for_an_empty_inbox(
        tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (["inbox"], ["inbox", "list"], ["inbox", "show", "v2:abcd"], ["inbox", "answer", "v2:abcd", "y"]):
        code, out, err = cli(*args, "--store", "file://./typo")
        assert code == 2, (args, out, err)
        assert err == (f"statehitl: error: no store at file://./typo: the directory {tmp_path / 'typo'} does not "
                       "exist (is the path mistyped? nothing has been stored there yet?)\n")
        assert out == ""
    assert not (tmp_path / "typo").exists()


def test_show_gives_the_whole_interrupt(app_store: str, cli: Any) -> None:
    iid = waiting("t1", expires_in=600, on_expire={"ok": False})
    code, out, _ = cli("inbox", "show", iid[:8], "--store", app_store)
    assert code == 0
    assert f"[id {iid}]" in out
    assert "t1 (OrderGraph)" in out
    assert "node ask" in out
    assert '"question": "Ship book?"' in out
    assert 'then answered {"ok": false}' in out
    assert "any JSON value" in out


def test_answer_stores_then_refuses_a_second_and_the_app_applies_it(app_store: str, cli: Any,
                                                                   action_log: Path) -> None:
    iid = waiting("t1")
    code, out, _ = cli("inbox", "answer", iid, "y", "--as", "ann", "--store", app_store)
    assert code == 0
    assert 'with "y"' in out
    assert "statehitl worker --app module:build" in out
    assert "resume_answered(app, 't1')" in out
    code, _, err = cli("inbox", "answer", iid, '{"ok": true}', "--store", app_store)
    assert code == 1
    assert "already answered by ann" in err
    assert actions(action_log) == []
    inbox.resume_answered(build("t1"), "t1")
    assert actions(action_log) == ["t1 ship book 'y'"]


def test_answer_with_the_app_resumes_now_and_json_is_parsed(app_store: str, cli: Any, action_log: Path) -> None:
    iid = waiting("t1")
    code, out, _ = cli("inbox", "answer", iid, '{"approved": true}', "--app", "inbox_app:build", "--store", app_store)
    assert code == 0
    assert "resumed thread t1: completed" in out
    assert actions(action_log) == ["t1 ship book {'approved': True}"]


@pytest.mark.parametrize(("args", "message"), [
    (["inbox", "answer", "v2:ffff", "y"], "no pending interrupt has id 'v2:ffff'"),
    (["inbox", "show", "nope"], "no pending interrupt has id 'nope'"),
    (["inbox", "answer", "ID", "y", "--app", "inbox_app"], "must be module:callable"),
    (["inbox", "sweep", "--app", "no_such_module_x:build"], "cannot import module 'no_such_module_x'"),
    (["inbox", "serve", "--port", "70000"], "--port must be 0-65535"),
])
def test_bad_input_is_one_line_and_exit_2(app_store: str, cli: Any, args: list[str], message: str) -> None:
    waiting("t1")
    code, _, err = cli(*args, "--store", app_store)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1
    assert len(inbox.pending(app_store)) == 1  # nothing was answered


def test_sweep_answers_expired_defaults_and_resumes_with_the_app(app_store: str, cli: Any,
                                                                action_log: Path) -> None:
    waiting("t1")  # no deadline: left alone
    build("t2").invoke({"item": "pen", "expires_in": 0.001, "on_expire": "timed out"}, thread_id="t2")
    code, out, _ = cli("inbox", "sweep", "--store", app_store)
    assert code == 0
    assert out == "answered 1 expired interrupt with their default: ship-approval on t2\n"
    code, out, _ = cli("inbox", "sweep", "--app", "inbox_app:build", "--store", app_store)
    assert code == 0
    assert out.splitlines() == ["answered 0 expired interrupts with their default",
                                              "resumed 1 thread: t2"]
    assert actions(action_log) == ["t2 ship pen 'timed out'"]
    assert [p.thread_id for p in inbox.pending(app_store)] == ["t1"]


def test_the_demo_points_at_the_inbox_which_finishes_it_with_the_demo_app(tmp_path: Path, cli: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store = f"file://{tmp_path / 'demo'}"
    monkeypatch.setenv("STATEHITL_DEMO_STORE", store)
    code, out, _ = cli("demo", "--no-wait", "--thread", "refund-1", "--store", store)
    assert code == 0
    assert f"It is in the inbox, with everything else waiting on a human: statehitl inbox --store {store}" in out
    assert f"statehitl inbox serve --store {store}" in out
    serve = next(line for line in out.splitlines() if "inbox serve" in line)
    assert "--app" not in serve  # the demo's app runs on the default store, not this one: the page stores answers
    [item] = inbox.pending(store)
    assert (item.thread_id, item.name) == ("refund-1", "refund-approval")
    code, out, _ = cli("inbox", "answer", item.id, "y", "--app", "statehitl.cli.demo:inbox_app", "--store", store)
    assert code == 0
    assert "resumed thread refund-1: completed" in out
    code, out, _ = cli("threads", "show", "refund-1", "--store", store, "--values")
    assert '"paid": true' in out


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "inbox.example.com"])
def test_serving_beyond_loopback_without_a_token_is_refused_before_binding(app_store: str, cli: Any,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           host: str) -> None:
    monkeypatch.delenv("STATEHITL_INBOX_TOKEN", raising=False)
    code, out, err = cli("inbox", "serve", "--host", host, "--port", "0", "--store", app_store)
    assert code == 2
    assert out == ""
    assert f"--host {host} is reachable from other machines" in err
    assert "--insecure-no-token" in err
    assert "--token-file PATH or STATEHITL_INBOX_TOKEN" in err


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--token", "a", "--token-file", "t"], None, "give the token one way"),
    (["--token-file", "no-such-token-file"], None, "cannot read --token-file no-such-token-file"),
    (["--token-file", "EMPTY"], None, "is empty"),
    ([], "  ", "$STATEHITL_INBOX_TOKEN is set but empty"),
    (["--insecure-no-token", "--host", "0.0.0.0"], "tok", "--insecure-no-token with a token"),
    (["--allowed-host", "https://inbox.example.com"], None, "--allowed-host takes a name as the Host header"),
])
def test_bad_token_or_host_options_are_one_line_and_exit_2(app_store: str, cli: Any, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                           env: str | None, message: str) -> None:
    (tmp_path / "EMPTY").write_text("\n")
    monkeypatch.chdir(tmp_path)
    if env is None:
        monkeypatch.delenv("STATEHITL_INBOX_TOKEN", raising=False)
    else:
        monkeypatch.setenv("STATEHITL_INBOX_TOKEN", env)
    code, _, err = cli("inbox", "serve", "--port", "0", *args, "--store", app_store)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1


def test_the_serve_help_names_every_token_source(cli: Any) -> None:
    code, out, _ = cli("inbox", "serve", "--help")
    assert code == 0
    for option in ("--token-file", "STATEHITL_INBOX_TOKEN", "--allowed-host", "--insecure-no-token"):
        assert option in out
    assert "process list" in " ".join(out.split())  # --token says why it is the last resort
