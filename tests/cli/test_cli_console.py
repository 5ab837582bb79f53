"""Output details: color only on a terminal without NO_COLOR, ASCII when the stream cannot do Unicode."""

from __future__ import annotations

import io
import sys

import pytest
from cli_support import Piped

from statehitl.cli import main
from statehitl.cli._console import Console


class TTYOut(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def _stream(encoding: str = "utf-8", *, tty: bool = False) -> io.TextIOWrapper:
    cls = TTYOut if tty else io.TextIOWrapper
    return cls(io.BytesIO(), encoding=encoding, write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode(stream.encoding)


@pytest.mark.parametrize(("tty", "env", "color"), [
    (True, {}, True),
    (True, {"NO_COLOR": "1"}, False),
    (True, {"TERM": "dumb"}, False),
    (False, {}, False),
])
def test_color_only_on_a_terminal_that_wants_it(monkeypatch, tty, env, color):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for key, value in env.items():
        monkeypatch.setenv(key, value)

    console = Console.detect(_stream(tty=tty), _stream())

    assert console.color is color
    assert (console.style("x", "bold") != "x") is color


def test_ascii_glyphs_when_the_stream_cannot_encode_unicode():
    assert Console.detect(_stream("ascii"), _stream()).g("arrow") == "-->"
    assert Console.detect(_stream("utf-8"), _stream()).g("arrow") == "\u2500\u2500\u25b6"


def test_the_demo_runs_on_an_ascii_terminal(workdir, monkeypatch):
    out, err = _stream("ascii"), _stream("ascii")
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)

    code = main(["demo", "--thread", "t1", "--no-wait", "--customer", "Zo\u00eb"])

    text = _text(out)
    assert code == 0, _text(err)
    assert "  assess  ..> pay | approve" in text
    assert "  step 2  > approve" in text
    assert "Approve refund of $120.00 to Zo\\xeb?" in text  # escaped, not a UnicodeEncodeError
    assert "statehitl demo --resume t1 --answer y" in text


def test_the_demo_in_color(workdir, monkeypatch):
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "xterm")
    out = _stream(tty=True)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stdin", Piped(""))

    assert main(["demo", "--thread", "t1", "--no-wait"]) == 0
    text = _text(out)
    assert "\x1b[1m" in text
    assert "\x1b[0m" in text


def test_help_exits_0_and_no_command_exits_2(cli):
    helped = cli("--help")
    assert helped.code == 0
    assert "demo" in helped.out

    bare = cli()
    assert bare.code == 2
    assert "{demo,threads,inbox,worker,deliveries,draw,dynamodb,s3}" in bare.err
