"""The ``statehitl`` command line: ``demo``, ``threads``, ``inbox``, ``worker``, ``deliveries``, ``draw``,
``dynamodb``, ``s3``.

``main(argv)`` returns the exit code instead of exiting, so tests and other programs can call it.
Bad input (an unknown thread, a store URL with no backend, an answer that is not y or n, a malformed
command line) is one line on stderr and exit code 2; a failed operation (a checkpoint conflict, a
corrupt record, a disk error) is one line and exit code 1. Subcommand modules are imported only when
their command runs, so ``statehitl --help`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from statehitl.cli._console import CliError, Console

__all__ = ["CliError", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is a ``CliError`` (one line, exit 2) rather than ``sys.exit``."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata is slow to import)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("statehitl")
        except PackageNotFoundError:
            found = "unknown"
        print(f"statehitl {found}", file=sys.stdout, flush=True)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The full ``statehitl`` argument parser."""
    from statehitl.cli import deliveries, demo, draw, dynamodb, inbox, s3, threads, worker

    parser = _Parser(
        prog="statehitl",
        description="statehitl: state machines that stop for a human and resume from a durable checkpoint.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    commands = parser.add_subparsers(dest="command",
                                     metavar="{demo,threads,inbox,worker,deliveries,draw,dynamodb,s3}")
    demo.add_parser(commands)
    threads.add_parser(commands)
    inbox.add_parser(commands)
    worker.add_parser(commands)
    deliveries.add_parser(commands)
    draw.add_parser(commands)
    dynamodb.add_parser(commands)
    s3.add_parser(commands)
    return parser


def _input_errors() -> tuple[type[BaseException], ...]:
    from statehitl.errors import (
        AppLoadError,
        CheckpointerNotFoundError,
        GraphValidationError,
        InterruptError,
        InvalidCursorError,
        InvalidThreadIdError,
        InvalidUpdateError,
        StorageConfigError,
        UnknownInboxItemError,
    )

    return (CliError, CheckpointerNotFoundError, StorageConfigError, InvalidThreadIdError, InvalidCursorError,
            InterruptError, GraphValidationError, InvalidUpdateError, UnknownInboxItemError, AppLoadError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    from statehitl.errors import StatehitlError

    console = Console.detect()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as exc:
        console.error(str(exc))
        return 2
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(console.err)
        return 2
    try:
        code: int = handler(args, console)
    except _input_errors() as exc:
        console.error(str(exc))
        return 2
    except StatehitlError as exc:
        console.error(str(exc))
        return 1
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except BrokenPipeError:  # `statehitl threads list | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:
        console.error(str(exc))
        return 1
    return code
