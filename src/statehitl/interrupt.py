"""Interrupts: the pure bookkeeping behind ``interrupt()`` calls in nodes, hooks and tools.

An interrupt call either returns the human's response (when the resumed run supplies one for its id)
or raises ``InterruptRaised``, which the runner catches. Ids are derived from the call site, so the
handler that re-runs on resume computes the same id and finds its own response. None of this does
I/O; the runner owns storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statehitl._json import require_json
from statehitl.errors import DuplicateInterruptNameError, InterruptNameError, InterruptReasonError
from statehitl.expiry import Expiry
from statehitl.interrupt_ids import interrupt_id

__all__ = ["Interrupt", "InterruptContext", "InterruptRaised", "InterruptScope"]


@dataclass
class Interrupt:
    """A request for human input: what the caller gets in ``result.interrupts``.

    ``id`` is what a response must quote; ``name`` and ``reason`` are what the raiser gave;
    ``source`` says where it came from (``"node"``, ``"hook"`` or ``"tool"``) and ``node`` which
    node (or tool use) raised it.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None
    source: str = "node"
    node: str = ""
    expires_at: float | None = None
    """When (epoch seconds) an unanswered interrupt is answered with ``on_expire`` by a sweep
    (``statehitl.inbox.sweep``); None: it waits for a human however long it takes."""
    on_expire: Any = None
    """The response a sweep applies once ``expires_at`` has passed (JSON)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the same shape the checkpoint stores (expiry only when the interrupt has one)."""
        shape = {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "response": self.response,
            "source": self.source,
            "node": self.node,
        }
        if self.expires_at is not None:
            shape.update(expires_at=self.expires_at, on_expire=self.on_expire)
        return shape


class InterruptRaised(Exception):
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

    def interrupt(self, name: str, reason: Any = None, response: Any = None, *,
                  expires: Expiry | None = None) -> Any:
        """Return the response for ``name`` if the human answered it; otherwise stop the handler.

        ``response`` is an answer known in advance (Strands' preemptive response, e.g. an approval
        the user already gave for the session): returned at once, without stopping, unless the human
        answered this interrupt already. Like every response it must be JSON-serializable.
        ``expires`` (``statehitl.expiry.expiry``) is when a sweep answers it with its default instead.
        """
        if not isinstance(name, str) or not name:
            raise InterruptNameError(f"interrupt name must be a non-empty str, got {name!r}")
        if name in self.names:
            raise DuplicateInterruptNameError(
                f"interrupt name {name!r} is used twice in {self.source} {self.node!r}; names must be "
                "unique per event, node or tool (namespace them, e.g. f'{app}-approval')"
            )
        self.names.add(name)
        require_json(reason, f"the reason of interrupt {name!r}", InterruptReasonError)
        iid = interrupt_id(self.site, name, self.thread)
        if iid in self.responses:
            return self.responses[iid]
        if response is not None:
            require_json(response, f"the response of interrupt {name!r}", InterruptReasonError)
            return response
        if expires is None:
            raise InterruptRaised([Interrupt(iid, name, reason, source=self.source, node=self.node)])
        raise InterruptRaised([Interrupt(iid, name, reason, source=self.source, node=self.node,
                                         expires_at=expires.at, on_expire=expires.response)])


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

    def scope(self, site: str, source: str, node: str) -> InterruptScope:
        """The scope of one handler invocation at ``site`` (built with ``prefix`` by ``interrupt_ids``)."""
        return InterruptScope(site, self.responses, source, node, self.thread)
