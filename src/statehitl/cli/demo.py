"""``statehitl demo``: a refund that waits for a human, on the file store, across processes.

The workflow is in ``statehitl.cli.refund`` (imported only when the demo runs, so ``statehitl --help``
stays fast). On a terminal the demo asks y/N at the interrupt; otherwise (or with ``--no-wait``) it
prints the command that answers later, ``statehitl demo --resume THREAD --answer y``, which works from a
new process because everything the thread needs is in the store. ``statehitl draw
statehitl.cli.demo:build_graph`` prints the machine's Mermaid.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import sys
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from statehitl import observe
from statehitl.cli._console import DEFAULT_STORE, CliError, Console, compact_json

if TYPE_CHECKING:
    from statehitl.cli.refund import Refund
    from statehitl.graph import CompiledStateGraph, GraphRunResult, StateGraph
    from statehitl.interrupt import Interrupt

__all__ = ["TransitionPrinter", "add_parser", "build_graph", "parse_answer", "run"]

DEFAULT_CUSTOMER = "Ada Lovelace"
DEFAULT_REQUEST = "The blender arrived broken."
DEFAULT_AMOUNT = 120.0
_YES = {"y", "yes"}
_NO = {"n", "no"}


def build_graph() -> StateGraph[Refund]:
    """The demo's refund machine, not yet compiled (``statehitl draw statehitl.cli.demo:build_graph``)."""
    from statehitl.cli import refund

    return refund.build_graph()


# -- watching it run --------------------------------------------------------------------------------


class TransitionPrinter:
    """A ``statehitl.observe`` observer that prints each transition as it happens."""

    def __init__(self, console: Console, reducers: frozenset[str] = frozenset()) -> None:
        self.console = console
        self.reducers = reducers
        self.pad = " " * 10

    @contextlib.contextmanager
    def attached(self) -> Iterator[TransitionPrinter]:
        observe.observers.append(self)
        try:
            yield self
        finally:
            if self in observe.observers:
                observe.observers.remove(self)

    def _write_lines(self, writes: dict[str, dict[str, Any]]) -> list[str]:
        lines = []
        for node, update in writes.items():
            who = f"{node}: " if len(writes) > 1 else ""
            for name, value in update.items():
                op = "+=" if name in self.reducers else "="
                lines.append(f"{who}{name} {op} {compact_json(value)}")
        return lines

    def on_event(self, kind: str, fields: dict[str, Any]) -> None:
        c, pad = self.console, self.pad
        if kind == "node.enter":
            step = f"step {fields['step']}".ljust(8)
            c.print(f"  {c.style(step, 'dim')}{c.g('enter')} {c.style(fields['node'], 'bold')}")
        elif kind == "node.cancelled":
            c.print(f"{pad}{c.style(c.g('cancel') + ' cancelled ' + fields['node'], 'red')}: {fields['message']}")
        elif kind == "step":
            for line in self._write_lines(fields["writes"]):
                c.print(f"{pad}{line}")
            nxt = ", ".join(fields["next"]) or "END"
            c.print(f"{pad}{c.style(c.g('arrow') + ' ' + nxt, 'cyan')}")
        elif kind == "interrupt.raised":
            head = f"{c.g('pause')} interrupt {fields['name']!r} from {fields['source']} {fields['node']}"
            c.print(f"{pad}{c.style(head, 'yellow', 'bold')}")
            c.print(f"{pad}  reason: {compact_json(fields['reason'])}")
        elif kind == "interrupt.answered":
            response = compact_json(fields["response"])
            answer = f"{c.g('answer')} answer to {fields['name']!r} at {fields['node']}: {response}"
            c.print(f"  {c.style(answer, 'green')}")
        elif kind == "checkpoint":
            note = f"{c.g('dot')} checkpoint {fields['seq']} saved ({fields['status']})"
            c.print(f"{pad}{c.style(note, 'dim')}")


# -- the command ------------------------------------------------------------------------------------


def add_parser(commands: Any) -> None:
    """Register ``demo`` on the top-level subcommands."""
    parser = commands.add_parser(
        "demo",
        help="run the refund-approval demo (pauses for a human, resumes in any process)",
        description=(
            "A refund workflow that stops for a human's approval. On a terminal it asks y/N; otherwise, or "
            "with --no-wait, it saves the thread and prints how to answer later with "
            "'statehitl demo --resume THREAD --answer y'."
        ),
    )
    parser.add_argument("--store", default=DEFAULT_STORE, metavar="URL",
                        help=f"checkpoint store URL (default: {DEFAULT_STORE}, in the current directory)")
    parser.add_argument("--thread", metavar="ID", help="thread id for a new run (default: a fresh refund-XXXXXXXX)")
    parser.add_argument("--no-wait", action="store_true",
                        help="do not ask at the terminal; stop at the interrupt and print how to answer later")
    parser.add_argument("--resume", metavar="THREAD", help="answer the pending approval of THREAD and finish it")
    parser.add_argument("--answer", metavar="y|n",
                        help="the answer for --resume (without it: asked on a terminal, or read from stdin)")
    parser.add_argument("--amount", type=_amount, metavar="DOLLARS",
                        help=f"refund amount (default: {DEFAULT_AMOUNT:g}; small amounts are auto-approved)")
    parser.add_argument("--customer", metavar="NAME", help=f"who asks (default: {DEFAULT_CUSTOMER})")
    parser.add_argument("--request", metavar="TEXT", help="what they wrote")
    parser.set_defaults(handler=run)


def _amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive amount, got {text!r}")
    return round(value, 2)


def parse_answer(text: str, *, where: str = "--answer") -> Literal["y", "n"]:
    """``y``/``yes`` -> ``"y"``, ``n``/``no`` -> ``"n"`` (any case); anything else is a ``CliError``."""
    word = text.strip().lower()
    if word in _YES:
        return "y"
    if word in _NO:
        return "n"
    raise CliError(f"{where} must be y or n, got {text.strip()!r}")


def run(args: argparse.Namespace, console: Console) -> int:
    from statehitl.checkpoint import Checkpointer, validate_thread_id
    from statehitl.cli.refund import Refund

    if args.answer is not None and args.resume is None:
        raise CliError("--answer goes with --resume THREAD (a new run asks on the terminal, or stops with --no-wait)")
    if args.resume is not None:
        extra = [f"--{n}" for n in ("thread", "amount", "customer", "request") if getattr(args, n) is not None]
        if extra:
            raise CliError(f"--resume continues an existing thread; {', '.join(extra)} only apply to a new run")
        answer = parse_answer(args.answer) if args.answer is not None else None
        thread = validate_thread_id(args.resume)
    else:
        answer = None
        thread = validate_thread_id(args.thread) if args.thread is not None else f"refund-{uuid.uuid4().hex[:8]}"
    checkpointer = Checkpointer.from_url(args.store)
    app = build_graph().compile(checkpointer=checkpointer)
    demo = _Demo(app, console, thread, args.store, no_wait=args.no_wait)
    if args.resume is not None:
        return demo.resume(answer)
    return demo.start(
        Refund(
            customer=args.customer or DEFAULT_CUSTOMER,
            request=args.request or DEFAULT_REQUEST,
            amount=args.amount if args.amount is not None else DEFAULT_AMOUNT,
        )
    )


class _Demo:
    def __init__(self, app: CompiledStateGraph[Refund], console: Console, thread: str, store: str,
                 *, no_wait: bool) -> None:
        self.app = app
        self.c = console
        self.thread = thread
        self.store = store
        self.no_wait = no_wait
        self.printer = TransitionPrinter(console, frozenset(app.schema.reducers))
        from statehitl.cli import refund

        self.refund = refund

    # -- the two entry points ---------------------------------------------------------------------

    def start(self, request: Refund) -> int:
        from statehitl._sync import run_sync

        c = self.c
        existing = run_sync(self.app.checkpointer.latest(self.thread))  # the raw record: any machine's thread
        if existing is not None:
            if existing.status == "interrupted":
                raise CliError(
                    f"thread {self.thread!r} already exists and waits for an answer; answer it with: "
                    f"{self._command('y')}"
                )
            raise CliError(
                f"thread {self.thread!r} already exists in {self.store} ({existing.status}); pick another --thread "
                f"or delete it with: {self._cli('threads', 'delete', self.thread)}"
            )
        from statehitl.cli.draw import text_diagram

        c.print(c.style("statehitl demo: a refund that waits for a human", "bold"))
        c.print(f"  thread  {self.thread}")
        c.print(f"  store   {self.store}")
        c.print()
        c.print(c.style(f"The machine ({self.app.machine.name})", "bold"))
        c.print(text_diagram(self.app.machine, c))
        c.print(c.style("  Mermaid: statehitl draw statehitl.cli.demo:build_graph", "dim"))
        c.print()
        c.print(c.style("Run", "bold"))
        with self.printer.attached():
            result = self.app.invoke(request, thread_id=self.thread)
        return self._drive(result)

    def resume(self, answer: str | None) -> int:
        from statehitl._sync import run_sync

        c = self.c
        record = run_sync(self.app.checkpointer.latest(self.thread))
        if record is None:
            raise CliError(
                f"unknown thread {self.thread!r} in {self.store}; see the threads there with: "
                f"{self._cli('threads', 'list')}"
            )
        if record.fingerprint != self.app.machine.fingerprint:
            raise CliError(
                f"thread {self.thread!r} belongs to machine {record.machine!r}, not to this demo's "
                f"{self.app.machine.name!r}; it cannot be resumed with 'statehitl demo'"
            )
        if record.status != "interrupted":
            raise CliError(
                f"thread {self.thread!r} is not waiting for an answer (it is {record.status} at step "
                f"{record.step}); see its history with: {self._cli('threads', 'show', self.thread)}"
            )
        pending = [i.to_interrupt() for i in record.interrupts]
        c.print(c.style(f"statehitl demo: resuming thread {self.thread}", "bold"))
        c.print(f"  store   {self.store}")
        c.print(f"  at      checkpoint {record.seq}, step {record.step}, next {', '.join(record.pending)}")
        for interrupt in pending:
            ask = self.refund.question(interrupt.reason)
            c.print(f"  {c.style(c.g('pause') + ' ' + interrupt.name, 'yellow')}: {ask}")
        c.print()
        if answer is None:
            if self.no_wait:
                self._how_to_answer(pending)
                return 0
            answer = self._ask(pending) if sys.stdin.isatty() else self._read_piped()
            if answer is None:
                self._how_to_answer(pending)
                return 0
        c.print(c.style("Run", "bold"))
        with self.printer.attached():
            result = self.app.invoke(_responses(pending, answer), thread_id=self.thread)
        return self._drive(result)

    # -- shared -----------------------------------------------------------------------------------

    def _drive(self, result: GraphRunResult[Refund]) -> int:
        """Answer interrupts at the terminal while there are any (and we may ask), then show the end."""
        while result.stop_reason == "interrupt":
            answer = None if self.no_wait or not sys.stdin.isatty() else self._ask(result.interrupts)
            if answer is None:
                self._how_to_answer(result.interrupts)
                return 0
            with self.printer.attached():
                result = self.app.invoke(_responses(result.interrupts, answer), thread_id=self.thread)
        self._final(result)
        return 0

    def _ask(self, pending: list[Interrupt]) -> str | None:
        """Ask on the terminal; ``None`` if the human leaves (end of input, Ctrl-C)."""
        c = self.c
        prompt = f"\n{c.style(self.refund.question(pending[0].reason), 'bold')} [y/N] "
        while True:
            c.write(prompt)
            try:
                line = sys.stdin.readline()
            except KeyboardInterrupt:
                line = ""
            if not line:  # end of input: leave the thread waiting
                c.print()
                return None
            if not line.strip():
                answer = "n"
            else:
                try:
                    answer = parse_answer(line, where="the answer")
                except CliError:
                    c.print("Please answer y or n.")
                    prompt = f"{c.style(self.refund.question(pending[0].reason), 'bold')} [y/N] "
                    continue
            c.print()
            return answer

    def _read_piped(self) -> str:
        """The answer from a pipe (``echo y | statehitl demo --resume T``): the first line of stdin."""
        line = sys.stdin.readline()
        if not line.strip():
            raise CliError(f"no answer for thread {self.thread!r}: pass --answer y|n, or pipe y or n on stdin")
        return parse_answer(line, where="the answer on stdin")

    def _how_to_answer(self, pending: list[Interrupt]) -> None:
        c = self.c
        c.print()
        head = f"{c.g('pause')} Waiting for a human: {self.refund.question(pending[0].reason)}"
        c.print(c.style(head, "yellow", "bold"))
        if self.store.startswith("memory://"):
            c.print("  Note: a memory:// store ends with this process; use a file:// store to answer later.")
        c.print(f"  Thread {self.thread} is saved in {self.store}. Answer from any process, now or later:")
        c.print(f"    {self._command('y')}    # approve and pay")
        c.print(f"    {self._command('n')}    # reject")

    def _final(self, result: GraphRunResult[Refund]) -> None:
        c, state, money = self.c, result.state, self.refund.money
        c.print()
        if state.paid:
            verdict = c.style(f"{c.g('done')} Refund of {money(state.amount)} paid to {state.customer} "
                              f"({state.decision}).", "green", "bold")
        elif state.decision == "rejected":
            verdict = c.style(f"{c.g('cancel')} Refund of {money(state.amount)} to {state.customer} rejected.",
                              "red", "bold")
        else:
            verdict = c.style(f"Run ended: {result.status}.", "bold")
        c.print(verdict)
        c.print(c.style(f"Final state ({result.status}, step {result.step}, checkpoint {result.checkpoint_id})",
                        "bold"))
        values = state.model_dump(mode="json")
        width = max(len(k) for k in values)
        for name, value in values.items():
            label = f"  {name.ljust(width)}  "
            if isinstance(value, list):
                if not value:
                    c.print(f"{label}[]")
                for i, item in enumerate(value, 1):
                    text = item if isinstance(item, str) else compact_json(item)
                    c.print(f"{label if i == 1 else ' ' * len(label)}{i}. {text}")
            else:
                c.print(f"{label}{value if isinstance(value, str) else compact_json(value)}")
        c.print(c.style(f"  History: {self._cli('threads', 'show', self.thread)}", "dim"))

    def _cli(self, *words: str) -> str:
        # STATEHITL_COMMAND: how the user reaches this CLI when it is not on PATH (``./dev.sh cli``).
        program = shlex.split(os.environ.get("STATEHITL_COMMAND", "statehitl")) or ["statehitl"]
        store = [] if self.store == DEFAULT_STORE else ["--store", self.store]
        return shlex.join([*program, *words, *store])

    def _command(self, answer: str) -> str:
        return self._cli("demo", "--resume", self.thread, "--answer", answer)


def _responses(pending: list[Interrupt], answer: str) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": answer}} for i in pending]

