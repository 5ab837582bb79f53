"""``statehitl worker``: resume answered threads and apply expiry defaults, on any store, until stopped.

One command for every backend: on DynamoDB it reads the table's stream (``create-table --stream``),
on S3 and the file store it polls the thread index every ``--interval``; ``--once`` does what is due
now and exits (for cron, and for a DynamoDB table without a stream). Webhook secrets come from a file
or the environment, never the command line, which other users of the machine can read. See
docs/workers.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statehitl.cli._console import DEFAULT_STORE, CliError, Console, count_text

if TYPE_CHECKING:
    from statehitl.worker import Report, Worker


SECRET_ENV = "STATEHITL_WEBHOOK_SECRET"


def _positive(kind: type[float] | type[int]) -> Any:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value
    return parse


def add_parser(commands: Any) -> None:
    """Register ``worker`` on the top-level subcommands."""
    parser = commands.add_parser(
        "worker",
        help="resume answered threads and apply expiry defaults as they fall due (DynamoDB stream, or polling)",
        description="Resume every thread whose answer is stored (the inbox, its page, an expiry, an app call that "
                    "died before applying it) and answer expired interrupts with their default, exactly once "
                    "however many workers run. On DynamoDB it reads the table's stream; on S3 and the file store it "
                    "polls the thread index.",
    )
    parser.add_argument("--app", action="append", required=True, metavar="MODULE:BUILD",
                        help="a callable build(thread_id) returning the app that runs the thread (a compiled "
                             "StateGraph, an Agent on that thread's session, a Graph/Swarm); repeat for several apps, "
                             "each thread then goes to the app whose machine stopped it")
    parser.add_argument("--store", default=DEFAULT_STORE, metavar="URL",
                        help=f"checkpoint store URL (default: {DEFAULT_STORE})")
    parser.add_argument("--interval", type=_positive(float), default=1.0, metavar="SECONDS",
                        help="seconds between passes over the index (S3, files), or between looks at due expiries "
                             "and held threads (DynamoDB); default 1")
    parser.add_argument("--lease", type=_positive(float), metavar="SECONDS",
                        help="how long a resume's claim holds a thread (the checkpointer's lease_seconds, default "
                             "60): a thread whose resuming worker died is taken over after it")
    parser.add_argument("--once", action="store_true",
                        help="do what is due now (one pass over the index) and exit: for cron and tests; exit code "
                             "1 if a thread failed or waits on a human's go-ahead")
    parser.add_argument("--retry-unknown", action="store_true",
                        help="retry an action of unknown outcome (its run died after acting) without asking a "
                             "human, recorded in the audit trail: ONLY when every action of the apps honours its "
                             "idempotency key, so running it again does it once")
    parser.add_argument("--on-interrupt", action="append", default=[], metavar="URL",
                        help="POST each thread newly waiting on a human (and each action of unknown outcome) to "
                             "this webhook, signed; repeatable")
    parser.add_argument("--on-answer", action="append", default=[], metavar="URL",
                        help="POST each answer stored to this webhook, signed; repeatable")
    parser.add_argument("--webhook-secret-file", metavar="PATH",
                        help=f"the shared secret webhooks are signed with (Standard Webhooks' HMAC-SHA256; a whsec_ "
                             f"secret is base64 after its prefix), from this file; without it, ${SECRET_ENV}")
    parser.add_argument("--delivery-schedule", type=_schedule, metavar="SECONDS,...",
                        help="the pauses between an event's failed delivery rounds, comma-separated seconds "
                             "(default 5,300,1800,7200,18000,36000,50400,72000,86400: about three days, after "
                             "which the event is given up: statehitl deliveries lists it)")
    parser.add_argument("--concurrency", type=_positive(int), default=8, metavar="N",
                        help="threads worked on at once (default 8)")
    parser.add_argument("--quiet", action="store_true", help="log only warnings and errors")
    parser.set_defaults(handler=cmd_worker)


def _schedule(text: str) -> tuple[float, ...]:
    try:
        pauses = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated seconds: {text!r}") from None
    if not pauses or any(p < 0 for p in pauses):
        raise argparse.ArgumentTypeError(f"give one or more pauses, none negative: {text!r}")
    return pauses


def _secret(args: argparse.Namespace, console: Console) -> bytes | None:
    """The webhook secret: ``--webhook-secret-file`` or ``$STATEHITL_WEBHOOK_SECRET``; required with a webhook."""
    hooks = args.on_interrupt or args.on_answer
    if args.webhook_secret_file is not None:
        path = Path(args.webhook_secret_file)
        try:
            secret = path.read_text(encoding="utf-8").strip()
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read --webhook-secret-file {path}: {getattr(exc, 'strerror', None) or exc}"
                           ) from None
        if not secret:
            raise CliError(f"--webhook-secret-file {path} is empty")
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            print(console.style(f"statehitl: warning: {path} can be read by other users of this machine "
                                f"(chmod 600 {path})", "bold", "yellow"), file=console.err, flush=True)
        return secret.encode()
    secret = os.environ.get(SECRET_ENV, "").strip()
    if secret:
        return secret.encode()
    if hooks:
        raise CliError(f"webhooks are signed with a shared secret: give it with --webhook-secret-file PATH or "
                       f"${SECRET_ENV}")
    return None


def _logging(console: Console, quiet: bool) -> None:
    log = logging.getLogger("statehitl.worker")
    log.setLevel(logging.WARNING if quiet else logging.INFO)
    if not any(getattr(h, "_statehitl_cli", False) for h in log.handlers):
        handler = logging.StreamHandler(console.err)
        handler.setFormatter(logging.Formatter("%(asctime)s statehitl worker: %(message)s", "%H:%M:%S"))
        handler._statehitl_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.propagate = False


def build_worker(args: argparse.Namespace, console: Console) -> Worker:
    """The worker the command line describes."""
    from statehitl.inbox import load_app
    from statehitl.worker import Webhook, Worker

    secret = _secret(args, console)
    try:
        interrupt_hooks = [Webhook(url, secret or b"") for url in args.on_interrupt]
        answer_hooks = [Webhook(url, secret or b"") for url in args.on_answer]
    except ValueError as exc:
        raise CliError(str(exc)) from None
    schedule = {} if args.delivery_schedule is None else {"delivery_schedule": args.delivery_schedule}
    return Worker(args.store, [load_app(spec) for spec in args.app], app_names=args.app, interval=args.interval,
                  lease_seconds=args.lease, retry_unknown=args.retry_unknown, on_interrupt=interrupt_hooks,
                  on_answer=answer_hooks, concurrency=args.concurrency, **schedule)


def cmd_worker(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync
    from statehitl.checkpoint.storage import has_change_feed

    worker = build_worker(args, console)
    _logging(console, args.quiet)
    if args.once:
        report = worker.run(once=True)
        return _summary(report, console)
    streamed = has_change_feed(worker.checkpointer.storage)
    how = "reading its stream" if streamed else f"polling its index every {args.interval:g}s"
    logging.getLogger("statehitl.worker").info("watching %s (%s); Ctrl-C stops after the threads in hand",
                                               args.store, how)
    report = run_sync(_until_signalled(worker))
    _summary(report, console)
    return 0


async def _until_signalled(worker: Worker) -> Report:
    """``worker.arun()`` until SIGINT or SIGTERM (a container's stop), which let it finish the threads in hand."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for number in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
            loop.add_signal_handler(number, stop.set)
            handled.append(number)
    try:
        return await worker.arun(stop=stop)
    finally:
        for number in handled:
            loop.remove_signal_handler(number)


def _summary(report: Report, console: Console) -> int:
    counts = report.counts
    parts = [f"resumed {count_text(counts['resumed'], 'thread')}",
             f"applied {count_text(counts['expired'], 'expiry default')}"]
    if counts["retried"]:
        parts.append(f"retried {count_text(counts['retried'], 'action')} of unknown outcome")
    if counts["busy"]:
        parts.append(f"{count_text(counts['busy'], 'thread')} held by another process")
    if counts["refused"]:
        parts.append(f"withdrew {count_text(counts['refused'], 'answer')} their handler refused")
    console.print("; ".join(parts))
    for thread in sorted(report.unknown):
        console.print(f"thread {thread}: an action of unknown outcome waits on a human: check it by its idempotency "
                      f"key, then `statehitl threads retry {thread}`")
    for thread, error in sorted(report.failed.items()):
        console.print(f"thread {thread}: failed: {error}")
    return 1 if report.unknown or report.failed else 0
