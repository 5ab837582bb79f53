"""``statehitl threads list|show|audit|delete``: what is in a checkpoint store, on any backend.

Works on raw checkpoint records, so it needs no import of the app that wrote them: any thread of any
machine in any store can be listed and inspected.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from statehitl._text import when_text
from statehitl.cli._console import (
    DEFAULT_STORE,
    CliError,
    Console,
    compact_json,
    count_text,
    hanging,
    one_line,
    table_head,
)

if TYPE_CHECKING:  # the checkpoint modules load pydantic: only when a command runs, not for --help
    from statehitl.checkpoint.engine import Checkpointer
    from statehitl.checkpoint.record_parts import InterruptRecord
    from statehitl.checkpoint.records import AnsweredMark, CheckpointRecord, ClaimRecord, ThreadIndex


_STATUS_STYLE = {"interrupted": "yellow", "completed": "green", "failed": "red", "executing": "blue"}
_STATUSES = ["executing", "interrupted", "completed", "failed"]
"""The statuses a stored thread can have: the API's ``Status`` names (a stored run is never ``pending``)."""


def add_parser(commands: Any) -> None:
    """Register ``threads`` and its subcommands on the top-level subcommands."""
    parser = commands.add_parser(
        "threads",
        help="list, show or delete the threads in a checkpoint store",
        description="Inspect the threads in a checkpoint store (file://DIR, s3://..., dynamodb://...). A memory:// "
                    "store lives only inside the process that made it, so to these commands it is always empty.",
    )
    sub = parser.add_subparsers(dest="threads_command", metavar="{list,show,audit,retry,delete,prune,sweep}",
                                required=True)

    def store_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--store", default=DEFAULT_STORE, metavar="URL",
                       help=f"checkpoint store URL (default: {DEFAULT_STORE}; memory:// is always empty here)")

    ls = sub.add_parser("list", help="one line per thread: status, step, pending interrupts",
                        description="One line per thread: id, status, machine, the step and time of its last "
                                    "change of status, and the interrupts it waits on (name, node, reason).")
    store_option(ls)
    ls.add_argument("--status", choices=_STATUSES,
                    help="only threads with this status (interrupted: waiting on a human; failed: a node raised, "
                         "or a hook cancelled one; executing: running, or stopped mid-way)")
    ls.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="a thread's checkpoint history, newest first",
                          description="A thread's checkpoints, newest first: id, step, status, the parent "
                                      "where it is not the next one listed (a fork, or a pruned parent), next "
                                      "nodes, writes, interrupts.")
    show.add_argument("thread", metavar="THREAD")
    store_option(show)
    show.add_argument("--values", action="store_true", help="also print the state stored in each checkpoint")
    show.set_defaults(handler=cmd_show)

    audit = sub.add_parser("audit", help="every answer given to a thread's interrupts, oldest first",
                           description="The audit trail of THREAD: one entry per answer applied to its "
                                       "interrupts: when, the interrupt and the reason shown, who answered "
                                       "and their comment, the response and its outcome (applied, rejected, "
                                       "edited; an expiry default is answered by 'expiry'; failed when the node "
                                       "that took it raised), and every answer refused because its responder may "
                                       "not answer, or withdrawn when the handler's type refused it (refused). "
                                       "Kept when old checkpoints are pruned.")
    audit.add_argument("thread", metavar="THREAD")
    store_option(audit)
    audit.add_argument("--json", action="store_true", help="one JSON object per line instead of text")
    audit.set_defaults(handler=cmd_audit)

    retry = sub.add_parser("retry", help="allow an action whose outcome is unknown to run again",
                           description="After 'the action may have run' (ActionOutcomeUnknownError): a run that "
                                       "acted on an answer stopped without recording how it ended. Check the "
                                       "outside world first (tools are given an idempotency key to name the "
                                       "action there); then this records your go-ahead in the audit trail, and the "
                                       "next answer (or continue) runs the action again.")
    retry.add_argument("thread", metavar="THREAD")
    store_option(retry)
    retry.add_argument("--responder", metavar="NAME", help="who allows the retry (kept in the audit trail)")
    retry.add_argument("--comment", metavar="TEXT", help="why, e.g. what the outside world showed")
    retry.set_defaults(handler=cmd_retry)

    delete = sub.add_parser("delete", help="delete a thread and all of its checkpoints",
                            description="Delete every checkpoint of THREAD from the store.")
    delete.add_argument("thread", metavar="THREAD")
    store_option(delete)
    delete.set_defaults(handler=cmd_delete)

    prune = sub.add_parser("prune", help="keep a thread's newest checkpoints, delete older ones",
                           description="Keep the newest N checkpoints of THREAD (the oldest of them is "
                                       "rewritten whole if it was stored on top of one that goes); delete the "
                                       "rest and any crash debris.")
    prune.add_argument("thread", metavar="THREAD")
    prune.add_argument("--keep", type=int, default=10, metavar="N", help="checkpoints to keep (default 10)")
    store_option(prune)
    prune.set_defaults(handler=cmd_prune)

    sweep = sub.add_parser("sweep", help="delete threads whose TTL has run out",
                           description="Delete every thread whose index entry has expired (threads written "
                                       "by a Checkpointer with ttl=...).")
    store_option(sweep)
    sweep.set_defaults(handler=cmd_sweep)


def _status(console: Console, status: str, width: int = 0) -> str:
    return console.style(status.ljust(width), _STATUS_STYLE.get(status, "bold"))


def _interrupt(i: InterruptRecord) -> str:
    where = f" at {i.node}" if i.node else ""
    source = "" if i.source == "node" else f" ({i.source})"
    return f"{i.name}{where}{source}: {compact_json(i.reason)}"


def _answered(mark: AnsweredMark | None) -> str:
    """How a listing marks an interrupt whose answer is stored and not yet applied."""
    if mark is None:
        return ""
    return f" [answered by {mark.responder or 'someone unnamed'} ({mark.via}), not yet applied]"


def _unknown(thread: str, store: str) -> CliError:
    if store.startswith("memory://"):
        return CliError(f"unknown thread {thread!r} in {store}: {_MEMORY}")
    hint = "statehitl threads list" + ("" if store == DEFAULT_STORE else f" --store {store}")
    return CliError(f"unknown thread {thread!r} in {store}; see the threads there with: {hint}")


_MEMORY = ("a memory:// store lives only inside the process that made it, so a statehitl command, a process of "
           "its own, always finds it empty; keep threads in a file://, s3:// or dynamodb:// store to see them here")


# -- list -------------------------------------------------------------------------------------------


def _open(store: str) -> Checkpointer:
    """The store a command reads or changes; a file store's missing directory is an error, not an empty store."""
    from statehitl.cli.stores import open_existing

    return open_existing(store)


def _thread_id(thread: str) -> str:
    from statehitl.checkpoint.storage import validate_thread_id

    return validate_thread_id(thread)


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync
    from statehitl.checkpoint.index import indexed_threads
    from statehitl.errors import StatehitlError

    checkpointer = _open(args.store)

    async def collect() -> list[tuple[str, ThreadIndex | str, str]]:
        rows: list[tuple[str, ThreadIndex | str, str]] = []
        for thread in await indexed_threads(checkpointer.storage):
            try:  # one unreadable entry must not hide the others
                entry = await checkpointer.thread_info(thread)
                if entry is None or args.status not in (None, entry.status):
                    continue
                why = await _why_failed(checkpointer, entry)
            except StatehitlError as exc:
                rows.append((thread, one_line(str(exc)), ""))
                continue
            rows.append((thread, entry, why))
        return rows

    rows = run_sync(collect())
    c = console
    if not rows:
        memory = f" ({_MEMORY})" if args.store.startswith("memory://") else ""
        c.print(f"no threads in {args.store}{memory}")
        return 0
    table: list[tuple[str, str, str, str, str, str]] = []
    for thread, found, why in rows:
        if isinstance(found, str):
            table.append((thread, "unreadable", "-", "-", "-", found))
            continue
        marks = {m.interrupt_id: m for m in found.answered}
        waiting = "; ".join(_interrupt(i) + _answered(marks.get(i.id)) for i in found.interrupts) or why
        table.append((thread, found.status, str(found.step), found.machine, when_text(found.updated_at), waiting))
    header = ("THREAD", "STATUS", "STEP", "MACHINE", "UPDATED", "WAITING ON / FAILURE")
    widths = table_head(c, header, table)
    for thread, status, step, machine, updated, waiting in table:
        cells = [
            thread.ljust(widths[0]),
            _status(c, status, widths[1]),
            step.rjust(widths[2]),
            machine.ljust(widths[3]),
            c.style(updated.ljust(widths[4]), "dim"),
            waiting,
        ]
        c.print("  ".join(cells))
    return 0


async def _why_failed(checkpointer: Checkpointer, entry: ThreadIndex) -> str:
    """The failure column of a thread that is not waiting: its step's error; for a run that failed without
    one, read from its last checkpoint, a hook's cancel (``cancelled NODE: message``) or an orchestration's
    own ``failure`` (a limit, a failed node); ``-`` for any other thread."""
    if entry.error is not None:
        return str(entry.error)
    if entry.status != "failed":
        return "-"
    record = await checkpointer.latest(entry.thread_id)
    if record is None:
        return "-"
    if record.cancelled:
        node, message = next(iter(record.cancelled.items()))
        return f"cancelled {node}: {message}"
    failure = record.values.get("failure")
    return one_line(failure) if isinstance(failure, str) and failure else "-"


# -- show -------------------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync

    thread = _thread_id(args.thread)
    checkpointer = _open(args.store)
    records = run_sync(checkpointer.history(thread))
    if not records:
        raise _unknown(thread, args.store)
    claims = {claim.seq: claim for claim in run_sync(checkpointer.claims(thread))}
    c = console
    head = records[0]
    numbers = count_text(len(records), "checkpoint")
    if claims:  # a claim takes a number of the thread's: without a word, the checkpoints' numbers seem to skip
        took = "it took the number" if len(claims) == 1 else "they took the numbers"
        numbers += f" and {count_text(len(claims), 'claim')} ({took} the checkpoints skip)"
    c.print(f"{c.style('thread ' + thread, 'bold')}  {head.machine}  {_status(c, head.status)}  {numbers}, "
            f"newest first  ({args.store})")
    listed = {r.seq for r in records}
    older_of = dict(zip((r.seq for r in records), [*records[1:], None], strict=True))
    shown: list[tuple[int, CheckpointRecord | ClaimRecord]] = [*((r.seq, r) for r in records), *claims.items()]
    for _, entry in sorted(shown, key=lambda item: -item[0]):  # every number the thread used, newest first
        c.print()
        if entry.kind == "claim":
            c.print(_claim_line(c, entry))
            continue
        record, older = entry, older_of[entry.seq]
        c.print(
            f"{c.style('checkpoint ' + record.checkpoint_id, 'bold')}  step {record.step}  "
            f"{_status(c, record.status)}  {c.style(when_text(record.created_at), 'dim')}"
        )
        fields: list[tuple[str, list[str]]] = [("parent", _parent(record.parent_seq, older, listed))]
        fields.append(("next", [", ".join(record.pending) or "-"]))
        fields.append(("writes", [f"{node}: {compact_json(update)}" for node, update in record.writes.items()]))
        fields.append(("interrupts", [f"{_interrupt(i)}  [id {i.id}]" for i in record.interrupts]))
        fields.append(("kept", [f"{node}: {compact_json(update)}" for node, update in record.completed.items()]
                       + [f"{node} (partly done): {compact_json(kept)}" for node, kept in record.progress.items()]))
        fields.append(("answers", [f"{iid}: {compact_json(answer)}" for iid, answer in record.responses.items()]))
        fields.append(("cancelled", [f"{node}: {message}" for node, message in record.cancelled.items()]))
        fields.append(("error", [f"{record.error}; retry the step with invoke(None, thread_id=...)"]
                       if record.error else []))
        if args.values:
            fields.append(("values", [compact_json(record.values)]))
        for label, lines in fields:
            for line in hanging(f"  {label.ljust(10)}  ", lines):
                c.print(line)
    return 0


def _claim_line(c: Console, claim: ClaimRecord) -> str:
    """A claim's number and what it was, so the numbers ``threads show`` lists never skip one silently."""
    if claim.settles == "retry":
        what = f"a retry of an action of unknown outcome, allowed by {claim.owner or 'someone unnamed'}"
    elif claim.settles == "released":
        what = f"released by {claim.owner}: its run did nothing"
    elif claim.acting:
        who = ", ".join(f"{a.interrupt_id} by {a.responder or 'someone unnamed'}" for a in claim.answered)
        what = f"a resume by {claim.owner}, acting on the answers to {who}"
    else:
        what = f"a resume by {claim.owner} of a stopped run"
    return f"{c.style('claim ' + f'{claim.seq:012d}', 'dim')}  {what}  {c.style(when_text(claim.created_at), 'dim')}"


def _parent(parent: int | None, older: CheckpointRecord | None, listed: set[int]) -> list[str]:
    """The ``parent`` a checkpoint follows, said only where the list does not show it: the one listed next
    (``older``) is the parent unless the thread was forked at the parent (``invoke(..., checkpoint_id=...)``)
    or the parent was pruned. A resume's claim takes a slot but is no checkpoint, so it leaves no gap."""
    if parent is None or (older is not None and older.seq == parent):
        return []
    shown = f"{parent:012d}"
    if parent not in listed:
        return [f"{shown} (pruned)"]
    return [f"{shown} (forked from it: the checkpoints listed between are another branch)"]


# -- audit ------------------------------------------------------------------------------------------

_OUTCOME_STYLE = {"applied": "green", "rejected": "red", "edited": "yellow", "unknown": "red", "retried": "yellow",
                  "refused": "red", "failed": "red"}


def cmd_audit(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync

    thread = _thread_id(args.thread)
    checkpointer = _open(args.store)
    entries = run_sync(checkpointer.audit(thread))
    if not entries and run_sync(checkpointer.latest(thread)) is None:
        raise _unknown(thread, args.store)
    c = console
    if args.json:
        for entry in entries:
            c.print(entry.model_dump_json())
        return 0
    answers = count_text(len(entries), "answer")
    c.print(f"{c.style('thread ' + thread, 'bold')}  {answers}, oldest first  ({args.store})")
    for entry in entries:
        who = entry.responder or "(not named)"
        c.print()
        outcome = c.style(entry.outcome, _OUTCOME_STYLE.get(entry.outcome, "bold"))
        if entry.outcome == "retried":
            c.print(f"{c.style(when_text(entry.at), 'dim')}  {outcome}  a retry allowed by {who}"
                    f"{': ' + entry.comment if entry.comment else ''}")
            continue
        if entry.outcome == "refused" and entry.why is None:  # never applied: who tried, through which door
            who = f"{entry.responder or '(nobody named)'} ({entry.via}), who may not answer it"
        elif entry.outcome == "refused":  # stored by a door that could not check its type, withdrawn on re-run
            who = f"{who} ({entry.via}), withdrawn: the handler's type refused it"
        c.print(f"{c.style(when_text(entry.at), 'dim')}  {outcome}  {entry.name}  by {who}")
        fields = [("interrupt", [f"{entry.interrupt_id} ({entry.source}{' at ' + entry.node if entry.node else ''}, "
                                 f"checkpoint {entry.checkpoint_id})"]),
                  ("reason", [compact_json(entry.reason)]),
                  ("response", [compact_json(entry.response)]),
                  ("comment", [entry.comment] if entry.comment else []),
                  ("why", [entry.why] if entry.why else []),
                  ("tool call", [entry.digest] if entry.digest else [])]
        for label, lines in fields:
            for line in hanging(f"  {label.ljust(10)}  ", lines):
                c.print(line)
    return 0


# -- retry ------------------------------------------------------------------------------------------


def cmd_retry(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync
    from statehitl.errors import NotInterruptedError

    thread = _thread_id(args.thread)
    checkpointer = _open(args.store)
    try:
        run_sync(checkpointer.retry_unknown(thread, responder=args.responder, comment=args.comment))
    except NotInterruptedError:
        if run_sync(checkpointer.latest(thread)) is None:
            raise _unknown(thread, args.store) from None
        raise CliError(f"thread {thread} has no action of unknown outcome: nothing to retry") from None
    console.print(f"thread {thread}: the retry is allowed (and in its audit trail); answer its interrupt again, or "
                  "continue it, to run the action")
    return 0


# -- delete -----------------------------------------------------------------------------------------


def cmd_delete(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync

    thread = _thread_id(args.thread)
    checkpointer = _open(args.store)
    removed = run_sync(checkpointer.delete_thread(thread))
    if not removed:
        raise _unknown(thread, args.store)
    console.print(f"deleted thread {thread} ({count_text(removed, 'record')}) from {args.store}")
    return 0


def cmd_prune(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync

    thread = _thread_id(args.thread)
    if args.keep < 1:
        raise CliError(f"--keep must be at least 1, got {args.keep}")
    checkpointer = _open(args.store)

    async def prune() -> tuple[int, int, int] | None:
        before = await checkpointer.count_checkpoints(thread)
        if not before:
            return None
        removed = await checkpointer.prune(thread, keep_last=args.keep)
        return before, await checkpointer.count_checkpoints(thread), removed

    counts = run_sync(prune())
    if counts is None:
        raise _unknown(thread, args.store)
    before, after, removed = counts
    console.print(f"pruned thread {thread}: {_prune_report(args.keep, before, after, removed)}")
    return 0


def _prune_report(keep: int, before: int, after: int, removed: int) -> str:
    """What prune did, in checkpoints as ``threads show`` counts them (a resume's claims are records of
    the thread too, counted apart)."""
    gone = before - after
    claims = removed - gone
    done = f"removed {count_text(gone, 'checkpoint')}"
    if claims > 0:
        done += f" and {count_text(claims, 'claim record')}"
    remain = f"{count_text(after, 'checkpoint')} {'remains' if after == 1 else 'remain'}"
    if after <= keep and not gone:
        return f"{done}; {'all ' if after > 1 else ''}{remain} (no more than --keep {keep})"
    return f"{done}; {remain}, the newest"


def cmd_sweep(args: argparse.Namespace, console: Console) -> int:
    from statehitl._sync import run_sync
    from statehitl.checkpoint.engine import Checkpointer

    expired = run_sync(Checkpointer.from_url(args.store).sweep_expired())  # a store nothing was written to is fine
    names = f": {', '.join(expired)}" if expired else ""
    console.print(f"swept {count_text(len(expired), 'expired thread')}{names}")
    return 0
