"""``statehitl draw MODULE:ATTR``: a machine as Mermaid (or as a text diagram), found by import path.

The target may be a compiled app (anything with a ``.machine``), a ``StateGraph`` (compiled here,
without a checkpointer), a ``Machine``, or a zero-argument callable returning one of those.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from typing import Any

from statehitl.cli._console import CliError, Console
from statehitl.machine import END, START, Machine

_EXAMPLE = "statehitl.cli.demo:build_graph"


def add_parser(commands: Any) -> None:
    """Register ``draw`` on the top-level subcommands."""
    parser = commands.add_parser(
        "draw",
        help="print a machine as Mermaid (or text), given MODULE:ATTR",
        description=(
            "Print the Mermaid flowchart of a compiled app, a StateGraph, a Machine, or a zero-argument "
            f"callable returning one, found at MODULE:ATTR (e.g. {_EXAMPLE}). The current directory is "
            "importable."
        ),
    )
    parser.add_argument("target", metavar="MODULE:ATTR", help=f"import path, e.g. {_EXAMPLE}")
    parser.add_argument(
        "--format",
        choices=("mermaid", "text"),
        default="mermaid",
        help="mermaid (default) or a plain text diagram",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    machine = load_machine(args.target)
    if args.format == "text":
        console.print(text_diagram(machine, console))
    else:
        console.write(machine.draw_mermaid())
    return 0


def load_machine(target: str) -> Machine:
    """Import ``MODULE:ATTR`` (``ATTR`` may be dotted) and turn what is there into its ``Machine``."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise CliError(f"draw needs MODULE:ATTR, e.g. {_EXAMPLE}; got {target!r}")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # what `python -m` would do; the console script does not
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise CliError(
                f"cannot import module {module_name!r} (no module named {missing!r}); run from the directory "
                "that holds it or install its package"
            ) from None
        raise _failed(f"importing {module_name!r}", exc, f"import {module_name}") from None
    except Exception as exc:  # the user's module itself is broken
        raise _failed(f"importing {module_name!r}", exc, f"import {module_name}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CliError(f"{module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return _as_machine(obj, target, may_call=True)


def _as_machine(obj: Any, target: str, *, may_call: bool) -> Machine:
    from statehitl.graph.builder import StateGraph

    if isinstance(obj, Machine):
        return obj
    if isinstance(obj, StateGraph):
        compiled = obj.compile()
        return compiled.machine
    machine = getattr(obj, "machine", None)
    if isinstance(machine, Machine):
        return machine
    if may_call and callable(obj) and not isinstance(obj, type):
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            signature = None
        if signature is not None:
            required = [
                p.name
                for p in signature.parameters.values()
                if p.default is inspect.Parameter.empty
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            ]
            if required:
                raise CliError(
                    f"{target} is a callable that needs arguments ({', '.join(required)}); point draw at a "
                    "zero-argument function, a StateGraph or a compiled app"
                )
        try:
            built = obj()
        except Exception as exc:
            module_name, _, attr = target.partition(":")
            raise _failed(f"calling {target}()", exc, f"import {module_name}; {module_name}.{attr}()") from None
        return _as_machine(built, target, may_call=False)
    what = f"a callable returning {type(obj).__name__}" if not may_call else type(obj).__name__
    raise CliError(
        f"{target} is {what}, not something drawable; expected a compiled app, a StateGraph, a Machine "
        "or a zero-argument callable returning one"
    )


def _failed(what: str, exc: Exception, code: str) -> CliError:
    return CliError(f"{what} failed: {type(exc).__name__}: {exc} (for the traceback, run: python -c '{code}')")


def _label(name: str) -> str:
    return {START: "START", END: "END"}.get(name, name)


def text_diagram(machine: Machine, console: Console, *, indent: str = "  ") -> str:
    """The machine as lines ``source ──▶ target`` (always) and ``source ┈┈▶ a | b`` (chosen by the state).

    Sources appear in build order, starting at START; a router whose targets are not declared (no path
    map, no ``Literal`` return type) is shown as going to "any node".
    """
    open_routers = {r.source for r in machine.routers if r.targets is None}
    sources = [START, *machine.nodes]
    width = max(len(_label(s)) for s in sources)
    lines: list[str] = []
    for source in sources:
        always: list[str] = []
        chosen: list[str] = []
        for _, target, data in machine.graph.out_edges(source, data=True):
            (always if data["kind"] == "edge" else chosen).append(_label(target))
        name = console.style(_label(source).ljust(width), "bold")
        blank = " " * width
        rows: list[str] = []
        if always:
            rows.append(f"{console.g('arrow')} {', '.join(always)}")
        if chosen:
            shown = "any node (decided at run time)" if source in open_routers else " | ".join(chosen)
            rows.append(f"{console.g('route')} {shown}")
        for i, row in enumerate(rows):
            lines.append(f"{indent}{name if i == 0 else blank} {row}")
    legend = f"{console.g('arrow')} always, {console.g('route')} chosen by the state"
    lines.append(f"{indent}{console.style(f'({legend})', 'dim')}")
    return "\n".join(lines)
