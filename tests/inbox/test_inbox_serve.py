"""``statehitl inbox serve`` as a real process, over raw HTTP: where its token comes from (and that the
process list does not show it), the warnings it prints, and the Host rule on real binds, a wildcard
one and a reverse proxy's name included."""

from __future__ import annotations

import http.client
from contextlib import contextmanager
from pathlib import Path

import pytest
from served import Served, serve

pytestmark = pytest.mark.slow

TOKEN = "tok-7f3a9c"
running = contextmanager(serve)


def request(served: Served, path: str, **headers: str) -> tuple[int, str]:
    """One request to the server's port on loopback with exactly these headers (``Host`` too, when
    given): what a browser, or an attacker's page, would send."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def cmdline(served: Served) -> str:
    """What every user of the machine can read about the process."""
    return Path(f"/proc/{served.process.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "inbox-token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


def test_a_token_file_keeps_the_token_out_of_the_process_list(app_store: str, action_log: Path,
                                                              token_file: Path) -> None:
    with running(app_store, action_log, "--token-file", str(token_file)) as served:
        assert TOKEN not in cmdline(served)
        assert str(token_file) in cmdline(served)
        assert request(served, "/api/pending")[0] == 401
        assert request(served, "/api/pending", Authorization="Bearer tok-7f3a9")[0] == 401
        assert request(served, "/api/pending", Authorization=f"Bearer {TOKEN}")[0] == 200
        assert served.stderr() == ""  # a private file, from a file: nothing to warn about


def test_the_environment_gives_the_token_too(app_store: str, action_log: Path) -> None:
    with running(app_store, action_log, env={"STATEHITL_INBOX_TOKEN": TOKEN}) as served:
        assert TOKEN not in cmdline(served)
        assert request(served, "/api/pending")[0] == 401
        assert request(served, "/api/pending", Authorization=f"Bearer {TOKEN}")[0] == 200


def test_a_token_on_the_command_line_works_but_warns(app_store: str, action_log: Path) -> None:
    with running(app_store, action_log, "--token", TOKEN) as served:
        assert request(served, "/api/pending", Authorization=f"Bearer {TOKEN}")[0] == 200
        warning = " ".join(served.stderr().split())
        assert "warning: --token is visible to every user of this machine" in warning
        assert "--token-file PATH or $STATEHITL_INBOX_TOKEN" in warning


def test_a_token_file_others_can_read_is_named_in_a_warning(app_store: str, action_log: Path, token_file: Path) -> None:
    token_file.chmod(0o644)
    with running(app_store, action_log, "--token-file", str(token_file)) as served:
        assert f"{token_file} can be read by other users of this machine (chmod 600 {token_file})" in " ".join(
            served.stderr().split())
        assert request(served, "/api/pending", Authorization=f"Bearer {TOKEN}")[0] == 200


def test_an_open_wildcard_bind_needs_the_flag_warns_loudly_and_still_checks_host(app_store: str,
                                                                                  action_log: Path) -> None:
    with running(app_store, action_log, "--host", "0.0.0.0", "--insecure-no-token") as served:
        assert served.url == f"http://0.0.0.0:{served.port}"
        assert "warning: INSECURE: --host 0.0.0.0 without a token: ANYONE who can reach this address" in " ".join(
            served.stderr().split())
        assert request(served, "/api/pending", Host=f"127.0.0.1:{served.port}")[0] == 200  # the address reached
        assert request(served, "/api/pending", Host=f"0.0.0.0:{served.port}")[0] == 200  # the address announced
        status, body = request(served, "/api/pending", Host=f"evil.test:{served.port}")
        assert status == 421
        assert "not to Host 'evil.test:" in body


def test_a_reverse_proxy_name_is_allowed_by_the_command_line(app_store: str, action_log: Path) -> None:
    with running(app_store, action_log, "--allowed-host", "inbox.example.com", "--allowed-host", "ops.test") as served:
        assert request(served, "/", Host="inbox.example.com")[0] == 200
        assert request(served, "/", Host="ops.test")[0] == 200
        assert request(served, "/", Host=f"localhost:{served.port}")[0] == 200
        status, body = request(served, "/", Host="evil.test")
        assert status == 421
        assert "inbox.example.com" in body
