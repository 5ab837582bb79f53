"""``statehitl demo``: a machine that waits for a human, on the file store, across processes.

Two variants, one UX (``statehitl.cli._demo_driver``): the default is a refund workflow, a ``StateGraph``
(``statehitl.cli.refund``); ``--agent`` is the seed's file-cleanup ``Agent`` with an approval hook on
``delete_files`` (``statehitl.cli.cleanup_agent``), whose sessions are threads of the same store. Both
are imported only when the demo runs, so ``statehitl --help`` stays fast. On a terminal the demo asks
y/N at the interrupt, and reads the answer from stdin when it is a pipe (``printf 'y\\n' | statehitl
demo``); with ``--no-wait``, or when the pipe holds no answer, it prints the command that answers later,
``statehitl demo [--agent] --resume THREAD --answer y``, which works from a new process because
everything the thread needs is in the store.
"""

from __future__ import annotations

import argparse
import math
import uuid
from typing import TYPE_CHECKING, Any

from statehitl.cli._console import DEFAULT_STORE, CliError, Console, compact_json, hanging, one_line
from statehitl.cli._demo_driver import STORE_ENV, Driver, Subject, parse_yes_no, responses
from statehitl.cli.observer import TransitionPrinter

if TYPE_CHECKING:
    from statehitl.agent import Agent, AgentResult
    from statehitl.cli.refund import Refund
    from statehitl.graph import GraphRunResult, StateGraph
    from statehitl.interrupt import Interrupt


DEFAULT_CUSTOMER = "Ada Lovelace"
DEFAULT_REQUEST = "The blender arrived broken."
DEFAULT_AMOUNT = 120.0
_REFUND_OPTIONS = ("amount", "customer", "request")


def build_graph() -> StateGraph[Refund]:
    """The demo's refund machine, not yet compiled (``statehitl draw statehitl.cli.demo:build_graph``)."""
    from statehitl.cli import refund

    return refund.build_graph()


def inbox_app(thread_id: str) -> Any:
    """The refund demo's registration for the inbox: ``statehitl inbox answer ID y --app
    statehitl.cli.demo:inbox_app`` resumes a refund thread at once. Every thread runs the same graph, on
    the store ``$STATEHITL_DEMO_STORE`` names (default: the demo's)."""
    import os

    from statehitl.checkpoint.engine import Checkpointer

    return build_graph().compile(checkpointer=Checkpointer.from_url(os.environ.get(STORE_ENV, DEFAULT_STORE)))


# -- the command ------------------------------------------------------------------------------------


def add_parser(commands: Any) -> None:
    """Register ``demo`` on the top-level subcommands."""
    parser = commands.add_parser(
        "demo",
        help="run the approval demo: a refund graph, or with --agent a file-cleanup agent (pauses for a "
             "human, resumes in any process)",
        description=(
            "A refund workflow (or, with --agent, a file-cleanup agent) that stops for a human's approval. On a "
            "terminal it asks y/N; from a pipe it reads the answer (printf 'y\\n' | statehitl demo). With "
            "--no-wait, or when the pipe holds no answer, it saves the thread and prints how to answer later "
            "with 'statehitl demo [--agent] --resume THREAD --answer y'."
        ),
    )
    parser.add_argument("--agent", action="store_true",
                        help="run the file-cleanup agent (its session is a thread of the store) instead of the "
                             "refund graph; its tools only pretend, no file is touched")
    parser.add_argument("--store", default=DEFAULT_STORE, metavar="URL",
                        help=f"checkpoint store URL (default: {DEFAULT_STORE}, in the current directory)")
    parser.add_argument("--thread", metavar="ID",
                        help="thread id for a new run (default: a fresh refund-XXXXXXXX; with --agent, the "
                             "session id, default cleanup-XXXXXXXX)")
    parser.add_argument("--no-wait", action="store_true",
                        help="do not ask at the terminal or read stdin; stop at the interrupt and print how to "
                             "answer later")
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


def run(args: argparse.Namespace, console: Console) -> int:
    from statehitl.checkpoint import validate_thread_id

    if args.answer is not None and args.resume is None:
        raise CliError("--answer goes with --resume THREAD (a new run asks on the terminal, or stops with --no-wait)")
    if args.agent:
        refund_only = [f"--{n}" for n in _REFUND_OPTIONS if getattr(args, n) is not None]
        if refund_only:
            verb = "applies" if len(refund_only) == 1 else "apply"
            raise CliError(f"{', '.join(refund_only)} {verb} only to the refund demo, not to --agent")
    if args.resume is not None:
        extra = [f"--{n}" for n in ("thread", *_REFUND_OPTIONS) if getattr(args, n) is not None]
        if extra:
            raise CliError(f"--resume continues an existing thread; {', '.join(extra)} only apply to a new run")
        answer = parse_yes_no(args.answer) if args.answer is not None else None
        thread = validate_thread_id(args.resume)
    else:
        answer = None
        prefix = "cleanup" if args.agent else "refund"
        thread = validate_thread_id(args.thread) if args.thread is not None else f"{prefix}-{uuid.uuid4().hex[:8]}"
    subject: Subject[Any]
    if args.agent:
        subject = _CleanupSubject(console, thread, args.store)
    else:
        subject = _RefundSubject(console, thread, args.store, None if args.resume is not None else _refund(args))
    driver: Driver[Any] = Driver(subject, no_wait=args.no_wait)
    return driver.resume(answer) if args.resume is not None else driver.start()


def _refund(args: argparse.Namespace) -> Refund:
    from statehitl.cli.refund import Refund

    return Refund(
        customer=args.customer or DEFAULT_CUSTOMER,
        request=args.request or DEFAULT_REQUEST,
        amount=args.amount if args.amount is not None else DEFAULT_AMOUNT,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else compact_json(value)


def _print_values(console: Console, values: dict[str, Any]) -> None:
    """``name  value`` lines, aligned; a list is numbered, one item a line."""
    if not values:
        console.print("  (empty)")
        return
    width = max(len(k) for k in values)
    for name, value in values.items():
        if isinstance(value, list):
            parts = [f"{i}. {_text(item)}" for i, item in enumerate(value, 1)] or ["[]"]
        else:
            parts = [_text(value)]
        for line in hanging(f"  {name.ljust(width)}  ", parts):
            console.print(line)


# -- the refund graph -------------------------------------------------------------------------------


class _RefundSubject(Subject["GraphRunResult[Refund]"]):
    headline = "a refund that waits for a human"
    choices = ("approve and pay", "reject")
    draw = "statehitl.cli.demo:build_graph"
    inbox_app = "statehitl.cli.demo:inbox_app"

    def __init__(self, console: Console, thread: str, store: str, request: Refund | None) -> None:
        from statehitl.checkpoint import Checkpointer
        from statehitl.cli import refund

        checkpointer = Checkpointer.from_url(store)
        self.app = build_graph().compile(checkpointer=checkpointer)
        printer = TransitionPrinter(console, frozenset(self.app.schema.reducers))
        super().__init__(console, thread, store, checkpointer=checkpointer, machine=self.app.machine, printer=printer)
        self.request = request
        self.refund = refund

    def intro(self) -> list[str]:
        return []  # the run's first transition (intake) says what was asked

    def question(self, reason: Any) -> str:
        return self.refund.question(reason)

    def start(self) -> GraphRunResult[Refund]:
        assert self.request is not None, "a new run needs the refund request"
        result: GraphRunResult[Refund] = self.app.invoke(self.request, thread_id=self.thread)
        return result

    def answer(self, pending: list[Interrupt], answer: str) -> GraphRunResult[Refund]:
        result: GraphRunResult[Refund] = self.app.invoke(responses(pending, answer), thread_id=self.thread)
        return result

    def final(self, result: GraphRunResult[Refund]) -> None:
        c, state, money = self.console, result.state, self.refund.money
        c.print()
        if state.paid:
            verdict = c.style(f"{c.g('done')} Refund of {money(state.amount)} paid to {state.customer} "
                              f"({state.decision}).", "green", "bold")
        elif state.decision == "rejected":
            verdict = c.style(f"{c.g('cancel')} Refund of {money(state.amount)} to {state.customer} rejected.",
                              "red", "bold")
        else:
            verdict = c.style(f"Run ended: {result.status.value}.", "bold")
        c.print(verdict)
        c.print(c.style(f"Final state ({result.status.value}, step {result.step}, checkpoint {result.checkpoint_id})",
                        "bold"))
        _print_values(c, state.model_dump(mode="json"))
        c.print(c.style(f"  History: {self.cli('threads', 'show', self.thread)}", "dim"))


# -- the file-cleanup agent -------------------------------------------------------------------------


def _short(text: str, limit: int = 120) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parts(message: dict[str, Any], names: dict[str, str]) -> list[str]:
    """A message's blocks, one short line each; ``names`` maps tool use ids to tool names as they appear."""
    parts = []
    for block in message.get("content", []):
        if "text" in block:
            parts.append(_short(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            names[use["toolUseId"]] = use["name"]
            args = ", ".join(f"{k}={compact_json(v)}" for k, v in (use.get("input") or {}).items())
            parts.append(_short(f"{use['name']}({args})"))
        elif "toolResult" in block:
            result = block["toolResult"]
            parts.append(_short(f"{names.get(result['toolUseId'], result['toolUseId'])} -> {result['status']}: "
                                f"{_result_text(result)}"))
        else:
            parts.append(_short(compact_json(block)))
    return parts


def _result_text(result: dict[str, Any]) -> str:
    """One reading of a tool's output, so the live callback and the final transcript show it alike."""
    return " ".join(b["text"] if "text" in b else compact_json(b.get("json", b)) for b in result.get("content", []))


class _AgentPrinter(TransitionPrinter):
    """The transition printer, with messages summarized and each tool's result shown as it comes."""

    def __init__(self, console: Console, reducers: frozenset[str]) -> None:
        super().__init__(console, reducers)
        self.names: dict[str, str] = {}

    def write_lines(self, name: str, value: Any) -> list[str]:
        if name == "messages" and isinstance(value, list):
            return [line for m in value for line in self._message(f"messages += {m.get('role')}: ", m)]
        if name == "turn" and isinstance(value, dict):
            return self._message(f"turn = {value.get('role')}: ", value)
        return super().write_lines(name, value)

    def _message(self, head: str, message: dict[str, Any]) -> list[str]:
        """A message's parts under one another, the first after ``head``."""
        return hanging(head, _parts(message, self.names) or ["(empty)"])

    def on_callback(self, **event: Any) -> None:
        """The agent's callback handler: the observer sees a tool's outcome, this shows what it returned."""
        result = event.get("tool_result")
        if result is not None:
            self.console.print(f"{self.pad}  {self.console.g('answer')} {_short(_result_text(result))}")


class _CleanupSubject(Subject["AgentResult"]):
    noun = "session"
    words = ("demo", "--agent")
    title = "statehitl demo --agent"
    headline = "a file-cleanup agent that asks before it deletes"
    choices = ("allow the deletion (pretend: no file is touched)", "deny it")
    draw = "statehitl.cli.cleanup_agent:demo_agent"

    printer: _AgentPrinter  # the agent's callback handler too

    def __init__(self, console: Console, session_id: str, store: str) -> None:
        from statehitl.agent.loop import agent_machine
        from statehitl.agent.node import AgentNode
        from statehitl.cli import cleanup_agent
        from statehitl.session import SessionManager

        self.session = SessionManager.from_url(store, session_id=session_id)
        printer = _AgentPrinter(console, AgentNode.append_channels)  # every agent runs the same loop machine
        super().__init__(console, session_id, store, checkpointer=self.session.checkpointer,
                         machine=agent_machine(), printer=printer)
        self.cleanup = cleanup_agent
        self.agent: Agent | None = None

    def intro(self) -> list[str]:
        tools = ", ".join(t.tool_name for t in (self.cleanup.inspect_files, self.cleanup.delete_files))
        return [f"  prompt  {self.cleanup.PROMPT}",
                f"  tools   {tools} (they only pretend: no file is read or deleted)"]

    def question(self, reason: Any) -> str:
        return self.cleanup.question(reason)

    def _agent(self, replies: list[Any]) -> Agent:
        # A new Agent per call, on the same session (the seed's server pattern); its model holds only the
        # replies this call needs, so a resumed run that called the model early would fail loudly.
        self.agent = self.cleanup.build_agent(self.session, replies, self.printer.on_callback)
        return self.agent

    def start(self) -> AgentResult:
        return self._agent([self.cleanup.first_reply()])(self.cleanup.PROMPT)

    def answer(self, pending: list[Interrupt], answer: str) -> AgentResult:
        return self._agent([self.cleanup.final_reply(answer)])(responses(pending, answer))

    def final(self, result: AgentResult) -> None:
        from statehitl._sync import run_sync

        c, agent = self.console, self.agent
        assert agent is not None, "final() follows a run"
        state = agent.state.get()
        c.print()
        if state.get("deleted"):
            deleted = state["deleted"]
            verdict = c.style(f"{c.g('done')} Deleted {len(deleted)} files (pretend): {', '.join(deleted)}.",
                              "green", "bold")
        elif state.get(self.cleanup.APPROVAL) is not None:
            verdict = c.style(f"{c.g('cancel')} Deletion denied: nothing was deleted.", "red", "bold")
        else:
            verdict = c.style(f"Run ended: {result.stop_reason}.", "bold")
        c.print(verdict)
        c.print(c.style(f"Conversation ({len(agent.messages)} messages)", "bold"))
        names: dict[str, str] = {}
        for i, message in enumerate(agent.messages, 1):
            for line in hanging(f"  {i}. {str(message.get('role')).ljust(9)}  ", _parts(message, names)):
                c.print(line)
        record = run_sync(self.checkpointer.latest(self.thread))
        where = (f"{record.status}, step {record.step}, checkpoint {record.checkpoint_id}, " if record is not None
                 else "")
        c.print(c.style(f"agent.state ({where}stop reason {result.stop_reason})", "bold"))
        _print_values(c, state)
        c.print(c.style(f"  History: {self.cli('threads', 'show', self.thread)}", "dim"))
