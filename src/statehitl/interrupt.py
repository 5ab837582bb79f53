"""Interrupts: the pure bookkeeping behind ``interrupt()`` calls in nodes, hooks and tools.

An interrupt call either returns the human's response (when the resumed run supplies one for its id)
or raises ``InterruptRaised``, which the runner catches. Ids are derived from the call site, so the
handler that re-runs on resume computes the same id and finds its own response. None of this does
I/O; the runner owns storage.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import Any

from statehitl._json import require_json
from statehitl.errors import (
    DigestMismatchError,
    DuplicateInterruptNameError,
    GraphInterrupt,
    InterruptNameError,
    InterruptReasonError,
    InvalidExpiryError,
    InvalidResponseError,
)
from statehitl.expiry import expiry
from statehitl.interrupt_ids import interrupt_id
from statehitl.responders import responders_of
from statehitl.values import decode_value

__all__ = ["Interrupt", "InterruptContext", "InterruptRaised", "InterruptScope"]


_ASKED_BY_INTERRUPT = re.compile(r"interrupt(-[0-9]+)?")
"""The names LangGraph's free ``interrupt()`` gives what it asks (``interrupt``, ``interrupt-2``, ...)."""

_PLACEHOLDER_ID = "placeholder-id"
"""LangGraph's id of an ``Interrupt(value=...)`` built without one."""


class _Unset:
    """The default of ``Interrupt(value=...)``: no value given (None is a value)."""


_UNSET = _Unset()


@dataclass(init=False, eq=False, repr=False)
class Interrupt:
    """A request for human input: what the caller gets in ``result.interrupts``.

    ``id`` is what a response must quote; ``name`` and ``reason`` are what the raiser gave;
    ``source`` says where it came from (``"node"``, ``"hook"`` or ``"tool"``) and ``node`` which
    node (or tool use) raised it. ``response_schema`` is the JSON schema of the response it expects
    (from ``response_type=``; None: any JSON), so a UI can render a form; ``digest`` binds it to the
    tool call it is about (``action_digest``), None for an interrupt about no tool call.

    Two constructors, as the two APIs write them: Strands' ``Interrupt(id, name, reason, response)`` and
    LangGraph's ``Interrupt(value=..., id=...)`` (or ``Interrupt(value)``), which is named ``interrupt``. One
    asked by LangGraph's ``interrupt()`` (or built LangGraph's way) compares by ``value``, ``id`` and
    ``response_schema`` and prints as LangGraph's does; any other compares and prints all its fields.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None
    source: str = "node"
    node: str = ""
    response_schema: dict[str, Any] | None = None
    digest: str | None = None
    expires_at: float | None = None
    """When (epoch seconds) an unanswered interrupt is answered with ``on_expire`` by a sweep
    (``statehitl.inbox.sweep``); None: it waits for a human however long it takes."""
    on_expire: Any = None
    """The response a sweep applies once ``expires_at`` has passed (JSON)."""
    responders: list[str] | None = None
    """Who may answer: names and ``group:NAME`` groups (``statehitl.responders``); None: anyone."""

    def __init__(  # noqa: PLR0917 - the seed's Interrupt(id, name, reason, response, ...) is called positionally
                 self, id: Any = _UNSET, name: str | None = None, reason: Any = None, response: Any = None,
                 source: str = "node", node: str = "", response_schema: dict[str, Any] | None = None,
                 digest: str | None = None, expires_at: float | None = None, on_expire: Any = None,
                 responders: list[str] | None = None, *, value: Any = _UNSET) -> None:
        if name is None:  # LangGraph's: Interrupt(value=..., id=...) or Interrupt(value)
            if value is _UNSET:
                value, id = id, _PLACEHOLDER_ID
            if value is _UNSET:
                raise TypeError("Interrupt() needs a value (LangGraph's Interrupt(value=..., id=...)) or an id and "
                                "a name (Strands' Interrupt(id, name))")
            name, reason = "interrupt", value
            id = _PLACEHOLDER_ID if id is _UNSET else id
        elif value is not _UNSET or id is _UNSET:
            raise TypeError("Interrupt(id, name, ...) takes its reason as reason=, not value=")
        self.id, self.name, self.reason, self.response = id, name, reason, response
        self.source, self.node, self.response_schema, self.digest = source, node, response_schema, digest
        self.expires_at, self.on_expire, self.responders = expires_at, on_expire, responders

    @property
    def value(self) -> Any:
        """LangGraph's name for ``reason``: what ``interrupt(value)`` was given."""
        return self.reason

    @property
    def langgraph(self) -> bool:
        """Asked by LangGraph's ``interrupt()`` (or built as LangGraph builds one): it reads as LangGraph's."""
        return self.source == "node" and _ASKED_BY_INTERRUPT.fullmatch(self.name) is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Interrupt):
            return NotImplemented
        if self.langgraph or other.langgraph:
            return bool(self.id == other.id and self.value == other.value
                        and self.response_schema == other.response_schema)
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self))

    def __repr__(self) -> str:
        if self.langgraph:
            return f"Interrupt(value={self.value!r}, id={self.id!r}, response_schema={self.response_schema!r})"
        return f"Interrupt({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in fields(self))})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the same shape the checkpoint stores (``response_schema``, ``digest``, the
        expiry and ``responders`` only when set)."""
        data = {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "response": self.response,
            "source": self.source,
            "node": self.node,
        }
        if self.response_schema is not None:
            data["response_schema"] = self.response_schema
        if self.digest is not None:
            data["digest"] = self.digest
        if self.expires_at is not None:
            data.update(expires_at=self.expires_at, on_expire=self.on_expire)
        if self.responders is not None:
            data["responders"] = list(self.responders)
        return data


ANSWERS_USED: ContextVar[set[str] | None] = ContextVar("statehitl_answers_used", default=None)
"""The ids of the answers a run's handlers were given (``interrupt()`` returned them), nested runs and tools
in worker threads included (they share the set through the context). Once one was, the answer may have been
acted on: a run that then fails without a checkpoint leaves its action's outcome unknown. One that fails
before (an answer refused on re-run, an error before any handler asked) did nothing with them."""


class InterruptRaised(GraphInterrupt):
    """Control flow: one or more interrupts stopped a handler. Caught by the runner, never by users.

    ``progress`` is JSON the handler wants back when it is re-entered on resume: work it finished
    before stopping (an agent's tool batch keeps the results of the tools that did run), which must
    neither be lost nor applied to the state before the handler as a whole is done.
    """

    def __init__(self, interrupts: list[Interrupt], progress: Any = None) -> None:
        super().__init__(", ".join(i.name for i in interrupts))
        self.interrupts = interrupts
        self.progress = progress


@dataclass
class InterruptScope:
    """The interrupt state of one handler invocation (a node call, a hook event, a tool call).

    ``responses`` holds every answer known for the thread's current step; ``site`` makes the ids of
    this invocation distinct from other invocations. Names must be unique within one scope, the seed's
    rule, because the id is derived from the name.
    """

    site: str
    responses: dict[str, Any]
    source: str = "node"
    node: str = ""
    thread: str | None = None
    """The thread the ids are unique to (None: the ``v1`` ids of a thread waiting since before)."""
    names: set[str] = field(default_factory=set)
    digests: dict[str, str] = field(default_factory=dict)
    """The digests of the answered interrupts that were about a tool call, by interrupt id."""

    def interrupt(self, name: str, reason: Any = None, response: Any = None, response_type: Any = None, *,
                  digest: str | None = None, schema: dict[str, Any] | None = None, expires_in: float | None = None,
                  expires_at: float | None = None, on_expire: Any = None,
                  responders: list[str] | None = None) -> Any:
        """Return the response for ``name`` if the human answered it; otherwise stop the handler.

        ``response`` is an answer known in advance (Strands' preemptive response, e.g. an approval
        the user already gave for the session): returned at once, without stopping, unless the human
        answered this interrupt already. Like every response it must be JSON-serializable.
        ``response_type``: the response is validated as this type and returned as its value (a model
        instance for a model); the interrupt carries its JSON schema (or ``schema``, a more precise one
        the caller built). ``digest``: the tool call this interrupt is about (``action_digest``); an
        answer given to another call is refused. ``expires_in`` (seconds) or ``expires_at`` (epoch) with
        ``on_expire``: past the deadline a sweep answers it with ``on_expire`` (``statehitl.expiry``).
        ``responders``: who may answer, names and ``group:NAME`` groups (``statehitl.responders``); an
        answer from anyone else is refused where it is written, whichever door it came through.
        """
        if not isinstance(name, str) or not name:
            raise InterruptNameError(f"interrupt name must be a non-empty str, got {name!r}")
        expires = expiry(name, expires_in, expires_at, on_expire)
        allowed = responders_of(name, responders)
        if name in self.names:
            raise DuplicateInterruptNameError(
                f"interrupt name {name!r} is used twice in {self.source} {self.node!r}; names must be "
                "unique per event, node or tool (namespace them, e.g. f'{app}-approval')"
            )
        self.names.add(name)
        require_json(reason, f"the reason of interrupt {name!r}", InterruptReasonError)
        iid = interrupt_id(self.site, name, self.thread)
        if response_type is not None:
            _typed().remember_type(iid, response_type)  # so that a door in this process checks answers with it
        if iid in self.responses:
            return self._answered(iid, name, response_type, digest)
        if response is not None:
            return _preset(name, response, response_type)
        if schema is None and response_type is not None:
            schema = _typed().response_schema(response_type)
        if expires is not None and schema is not None:
            _check_default(name, expires.response, schema)
        raise InterruptRaised([Interrupt(iid, name, reason, source=self.source, node=self.node,
                                         response_schema=schema, digest=digest,
                                         expires_at=None if expires is None else expires.at,
                                         on_expire=None if expires is None else expires.response,
                                         responders=allowed)])

    def _answered(self, iid: str, name: str, response_type: Any, digest: str | None) -> Any:
        """The human's answer to ``iid``, noted as given to the run's handlers (``ANSWERS_USED``); one this
        handler refuses says so (``refused_answer``), so the run withdraws it."""
        try:
            answer = self._answer(iid, name, response_type, digest)
        except InvalidResponseError as refused:
            refused.refused_answer, refused.interrupt_id = True, iid
            raise
        used = ANSWERS_USED.get()
        if used is not None:
            used.add(iid)
        return answer

    def id_of(self, name: str) -> str:
        """The id an interrupt called ``name`` gets in this scope."""
        return interrupt_id(self.site, name, self.thread)

    def has_answer(self, name: str) -> bool:
        """Whether the human's answer to interrupt ``name`` of this scope is known (a resumed run)."""
        return self.id_of(name) in self.responses

    def _answer(self, iid: str, name: str, response_type: Any, digest: str | None) -> Any:
        """The human's answer to interrupt ``iid``, checked against the tool call it was given for and
        validated as ``response_type``."""
        answered = self.digests.get(iid)
        if answered is not None and digest is not None and answered != digest:
            raise DigestMismatchError(
                f"the answer to interrupt {name!r} (id {iid}) was given for tool call {answered}, but the call "
                f"that would run now is {digest} (its input changed since it was shown); nothing was applied, "
                "the thread still waits: answer the call as it is now"
            )
        found = decode_value(self.responses[iid])  # stored as tagged JSON: a datetime answer is a datetime again
        if response_type is None:
            return found
        return _typed().validate_response(response_type, found, f"the response to interrupt {name!r} (id {iid})")


def _preset(name: str, response: Any, response_type: Any) -> Any:
    """An answer known in advance, checked as any response is."""
    if response_type is not None:
        return _typed().validate_response(response_type, response, f"the preset response of interrupt {name!r}")
    require_json(response, f"the response of interrupt {name!r}", InterruptReasonError)
    return response


def _check_default(name: str, default: Any, schema: dict[str, Any]) -> None:
    """An ``on_expire`` default must be an answer the interrupt accepts, or a sweep could never apply it."""
    from statehitl.json_schema_check import schema_errors

    problems = schema_errors(default, schema)
    if problems:
        raise InvalidExpiryError(f"interrupt {name!r}: on_expire={default!r} is not a response it accepts: "
                                 f"{'; '.join(problems)}")


def _typed() -> ModuleType:
    """``response_types``, imported on the first typed interrupt: untyped ones never load its validators."""
    from statehitl import response_types

    return response_types


@dataclass(frozen=True, slots=True)
class InterruptContext:
    """What every interrupt scope of one step shares: the answers known for it, and the site prefix.

    ``prefix`` is empty for a top-level run and the enclosing node call's site for a machine running
    as a node of another machine (``interrupt_ids.nested``), so nested runs never share an id.
    """

    responses: dict[str, Any]
    prefix: str = ""
    thread: str | None = None
    """The thread whose interrupt ids these are (see ``interrupt_ids.interrupt_id``)."""
    digests: dict[str, str] = field(default_factory=dict)
    """The tool-call digests of the interrupts being answered, by id: a re-raised one must match."""

    def scope(self, site: str, source: str, node: str) -> InterruptScope:
        """The scope of one handler invocation at ``site`` (built with ``prefix`` by ``interrupt_ids``)."""
        return InterruptScope(site, self.responses, source, node, self.thread, digests=self.digests)
