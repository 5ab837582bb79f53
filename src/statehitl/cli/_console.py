"""Terminal output for the CLI: plain text, Unicode glyphs when the stream can encode them, ANSI color
only on a terminal that did not opt out (``NO_COLOR``, ``TERM=dumb``). No dependencies.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

DEFAULT_STORE = "file://.statehitl"
"""Where the CLI keeps and looks for threads unless ``--store`` says otherwise."""

COMMAND_ENV = "STATEHITL_COMMAND"
"""How the user reaches this CLI when ``statehitl`` is not on PATH (``./dev.sh cli`` sets it)."""


class CliError(Exception):
    """Bad input on the command line: printed as one line on stderr, exit code 2."""


def count_text(n: int, noun: str) -> str:
    """``1 thread``, ``3 threads``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def table_head(c: Console, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[int]:
    """Print ``header`` in bold over ``rows``; the widths of every column but the last (left unpadded,
    as it holds free text), each as wide as its widest cell."""
    widths = [max(len(row[n]) for row in (*rows, header)) for n in range(len(header) - 1)]
    c.print(c.style("  ".join([*(h.ljust(w) for h, w in zip(header, widths, strict=False)), header[-1]]), "bold"))
    return widths


def print_table(c: Console, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    """``header`` over ``rows``, every column but the last padded to its widest cell (``table_head``)."""
    widths = table_head(c, header, rows)
    for row in rows:
        c.print("  ".join([*(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=False)), row[-1]]))


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(text.split())


def cli_command(*words: str, store: str = DEFAULT_STORE) -> str:
    """A ``statehitl WORDS... [--store URL]`` command line to print as a hint, quoted for a shell.

    The program is ``$STATEHITL_COMMAND`` when set, so a hint printed under ``./dev.sh`` can be pasted as
    is; ``--store`` is added only when it is not the default, so the usual hint stays short.
    """
    program = shlex.split(os.environ.get(COMMAND_ENV, "statehitl")) or ["statehitl"]
    extra = [] if store == DEFAULT_STORE else ["--store", store]
    return shlex.join([*program, *words, *extra])


def url_query(**options: str | None) -> str:
    """``?name=value&...`` for the options given (None and empty ones left out), to end a store URL printed as a
    hint: a bucket or table made with a region, an endpoint or a profile is reached only with them."""
    given = "&".join(f"{name}={value}" for name, value in options.items() if value)
    return f"?{given}" if given else ""


def compact_json(value: Any) -> str:
    """A short, readable, single-line JSON rendering (non-JSON values fall back to ``repr``)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)


def hanging(head: str, parts: list[str]) -> list[str]:
    """``parts`` under one another, the first after ``head``, so a label's lines read as one column."""
    return [f"{head if i == 0 else ' ' * len(head)}{part}" for i, part in enumerate(parts)]


_UNICODE = {
    "arrow": "\u2500\u2500\u25b6",  # ──▶
    "route": "\u2508\u2508\u25b6",  # ┈┈▶
    "enter": "\u25b6",  # ▶
    "done": "\u2713",  # ✓
    "pause": "\u23f8",  # ⏸
    "answer": "\u21b3",  # ↳
    "cancel": "\u2717",  # ✗
    "dot": "\u00b7",  # ·
}
_ASCII = {
    "arrow": "-->",
    "route": "..>",
    "enter": ">",
    "done": "+",
    "pause": "||",
    "answer": "<-",
    "cancel": "x",
    "dot": "-",
}
_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}


def _can_encode(stream: TextIO, text: str) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _wants_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclass
class Console:
    """Where the CLI writes: ``out`` for results, ``err`` for errors; knows its glyphs and colors."""

    out: TextIO
    err: TextIO
    color: bool
    glyphs: dict[str, str]

    @classmethod
    def detect(cls, out: TextIO | None = None, err: TextIO | None = None) -> Console:
        """Look at the real streams (at call time, so test capture is honoured)."""
        out = out if out is not None else sys.stdout
        err = err if err is not None else sys.stderr
        unicode = _can_encode(out, "".join(_UNICODE.values()) + "\u2500\u2502")
        return cls(out, err, _wants_color(out), _UNICODE if unicode else _ASCII)

    def g(self, name: str) -> str:
        """A glyph by name (``arrow``, ``route``, ``enter``, ``done``, ``pause``, ...)."""
        return self.glyphs[name]

    def style(self, text: str, *styles: str) -> str:
        """``text`` wrapped in ANSI codes when color is on, unchanged otherwise."""
        if not self.color or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def print(self, text: str = "") -> None:
        """One line (or block) on stdout, flushed so a pipe sees transitions as they happen."""
        print(self.safe(text), file=self.out, flush=True)

    def write(self, text: str) -> None:
        """``text`` as is (no newline added), e.g. a prompt."""
        self.out.write(self.safe(text))
        self.out.flush()

    def error(self, message: str) -> None:
        """One line on stderr: ``statehitl: error: ...``."""
        line = f"statehitl: error: {one_line(message)}"
        if not _can_encode(self.err, line):
            line = line.encode("ascii", "backslashreplace").decode("ascii")
        print(line, file=self.err, flush=True)

    def safe(self, text: str) -> str:
        """``text`` made printable on ``out`` (characters it cannot encode become escapes)."""
        if _can_encode(self.out, text):
            return text
        return text.encode("ascii", "backslashreplace").decode("ascii")
