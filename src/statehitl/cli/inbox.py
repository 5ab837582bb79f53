"""``statehitl inbox``: what waits on a human across a store, answered from the terminal or a web page.

``statehitl inbox`` lists every pending interrupt (newest first) from the thread index; ``show``,
``answer``, ``sweep`` and ``serve`` work on the same store. Like ``threads``, it needs no import of the
app that wrote the threads, except to resume them at once (``--app module:build``).
"""

from __future__ import annotations

import argparse
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statehitl.cli._console import (
    DEFAULT_STORE,
    CliError,
    Console,
    cli_command,
    compact_json,
    count_text,
    hanging,
    table_head,
    when_text,
)

if TYPE_CHECKING:
    from statehitl.inbox import AppBuilder, PendingInterrupt

__all__ = ["DEFAULT_PORT", "TOKEN_ENV", "add_parser", "cmd_answer", "cmd_list", "cmd_serve", "cmd_show", "cmd_sweep"]

DEFAULT_PORT = 8421
TOKEN_ENV = "STATEHITL_INBOX_TOKEN"
"""Where ``inbox serve`` reads its token when no option names one: unlike ``--token``, the environment of
a process is not readable by other users of the machine."""
_RESPONSE_HELP = ("the answer, as JSON (true, 42, {\"approved\": false}, \"text\"); anything that is not JSON, "
                  "such as a bare y or ship it, is taken as that string")
_APP_HELP = ("module:build, a callable build(thread_id) returning the app that runs the thread (a compiled "
             "StateGraph, an Agent on that thread's session, or a Graph/Swarm): with it the thread is resumed at "
             "once; without it the answer is stored and the app applies it with "
             "statehitl.inbox.resume_answered(app, thread_id)")


def add_parser(commands: Any) -> None:
    """Register ``inbox`` and its subcommands on the top-level subcommands."""
    parser = commands.add_parser(
        "inbox",
        help="list and answer the interrupts waiting on a human, in the terminal or a web page",
        description="Every interrupt waiting on a human in a store (file://DIR, s3://..., dynamodb://...), newest "
                    "first, read from the thread index. With no subcommand: the list.",
    )

    def store_option(p: argparse.ArgumentParser, default: Any) -> None:
        p.add_argument("--store", default=default, metavar="URL",
                       help=f"checkpoint store URL (default: {DEFAULT_STORE})")

    def app_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--app", metavar="MODULE:BUILD", help=_APP_HELP)

    store_option(parser, DEFAULT_STORE)
    parser.set_defaults(handler=cmd_list)
    sub = parser.add_subparsers(dest="inbox_command", metavar="{list,show,answer,sweep,serve}")
    # The subcommands take --store too, after their name; unset there, the one before it holds.
    ls = sub.add_parser("list", help="the pending interrupts (the default)",
                        description="One line per pending interrupt, newest first: id, thread, name, age, expiry, "
                                    "reason.")
    store_option(ls, argparse.SUPPRESS)
    ls.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="one pending interrupt in full",
                          description="One pending interrupt: its thread, where it was raised, its reason, its "
                                      "deadline and the response it expects.")
    show.add_argument("id", metavar="ID", help="the interrupt's id (or a unique start of it)")
    store_option(show, argparse.SUPPRESS)
    show.set_defaults(handler=cmd_show)

    answer = sub.add_parser("answer", help="answer a pending interrupt",
                            description="Answer a pending interrupt. The first answer wins: a second one (or one "
                                        "after an expiry default) is refused with 'already answered'.")
    answer.add_argument("id", metavar="ID", help="the interrupt's id (or a unique start of it)")
    answer.add_argument("response", metavar="RESPONSE", help=_RESPONSE_HELP)
    answer.add_argument("--as", dest="responder", metavar="NAME", help="who is answering (kept with the answer)")
    store_option(answer, argparse.SUPPRESS)
    app_option(answer)
    answer.set_defaults(handler=cmd_answer)

    sweep = sub.add_parser("sweep", help="answer every expired interrupt with its on_expire default",
                           description="Answer every interrupt whose deadline (expires_in=/expires_at=) has "
                                       "passed with its on_expire default, exactly once however many sweeps run; "
                                       "with --app, also resume the threads whose answers are stored.")
    store_option(sweep, argparse.SUPPRESS)
    app_option(sweep)
    sweep.set_defaults(handler=cmd_sweep)

    serve = sub.add_parser("serve", help="a web page over the store: the list, each reason, answering",
                           description="Serve the inbox as a small web page (needs the inbox extra, "
                                       "statehitl[inbox]). Binds to loopback unless --host says otherwise, and "
                                       "answers only to its own address as Host (and --allowed-host names).")
    store_option(serve, argparse.SUPPRESS)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default 127.0.0.1, this machine only; any other needs a token)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    serve.add_argument("--token-file", metavar="PATH",
                       help="require the token in PATH (its whole content, surrounding whitespace dropped): every "
                            "request then needs 'Authorization: Bearer TOKEN', or the cookie a browser gets by "
                            f"opening /?token=TOKEN once; without it, ${TOKEN_ENV} is the token when set")
    serve.add_argument("--token", metavar="T",
                       help="the token on the command line: other users of this machine can read it in the process "
                            f"list, so prefer --token-file or ${TOKEN_ENV}")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                       help="also answer to this Host (a reverse proxy's name as its Host header carries it: "
                            "inbox.example.com, or inbox.example.com:8443); repeatable")
    serve.add_argument("--insecure-no-token", action="store_true",
                       help="serve a --host other than loopback without a token (anyone who reaches it can answer)")
    app_option(serve)
    serve.set_defaults(handler=cmd_serve)


def _builder(spec: str | None) -> AppBuilder | None:
    from statehitl.inbox import load_app

    return None if spec is None else load_app(spec)


def _where(item: PendingInterrupt) -> str:
    where = f"node {item.node}" if item.node else "the run"
    return where if item.source == "node" else f"{where} ({item.source})"


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    from statehitl.inbox import pending
    from statehitl.inbox.text import age_text, expiry_text

    items = pending(args.store)
    c = console
    if not items:
        c.print(f"nothing waiting on a human in {args.store}")
        return 0
    now = time.time()
    table = [(i.id, i.thread_id, i.name, age_text(i.age(now)), expiry_text(i.expires_at, now),
              compact_json(i.reason)) for i in items]
    header = ("ID", "THREAD", "NAME", "AGE", "EXPIRES", "REASON")
    widths = table_head(c, header, table)
    for row in table:
        c.print("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[5]]))
    c.print(c.style(f"answer one with: {cli_command('inbox', 'answer', 'ID', 'RESPONSE', store=args.store)}", "dim"))
    return 0


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    from statehitl.inbox import find_pending
    from statehitl.inbox.text import age_text, expiry_text

    item = find_pending(args.store, args.id)
    c, now = console, time.time()
    c.print(f"{c.style('interrupt ' + item.name, 'bold')}  [id {item.id}]")
    fields = [
        ("thread", [f"{item.thread_id} ({item.machine})"]),
        ("raised in", [_where(item)]),
        ("waiting", [f"{age_text(item.age(now))} (since {when_text(item.since)})"]),
        ("expires", [expiry_text(item.expires_at, now) + (f", then answered {compact_json(item.on_expire)}"
                                                          if item.expires_at is not None else "")]),
        ("reason", [compact_json(item.reason)]),
        ("expects", [compact_json(item.response_schema) if item.response_schema else "any JSON value"]),
    ]
    for label, lines in fields:
        for line in hanging(f"  {label.ljust(9)}  ", lines):
            c.print(line)
    c.print(c.style(f"answer with: {cli_command('inbox', 'answer', item.id, 'RESPONSE', store=args.store)}", "dim"))
    return 0


def cmd_answer(args: argparse.Namespace, console: Console) -> int:
    from statehitl.inbox import answer
    from statehitl.inbox.text import parse_response

    done = answer(args.store, args.id, parse_response(args.response), responder=args.responder,
                  build=_builder(args.app))
    item = done.interrupt
    c = console
    c.print(f"answered {item.name} on thread {item.thread_id} with {compact_json(done.answer.response)}")
    if args.app is None:
        c.print(c.style("stored: the app applies it on its next statehitl.inbox.resume_answered(app, "
                        f"{item.thread_id!r}) (or answer with --app module:build to resume it now)", "dim"))
    elif done.status is None:
        c.print("stored; another process is resuming the thread with it")
    else:
        c.print(f"resumed thread {item.thread_id}: {done.status}")
    return 0


def cmd_sweep(args: argparse.Namespace, console: Console) -> int:
    from statehitl.inbox import sweep

    report = sweep(args.store, app=_builder(args.app))
    expired = ", ".join(f"{i.name} on {i.thread_id}" for i in report.expired)
    console.print(f"answered {count_text(len(report.expired), 'expired interrupt')} "
                  f"with their default{': ' + expired if expired else ''}")
    if args.app is not None:
        console.print(f"resumed {count_text(len(report.resumed), 'thread')}"
                      + (f": {', '.join(report.resumed)}" if report.resumed else ""))
    return 0


def _warn(console: Console, message: str) -> None:
    """A warning on stderr, where it cannot be mixed into the output a script reads."""
    print(console.style(f"statehitl: warning: {message}", "bold", "yellow"), file=console.err, flush=True)


def _token(args: argparse.Namespace, console: Console) -> str | None:
    """The token ``inbox serve`` requires: ``--token-file``, ``--token`` (with a warning: the process list
    shows it to every user), or ``$STATEHITL_INBOX_TOKEN``; None when none is given."""
    if args.token is not None and args.token_file is not None:
        raise CliError("give the token one way: --token-file PATH, $STATEHITL_INBOX_TOKEN or --token")
    if args.token_file is not None:
        path = Path(args.token_file)
        try:
            token = path.read_text(encoding="utf-8").strip()
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read --token-file {path}: {getattr(exc, 'strerror', None) or exc}") from None
        if not token:
            raise CliError(f"--token-file {path} is empty")
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            _warn(console, f"{path} can be read by other users of this machine (chmod 600 {path})")
        return token
    if args.token is not None:
        if not args.token.strip():
            raise CliError("--token is empty")
        _warn(console, f"--token is visible to every user of this machine (ps, /proc/PID/cmdline); use "
                       f"--token-file PATH or ${TOKEN_ENV} instead")
        return str(args.token).strip()
    if TOKEN_ENV in os.environ:
        token = os.environ[TOKEN_ENV].strip()
        if not token:
            raise CliError(f"${TOKEN_ENV} is set but empty")
        return token
    return None


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    try:
        from statehitl.inbox.web import allowed_host_names, exposure_error, is_loopback, serve
    except ImportError as exc:
        from statehitl._install import install_command

        raise CliError(f"statehitl inbox serve needs the inbox extra ({exc}); install it with: "
                       f"{install_command('inbox')}") from None
    if not 0 <= args.port < 65536:
        raise CliError(f"--port must be 0-65535, got {args.port}")
    try:
        allowed = allowed_host_names(args.allowed_host)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    token = _token(args, console)
    if token is not None and args.insecure_no_token:
        raise CliError("--insecure-no-token with a token: drop one of them")
    refused = exposure_error(args.host, token, args.insecure_no_token)
    if refused is not None:
        raise CliError(refused)
    if token is None and not is_loopback(args.host):
        _warn(console, f"INSECURE: --host {args.host} without a token: ANYONE who can reach this address can read "
                       "every pending interrupt and answer it")
    serve(args.store, host=args.host, port=args.port, token=token, build=_builder(args.app), allowed_hosts=allowed,
          insecure_no_token=args.insecure_no_token, announce=console.print)
    return 0
