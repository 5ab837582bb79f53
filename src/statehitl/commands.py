"""LangGraph's routing values: ``Send`` (run a node on an argument of its own) and ``Command`` (a node's
update and where to go next, or a caller's resume).

They live apart from the graph builder because the machine and the runner read them too: a router may
return Sends, a node's update may carry a ``goto``. Both are kept in checkpoints, so a Send's argument
must be storable (JSON, or a value ``statehitl.values`` tags: a datetime, a set, bytes...), checked where
it is made rather than at the commit that would fail to store it; it is stored tagged and given back to
the node as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from statehitl.errors import InvalidUpdateError
from statehitl.timeout_policy import TimeoutPolicy
from statehitl.values import decode_value, encode_value, register

N = TypeVar("N")

GOTO = "__goto__"
"""The key under which a node's update carries its ``Command(goto=...)`` to the scheduler (stored as JSON
with the step's writes, so a step re-entered after an interrupt keeps where its finished nodes went)."""

HANDLED = "__handled__"
"""The key under which a failed node's update names the error handler that wrote it instead
(``add_node(error_handler=)``): the scheduler then takes only the handler's ``goto``, not the failed node's
edges, and streams show the write as the handler's. Stored with the step's writes, like ``GOTO``."""


class Handled:
    """What a node whose function failed returns when its error handler ran instead: the handler's node name
    (``__error_handler__<node>``) and what the handler returned (an update, a Command...). A plain class: a
    dataclass costs every process's import of the graph machinery more than it gives here."""

    __slots__ = ("by", "returned")

    def __init__(self, by: str, returned: Any) -> None:
        self.by, self.returned = by, returned

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Handled) and (self.by, self.returned) == (other.by, other.returned)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Handled(by={self.by!r}, returned={self.returned!r})"


@dataclass(frozen=True)
class Send:
    """Run ``node`` in the next step with ``arg`` as its input instead of the state (map-reduce).

    Returned from a conditional edge's path function (one or a list) or as a ``Command``'s ``goto``. The
    argument may be a ``Command`` too (the node gets it, and may return it): stored as ``{"$command": {...}}``.
    ``timeout`` (seconds, a ``timedelta`` or a ``TimeoutPolicy``): the limits of this task's attempts, over
    its node's own ``add_node(timeout=)`` (an async node's only).
    """

    node: str
    arg: Any
    timeout: TimeoutPolicy | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.node, str):
            raise InvalidUpdateError(f"Send(node, arg): node must be a node name, got {self.node!r}")
        self.stored_arg()
        if self.timeout is not None:  # a number or timedelta is a run_timeout, as LangGraph coerces it
            object.__setattr__(self, "timeout", TimeoutPolicy.coerce(self.timeout))

    def __repr__(self) -> str:
        """LangGraph's: the timeout shown only when there is one."""
        shown = "" if self.timeout is None else f", timeout={self.timeout!r}"
        return f"Send(node={self.node!r}, arg={self.arg!r}{shown})"

    def stored_timeout(self) -> dict[str, Any] | None:
        """The ``timeout`` as a checkpoint keeps it (seconds by limit, ``refresh_on``), None for none."""
        policy = self.timeout
        if policy is None:
            return None
        stored = {"run_timeout": policy.run_timeout, "idle_timeout": policy.idle_timeout}
        return {**{k: v for k, v in stored.items() if v is not None}, "refresh_on": policy.refresh_on}

    def stored_arg(self) -> Any:
        """The argument as it is stored (``loaded_arg`` reads it back): tagged (``values.encode_value``), a
        Command as its fields; ``ValueNotStorableError`` if it cannot be stored."""
        arg, where = self.arg, f"the argument of Send({self.node!r}, ...)"
        if not isinstance(arg, Command):
            return encode_value(arg, where)
        goto: Any = dump_goto(goto_targets(arg.goto, f"the Command of Send({self.node!r}, ...)"))
        if isinstance(arg.goto, str | Send):  # one target, kept as one: the Command read back is the one sent
            goto = goto[0]
        return {_COMMAND: {"graph": arg.graph, "update": encode_value(arg.update, f"{where} (its update)"),
                           "resume": encode_value(arg.resume, f"{where} (its resume)"), "goto": goto}}

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "arg": self.stored_arg()}


@dataclass(frozen=True)
class Command(Generic[N]):
    """What a node returns to update the state and choose where to go, or what a caller passes to resume.

    - ``update``: channel updates, as a node's dict return;
    - ``goto``: a node name, a ``Send``, or a list of them, taken besides the node's edges;
    - ``resume``: the answer to the interrupt the thread waits on, or ``{interrupt_id: answer}``;
    - ``graph=Command.PARENT``: the update and goto are for the graph that runs this one as a node.

    ``Command[Literal["a", "b"]]`` annotates a node's return with where it may go, as in LangGraph.
    """

    graph: str | None = None
    update: Any = None
    resume: Any = None
    goto: Any = ()

    PARENT: ClassVar[str] = "__parent__"

    def __repr__(self) -> str:
        """Only the fields that say something, as LangGraph prints a Command: ``Command(resume='yes')``."""
        shown = ", ".join(f"{name}={value!r}" for name, value in
                          (("graph", self.graph), ("update", self.update), ("resume", self.resume),
                           ("goto", self.goto)) if value)
        return f"Command({shown})"


_COMMAND = "$command"


def loaded_arg(stored: Any) -> Any:
    """A ``Send``'s argument as ``Send.stored_arg`` stored it: a Command rebuilt, any other value as it was
    (``values.decode_value``)."""
    if type(stored) is not dict or len(stored) != 1 or type(stored.get(_COMMAND)) is not dict:
        return decode_value(stored)
    fields = stored[_COMMAND]
    goto = fields["goto"]
    targets = goto_of({GOTO: goto if isinstance(goto, list) else [goto]})
    return Command(graph=fields["graph"], update=decode_value(fields["update"]), resume=decode_value(fields["resume"]),
                   goto=(targets or ()) if isinstance(goto, list) else targets[0])


def goto_targets(goto: Any, who: str) -> list[str | Send]:
    """A ``goto`` as a list of node names and Sends (refusing anything else, with who gave it)."""
    items = [goto] if isinstance(goto, str | Send) else list(goto or ())
    for item in items:
        if not isinstance(item, str | Send):
            raise InvalidUpdateError(f"{who} returned Command(goto={goto!r}); goto takes node names and Sends")
    return items


def goto_of(update: dict[str, Any]) -> list[str | Send]:
    """The targets an update's ``GOTO`` entry holds, from a live Command or as stored (JSON)."""
    return [Send(t["node"], loaded_arg(t["arg"])) if isinstance(t, dict) else t for t in update.get(GOTO, ())]


def dump_goto(targets: Sequence[str | Send]) -> list[Any]:
    """Targets as JSON, as the step's writes store them."""
    return [t.to_json() if isinstance(t, Send) else t for t in targets]


# A Send (its argument and timeout) is a value like any other where LangGraph stores one: in a channel, or through
# ``checkpoint.serde.jsonplus``. Both classes are statehitl's own, registered by name here, never looked up by it.
register(Send, name="statehitl.Send")
register(TimeoutPolicy, name="statehitl.TimeoutPolicy")
