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

from statehitl._text import when_text
from statehitl.cli._console import (
    DEFAULT_STORE,
    CliError,
    Console,
    cli_command,
    compact_json,
    count_text,
    hanging,
    print_table,
)

if TYPE_CHECKING:
    from statehitl.inbox import AppBuilder, PendingInterrupt, UnappliedAnswer
    from statehitl.inbox.identity import Identity


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
    answer.add_argument("--as", dest="responder", metavar="NAME",
                        help="who is answering (kept with the answer; an interrupt that names who may answer "
                             "takes only them): the terminal trusts its user, as it trusts them with the store")
    answer.add_argument("--group", dest="groups", action="append", default=[], metavar="GROUP",
                        help="a group the responder belongs to, for an interrupt that lets a group answer "
                             "(responders=['group:GROUP']); repeatable")
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
                       help="require the token in PATH (one line, surrounding whitespace dropped: 'TOKEN', or "
                            "'TOKEN NAME [GROUP,GROUP...]' to answer as NAME): every request then needs "
                            "'Authorization: Bearer TOKEN', or the cookie a browser gets by opening /?token=TOKEN "
                            f"once; without it, ${TOKEN_ENV} is the token when set")
    serve.add_argument("--token", metavar="T",
                       help="the token on the command line: other users of this machine can read it in the process "
                            f"list, so prefer --token-file or ${TOKEN_ENV}")
    serve.add_argument("--tokens-file", metavar="PATH",
                       help="tokens that name who holds them, one per line 'TOKEN NAME [GROUP,GROUP...]' (or JSON: "
                            "[{\"token\": ..., \"name\": ..., \"groups\": [...]}]): the page then answers as the "
                            "token's holder, with no name box (instead of --token-file)")
    serve.add_argument("--identity-header", metavar="HEADER",
                       help="behind a reverse proxy that signs users in: take who answers from this request header "
                            "(X-Forwarded-User); every request must carry it, so only the proxy may reach the port")
    serve.add_argument("--groups-header", metavar="HEADER",
                       help="with --identity-header: the header holding the user's groups, comma-separated "
                            "(X-Forwarded-Groups)")
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
    from statehitl._sync import run_sync
    from statehitl.cli.stores import open_existing
    from statehitl.inbox.listing import scan

    looked = run_sync(scan(open_existing(args.store)))
    c = console
    if looked.pending:
        _pending_table(args, console, looked.pending)
    else:
        c.print(f"nothing waiting on a human in {args.store}")
    if looked.unapplied:
        _unapplied_table(console, looked.unapplied)
    for thread, why in sorted(looked.unreadable.items()):  # one bad entry must not hide the others: say so
        _warn(console, f"thread {thread}: its index entry cannot be read, so its interrupts are not listed: {why}")
    return 0


def _pending_table(args: argparse.Namespace, console: Console, items: list[PendingInterrupt]) -> None:
    from statehitl.inbox.text import age_text, expiry_text

    c = console
    now = time.time()
    who = any(i.responders for i in items)  # the column only when some interrupt says who may answer
    table = [(i.id, i.thread_id, i.name, age_text(i.age(now)), expiry_text(i.expires_at, now),
              *([", ".join(i.responders or ["anyone"])] if who else []), compact_json(i.reason)) for i in items]
    header = ("ID", "THREAD", "NAME", "AGE", "EXPIRES", *(["WHO"] if who else []), "REASON")
    print_table(c, header, table)
    c.print(c.style(f"answer one with: {cli_command('inbox', 'answer', 'ID', 'RESPONSE', store=args.store)}", "dim"))


def _unapplied_table(console: Console, answers: list[UnappliedAnswer]) -> None:
    """The answers stored and not yet applied: no longer waiting on a human, not yet acted on either."""
    from statehitl.inbox.text import age_text

    c = console
    now = time.time()
    c.print()
    c.print(f"answered, not yet applied ({len(answers)}):")
    table = [(a.id, a.thread_id, a.name, f"by {a.responder or 'nobody named'} ({a.via})",
              f"{age_text(max(0.0, now - a.answered_at))} ago") for a in answers]
    print_table(c, ("ID", "THREAD", "NAME", "ANSWERED", "WHEN"), table)
    c.print(c.style("a worker applies them (statehitl worker --app module:build), or the app's next call on the thread",
                    "dim"))


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    from statehitl.cli.stores import open_existing
    from statehitl.inbox import find_pending
    from statehitl.inbox.text import age_text, expiry_text
    from statehitl.responders import describe

    open_existing(args.store)  # a mistyped directory is said, not an unknown id
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
        ("may answer", [describe(item.responders) if item.responders else "anyone"]),
    ]
    for label, lines in fields:
        for line in hanging(f"  {label.ljust(10)}  ", lines):
            c.print(line)
    c.print(c.style(f"answer with: {cli_command('inbox', 'answer', item.id, 'RESPONSE', store=args.store)}", "dim"))
    return 0


def cmd_answer(args: argparse.Namespace, console: Console) -> int:
    from statehitl.cli.stores import open_existing
    from statehitl.inbox import answer
    from statehitl.inbox.text import parse_response

    open_existing(args.store)  # a mistyped directory is said, not an unknown id
    done = answer(args.store, args.id, parse_response(args.response), responder=args.responder,
                  groups=args.groups, build=_builder(args.app))
    item = done.interrupt
    c = console
    c.print(f"answered {item.name} on thread {item.thread_id} with {compact_json(done.answer.response)}")
    bound = done.bound_by()
    if bound is not None:
        c.print(bound)
    if args.app is None:
        c.print(c.style("stored: a worker on this store applies it (statehitl worker --app module:build), or the "
                        "app's next call on the thread without answers (invoke(None), a bare agent call, "
                        f"statehitl.inbox.resume_answered(app, {item.thread_id!r})); answer with --app module:build "
                        "to resume it now", "dim"))
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


def _read_secret(option: str, path: Path, console: Console) -> str:
    """A file of secrets, named in a warning when other users of the machine can read it."""
    try:
        text = path.read_text(encoding="utf-8").strip()
        mode = path.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {option} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not text:
        raise CliError(f"{option} {path} is empty")
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        _warn(console, f"{path} can be read by other users of this machine (chmod 600 {path})")
    return text


def _one_token(text: str, where: str) -> dict[str, Identity]:
    """A single token, as ``TOKEN`` (it names nobody) or ``TOKEN NAME [GROUP,GROUP...]``."""
    from statehitl.inbox.identity import parse_token

    if "\n" in text:
        raise CliError(f"{where} holds more than one line; one token goes there, several in --tokens-file PATH")
    try:
        token, identity = parse_token(text, where)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    return {token: identity}


def _tokens(args: argparse.Namespace, console: Console) -> dict[str, Identity] | None:
    """The tokens ``inbox serve`` requires, each with who holds it: ``--tokens-file``, ``--token-file``,
    ``--token`` (with a warning: the process list shows it to every user), or ``$STATEHITL_INBOX_TOKEN``;
    None when none is given."""
    from statehitl.inbox.identity import parse_tokens

    given = [option for option, value in (("--tokens-file", args.tokens_file), ("--token-file", args.token_file),
                                          ("--token", args.token)) if value is not None]
    if len(given) > 1:
        raise CliError(f"give the token one way, not {' and '.join(given)}: --tokens-file PATH (tokens that name "
                       f"people), --token-file PATH, ${TOKEN_ENV} or --token")
    if args.tokens_file is not None:
        path = Path(args.tokens_file)
        try:
            return parse_tokens(_read_secret("--tokens-file", path, console), f"--tokens-file {path}")
        except ValueError as exc:
            raise CliError(str(exc)) from None
    if args.token_file is not None:
        path = Path(args.token_file)
        return _one_token(_read_secret("--token-file", path, console), f"--token-file {path}")
    if args.token is not None:
        if not args.token.strip():
            raise CliError("--token is empty")
        _warn(console, f"--token is visible to every user of this machine (ps, /proc/PID/cmdline); use "
                       f"--token-file PATH or ${TOKEN_ENV} instead")
        return _one_token(str(args.token).strip(), "--token")
    if TOKEN_ENV in os.environ:
        token = os.environ[TOKEN_ENV].strip()
        if not token:
            raise CliError(f"${TOKEN_ENV} is set but empty")
        return _one_token(token, f"${TOKEN_ENV}")
    return None


def _headers(args: argparse.Namespace, tokens: dict[str, Identity] | None) -> tuple[str | None, str | None]:
    """``--identity-header`` and ``--groups-header``, checked: header names, the second only with the first,
    and never beside tokens that name people (the identity would come from two places)."""
    from statehitl.inbox.identity import header_name

    if args.groups_header is not None and args.identity_header is None:
        raise CliError("--groups-header needs --identity-header, the header that names the user")
    if args.identity_header is not None and tokens and any(i.known for i in tokens.values()):
        raise CliError("who answers comes from the tokens or from --identity-header, not both: give the proxy a "
                       "token that names nobody")
    try:
        return (None if args.identity_header is None else header_name(args.identity_header, "--identity-header"),
                None if args.groups_header is None else header_name(args.groups_header, "--groups-header"))
    except ValueError as exc:
        raise CliError(str(exc)) from None


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
    tokens = _tokens(args, console)
    if tokens is not None and args.insecure_no_token:
        raise CliError("--insecure-no-token with a token: drop one of them")
    identity_header, groups_header = _headers(args, tokens)
    refused = exposure_error(args.host, tokens is not None, args.insecure_no_token)
    if refused is not None:
        raise CliError(refused)
    if tokens is None and not is_loopback(args.host):
        _warn(console, f"INSECURE: --host {args.host} without a token: ANYONE who can reach this address can read "
                       "every pending interrupt and answer it")
    serve(args.store, host=args.host, port=args.port, tokens=tokens, identity_header=identity_header,
          groups_header=groups_header, build=_builder(args.app), allowed_hosts=allowed,
          insecure_no_token=args.insecure_no_token, announce=console.print)
    return 0
