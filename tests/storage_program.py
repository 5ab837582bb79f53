"""One program of ``Storage`` calls, run on Strands' stores and on statehitl's, whose outcomes are compared.

Each step is a call and what came of it: the value it returned, or the error it raised, as ``("error",
message)`` for a ``StorageError`` of the store's own framework (its key errors carry Strands' words in
both) and ``("type", name)`` for anything else. Search results are compared as ``(key, score)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Step = tuple[str, Callable[[Any], Awaitable[Any]]]

BINARY = bytes(range(256)) * 4


def _steps_writing() -> list[Step]:
    return [
        ("write a/b.md", lambda s: s.write("a/b.md", b"dark mode toggle in settings")),
        ("write //a///c/", lambda s: s.write("//a///c/", b"a value under a collapsed key")),
        ("overwrite a/b.md", lambda s: s.write("a/b.md", b"the dark theme: where to toggle it")),
        ("write ab", lambda s: s.write("ab", b"")),
        ("write .env", lambda s: s.write(".env", b"SECRET=1")),
        ("write ..x/y", lambda s: s.write("..x/y", BINARY)),
        ("write notes/caf\u00e9 menu.txt", lambda s: s.write("notes/caf\u00e9 menu.txt", b"dark roast coffee")),
        ("write z/@=_/x", lambda s: s.write("z/@=_/x", b"odd characters")),
    ]


def _steps_refused() -> list[Step]:
    return [
        ("write ''", lambda s: s.write("", b"x")),
        ("write /", lambda s: s.write("///", b"x")),
        ("write a\\b", lambda s: s.write("a\\b", b"x")),
        ("write ../escape", lambda s: s.write("../escape", b"x")),
        ("write a/../b", lambda s: s.write("a/../b", b"x")),
        ("read a/..", lambda s: s.read("a/..")),
        ("delete ..", lambda s: s.delete("..")),
        ("list ../", lambda s: s.list("../")),
        ("list a\\", lambda s: s.list("a\\")),
    ]


def _steps_reading() -> list[Step]:
    return [
        ("read a/b.md", lambda s: s.read("a/b.md")),
        ("read /a/c", lambda s: s.read("/a/c")),
        ("read missing", lambda s: s.read("no/such/key")),
        ("read ab", lambda s: s.read("ab")),
        ("read ..x/y", lambda s: s.read("..x/y")),
        ("list ''", lambda s: s.list("")),
        ("list a", lambda s: s.list("a")),
        ("list a/", lambda s: s.list("a/")),
        ("list //a//", lambda s: s.list("//a//")),
        ("list notes/caf", lambda s: s.list("notes/caf")),
        ("list nothing/", lambda s: s.list("nothing/")),
        ("search dark toggle", lambda s: _ranked(s.search("dark toggle"))),
        ("search the of", lambda s: _ranked(s.search("the of"))),
        ("search coffee", lambda s: _ranked(s.search("COFFEE, menu?"))),
    ]


def _steps_namespaces() -> list[Step]:
    return [
        ("namespace a: list", lambda s: s.namespace("a").list("")),
        ("namespace /a//: read b.md", lambda s: s.namespace("/a//").read("b.md")),
        ("namespace a: write c/d", lambda s: s.namespace("a").write("c/d", b"written through a view")),
        ("namespace a/c: list", lambda s: s.namespace("a").namespace("c").list("")),
        ("namespace '': list a/", lambda s: s.namespace("").list("a/")),
        ("parent sees a/c/d", lambda s: s.read("a/c/d")),
        ("namespace a: search", lambda s: _ranked(s.namespace("a").search("view written"))),
        ("namespace ..: refused", lambda s: _sync(lambda: s.namespace("../up"))),
    ]


def _steps_deleting() -> list[Step]:
    return [
        ("delete a (a/b.md and ab stay)", lambda s: s.delete("a")),
        ("delete missing", lambda s: s.delete("no/such/key")),
        ("delete ab", lambda s: s.delete("ab")),
        ("namespace a: delete c/d", lambda s: s.namespace("a").delete("c/d")),
        ("list after deletes", lambda s: s.list("")),
    ]


def program() -> list[Step]:
    return [*_steps_writing(), *_steps_refused(), *_steps_reading(), *_steps_namespaces(), *_steps_deleting()]


async def _ranked(search: Awaitable[list[Any]]) -> list[tuple[str, float]]:
    return [(result.key, result.score) for result in await search]


async def _sync(call: Callable[[], Any]) -> str:
    call()
    return "built"


def run(store: Any, error_type: type[BaseException], steps: list[Step] | None = None) -> list[tuple[str, Any]]:
    """Each step's label and outcome on ``store``; ``error_type`` is its framework's ``StorageError``."""

    async def go() -> list[tuple[str, Any]]:
        outcomes: list[tuple[str, Any]] = []
        for label, step in steps if steps is not None else program():
            try:
                outcomes.append((label, await step(store)))
            except error_type as error:
                outcomes.append((label, ("error", str(error))))
            except Exception as error:  # the same kind of mistake must fail the same way on both
                outcomes.append((label, ("type", type(error).__name__)))
        return outcomes

    return asyncio.run(go())
