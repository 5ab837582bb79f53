"""``statehitl deliveries``: the worker's events not yet delivered, and those given up.

A worker sends each event (an interrupt waiting, an answer, an action of unknown outcome) through a
durable outbox (``statehitl.worker.notify``): an event whose receiver is down waits there, tried again
over about three days, and one given up stays there marked ``failed``. This lists them, with the error
of their last round and when they are tried next; ``--retry`` puts the given-up ones back, due now, for
the next worker to send.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from statehitl._text import when_text
from statehitl.cli._console import DEFAULT_STORE, Console, count_text, one_line, print_table


def add_parser(commands: Any) -> None:
    """Register ``deliveries`` on the top-level subcommands."""
    parser = commands.add_parser(
        "deliveries",
        help="the worker's events waiting in its outbox (a receiver down) or given up",
        description="Events a worker has not delivered yet (its webhook receiver was down: they are tried again on "
                    "a schedule of about three days) and those it gave up on, with the error of their last round.",
    )
    parser.add_argument("--store", default=DEFAULT_STORE, metavar="URL",
                        help=f"checkpoint store URL (default: {DEFAULT_STORE})")
    parser.add_argument("--retry", action="store_true",
                        help="put the given-up events back in the outbox, due now: the next worker sends them")
    parser.set_defaults(handler=cmd_deliveries)


def cmd_deliveries(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync
    from statehitl.inbox.listing import open_store
    from statehitl.worker.notify import read_outbox, retry_failed

    checkpointer = open_store(args.store)
    if args.retry:
        again = run_sync(retry_failed(checkpointer))
        console.print(f"put {count_text(again, 'given-up event')} back in the outbox: the next worker sends "
                      f"{'them' if again != 1 else 'it'}")
        return 0
    entries = sorted((entry for entry, _ in run_sync(read_outbox(checkpointer)).values()),
                     key=lambda e: (e.state != "failed", e.next_at))
    if not entries:
        console.print(f"nothing waits in the outbox of {args.store}: every event was delivered")
        return 0
    now = time.time()
    rows = [(f"{e.thread_id}/{e.name}", e.event_kind,
             "given up" if e.state == "failed" else _next(e.next_at, now), str(e.failures),
             one_line(e.last_error or "-")) for e in entries]
    print_table(console, ("EVENT", "KIND", "NEXT TRY", "ROUNDS FAILED", "LAST ERROR"), rows)
    failed = sum(e.state == "failed" for e in entries)
    if failed:
        console.print(console.style(f"{count_text(failed, 'event')} given up: fix the receiver, then "
                                    f"statehitl deliveries --retry --store {args.store}", "dim"))
    return 1 if failed else 0


def _next(at: float, now: float) -> str:
    return "now" if at <= now else f"at {when_text(at)}"
