"""What both ``statehitl demo`` variants share: watching a run, asking y/N, and resuming later.

The refund graph and the file-cleanup agent differ only in what they run and how they show the end, so
each is a ``Subject`` and one ``Driver`` does the talking: it refuses to start over an existing thread,
shows the machine, prints each transition, asks at a terminal or reads the answer from a pipe (or stops and
prints the exact command that answers later, from any process), checks a thread before resuming it, and
loops while the run stops on interrupts. Keeping that in one place keeps the two demos' UX identical.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from statehitl.cli._console import DEFAULT_STORE, CliError, Console, cli_command
from statehitl.cli.observer import TransitionPrinter

if TYPE_CHECKING:
    from statehitl.checkpoint import Checkpointer
    from statehitl.interrupt import Interrupt
    from statehitl.machine import Machine


STORE_ENV = "STATEHITL_DEMO_STORE"
"""The store the demo's ``inbox_app`` runs the refund graph on (default: the demo's, ``file://.statehitl``);
the worker command the driver prints sets it when the demo ran on another store."""

_YES = {"y", "yes"}
_NO = {"n", "no"}


def parse_yes_no(text: str, *, where: str = "--answer") -> Literal["y", "n"]:
    """``y``/``yes`` -> ``"y"``, ``n``/``no`` -> ``"n"`` (any case); anything else is a ``CliError``."""
    word = text.strip().lower()
    if word in _YES:
        return "y"
    if word in _NO:
        return "n"
    raise CliError(f"{where} must be y or n, got {text.strip()!r}")


def responses(pending: list[Interrupt], answer: str) -> list[dict[str, Any]]:
    """The resume input that gives ``answer`` to every pending interrupt (graphs and agents take the same)."""
    return [{"interruptResponse": {"interruptId": i.id, "response": answer}} for i in pending]


# -- one demo ---------------------------------------------------------------------------------------


class RunResult(Protocol):
    """What the driver needs of a graph's or an agent's result."""

    @property
    def stop_reason(self) -> str: ...

    @property
    def interrupts(self) -> list[Interrupt]: ...


R = TypeVar("R", bound=RunResult)


class Subject(ABC, Generic[R]):
    """One demo: its machine, its thread in the store, how to run and answer it, and how to show the end."""

    noun = "thread"
    """What the thread is called in messages (the agent demo's threads are sessions)."""
    words: tuple[str, ...] = ("demo",)
    """The CLI words that run this demo, for the hints (``demo``, ``demo --agent``)."""
    title = "statehitl demo"
    headline = ""
    """What this demo is, after the title of a new run."""
    choices = ("approve", "reject")
    """What answering y and n does, for the comments of the printed commands."""
    draw: str = ""
    """``MODULE:ATTR`` for ``statehitl draw``."""
    inbox_app: str = ""
    """``MODULE:ATTR`` the inbox resumes this demo's threads with (``--app``), if it has one."""

    def __init__(self, console: Console, thread: str, store: str, *, checkpointer: Checkpointer, machine: Machine,
                 printer: TransitionPrinter) -> None:
        self.console = console
        self.thread = thread
        self.store = store
        self.checkpointer = checkpointer
        self.machine = machine
        self.printer = printer

    @abstractmethod
    def intro(self) -> list[str]:
        """Lines after the header of a new run (what it is asked to do)."""

    @abstractmethod
    def question(self, reason: Any) -> str:
        """The y/N question for an interrupt's reason."""

    @abstractmethod
    def start(self) -> R:
        """Run from the beginning (the driver has checked that the thread is new)."""

    @abstractmethod
    def answer(self, pending: list[Interrupt], answer: str) -> R:
        """Give ``answer`` to the pending interrupts and run on."""

    @abstractmethod
    def final(self, result: R) -> None:
        """Show how the run ended."""

    def cli(self, *words: str) -> str:
        """A ``statehitl ...`` command on this demo's store, as the user can paste it."""
        return cli_command(*words, store=self.store)

    def resume_command(self, answer: str) -> str:
        return self.cli(*self.words, "--resume", self.thread, "--answer", answer)

    def worker_command(self) -> str | None:
        """The ``statehitl worker --once`` that applies an answer stored in the inbox for this demo's threads
        (None without an inbox app, or on a memory store no other process sees). The app runs on the store
        ``$STATEHITL_DEMO_STORE`` names, so on another store than the default the command sets it."""
        if not self.inbox_app or self.store.startswith("memory://"):
            return None
        command = self.cli("worker", "--app", self.inbox_app, "--once")
        if self.store == DEFAULT_STORE:
            return command
        import shlex

        return f"{STORE_ENV}={shlex.quote(self.store)} {command}"


class Driver(Generic[R]):
    """Runs a ``Subject`` for a human: it asks at a terminal or reads a pipe; with no answer (``--no-wait``,
    an empty pipe) it stops and says how to answer later."""

    def __init__(self, subject: Subject[R], *, no_wait: bool) -> None:
        self.s = subject
        self.c = subject.console
        self.no_wait = no_wait

    def start(self) -> int:
        from statehitl._sync import run_sync
        from statehitl.cli.draw import text_diagram

        s, c = self.s, self.c
        existing = run_sync(s.checkpointer.latest(s.thread))  # the raw record: any machine's thread
        if existing is not None:
            if existing.status == "interrupted":
                raise CliError(
                    f"{s.noun} {s.thread!r} already exists and waits for an answer; answer it with: "
                    f"{s.resume_command('y')}"
                )
            raise CliError(
                f"{s.noun} {s.thread!r} already exists in {s.store} ({existing.status}); pick another --thread "
                f"or delete it with: {s.cli('threads', 'delete', s.thread)}"
            )
        c.print(c.style(f"{s.title}: {s.headline}", "bold"))
        c.print(f"  {s.noun.ljust(7)} {s.thread}")
        c.print(f"  store   {s.store}")
        for line in s.intro():
            c.print(line)
        c.print()
        c.print(c.style(f"The machine ({s.machine.name})", "bold"))
        c.print(text_diagram(s.machine, c))
        c.print(c.style(f"  Mermaid: statehitl draw {s.draw}", "dim"))
        c.print()
        c.print(c.style("Run", "bold"))
        with s.printer.attached():
            result = s.start()
        return self._drive(result)

    def resume(self, answer: str | None) -> int:
        from statehitl._sync import run_sync

        s, c = self.s, self.c
        record = run_sync(s.checkpointer.latest(s.thread))
        if record is None:
            raise CliError(
                f"unknown {s.noun} {s.thread!r} in {s.store}; see the threads there with: {s.cli('threads', 'list')}"
            )
        if record.fingerprint != s.machine.fingerprint:
            raise CliError(
                f"{s.noun} {s.thread!r} belongs to machine {record.machine!r}, not to this demo's "
                f"{s.machine.name!r}; it cannot be resumed with 'statehitl {' '.join(s.words)}'"
            )
        if record.status != "interrupted":
            raise CliError(
                f"{s.noun} {s.thread!r} is not waiting for an answer (it is {record.status} at step "
                f"{record.step}); see its history with: {s.cli('threads', 'show', s.thread)}"
            )
        pending = [i.to_interrupt() for i in record.interrupts]
        c.print(c.style(f"{s.title}: resuming {s.noun} {s.thread}", "bold"))
        c.print(f"  store   {s.store}")
        c.print(f"  at      checkpoint {record.seq}, step {record.step}, next {', '.join(record.pending)}")
        for interrupt in pending:
            c.print(f"  {c.style(c.g('pause') + ' ' + interrupt.name, 'yellow')}: {s.question(interrupt.reason)}")
        c.print()
        if answer is None:
            if self.no_wait:
                self._how_to_answer(pending)
                return 0
            answer = self._answer(pending)
            if answer is None and not sys.stdin.isatty():  # resuming is what was asked: a pipe must answer
                raise CliError(
                    f"no answer for {s.noun} {s.thread!r}: pass --answer y|n, or pipe y or n on stdin"
                )
            if answer is None:
                self._how_to_answer(pending)
                return 0
        c.print(c.style("Run", "bold"))
        with s.printer.attached():
            result = s.answer(pending, answer)
        return self._drive(result)

    def _drive(self, result: R) -> int:
        """Answer interrupts while there are any and the human (at a terminal or through a pipe) answers,
        then show the end."""
        while result.stop_reason == "interrupt":
            answer = None if self.no_wait else self._answer(result.interrupts)
            if answer is None:
                self._how_to_answer(result.interrupts)
                return 0
            with self.s.printer.attached():
                result = self.s.answer(result.interrupts, answer)
        self.s.final(result)
        return 0

    def _answer(self, pending: list[Interrupt]) -> str | None:
        """The human's answer to ``pending``: asked at a terminal, else read from stdin, as the README's
        ``printf 'y\\n' | ./dev.sh demo`` and the examples do; ``None`` when there is none."""
        return self._ask(pending) if sys.stdin.isatty() else self._read_piped(pending)

    def _question(self, pending: list[Interrupt]) -> str:
        return self.c.style(self.s.question(pending[0].reason), "bold")

    def _ask(self, pending: list[Interrupt]) -> str | None:
        """Ask on the terminal; ``None`` if the human leaves (end of input, Ctrl-C)."""
        c = self.c
        question = self._question(pending)
        prompt = f"\n{question} [y/N] "
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
                    answer = parse_yes_no(line, where="the answer")
                except CliError:
                    c.print("Please answer y or n.")
                    prompt = f"{question} [y/N] "
                    continue
            c.print()
            return answer

    def _read_piped(self, pending: list[Interrupt]) -> str | None:
        """The next line of a pipe (``echo y | statehitl demo``), or ``None`` at its end.

        A blank line means N, as Enter does at the terminal's ``[y/N]``. A pipe cannot be asked again, so
        an answer that is not y or n is an error rather than a retry; the question and the answer read
        are printed as a terminal would have shown them.
        """
        line = sys.stdin.readline()
        if not line:  # the pipe ended: no answer, the thread stays waiting
            return None
        answer = parse_yes_no(line, where="the answer on stdin") if line.strip() else "n"
        self.c.print(f"\n{self._question(pending)} [y/N] {line.strip() or '(blank line: N)'}  (from stdin)")
        self.c.print()
        return answer

    def _how_to_answer(self, pending: list[Interrupt]) -> None:
        s, c = self.s, self.c
        c.print()
        head = f"{c.g('pause')} Waiting for a human: {s.question(pending[0].reason)}"
        c.print(c.style(head, "yellow", "bold"))
        if s.store.startswith("memory://"):
            c.print("  Note: a memory:// store ends with this process; use a file:// store to answer later.")
        c.print(f"  {s.noun.capitalize()} {s.thread} is saved in {s.store}. Answer from any process, now or later:")
        yes, no = s.choices
        c.print(f"    {s.resume_command('y')}    # {yes}")
        c.print(f"    {s.resume_command('n')}    # {no}")
        c.print(f"  It is in the inbox, with everything else waiting on a human: {s.cli('inbox')}")
        # The demo's app runs on the demo's default store (or $STATEHITL_DEMO_STORE): only then can the
        # page resume a thread itself; otherwise it stores the answer for the app.
        app = ("--app", s.inbox_app) if s.inbox_app and s.store == DEFAULT_STORE else ()
        c.print(f"  (or a web page to answer from: {s.cli('inbox', 'serve', *app)})")
        worker = s.worker_command()
        if worker is not None:
            c.print("  An answer given in the inbox without --app is applied by a worker, which resumes the thread:")
            c.print(f"    {worker}    # or without --once: keeps watching for answers")
