"""What a worker tells the outside world: a thread newly waiting on a human, an answer stored, an action
whose outcome nobody recorded. Plain data built from stored records; no I/O.

Each event has an ``id`` that is the same wherever and however often it is derived (from a stream
record, a redelivered one, an index pass, another worker): ``<thread>/<name>``, where ``name`` is
``i.<checkpoint>`` for the interrupts a checkpoint waits on, ``a.<checkpoint>.<interrupt>`` for an
answer (the name of the answer record itself), ``u.<slot>`` for the claim whose action's outcome is
unknown, and ``f.<name>`` for the delivery of event ``<name>`` given up. That id names the event's
outbox entry and marker, which make it go out once (``notify.py``), and it is in the payload (and, as
a digest, in the ``webhook-id`` header), so a receiver can tell a resent event from a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from statehitl.checkpoint.records import StoredAnswer, ThreadIndex
from statehitl.errors import ActionOutcomeUnknownError

EventKind = Literal["interrupt", "answer", "outcome_unknown", "delivery_failed"]


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened to a thread, as a sink receives it (``payload()`` is the webhook's JSON).

    ``kind``: ``interrupt`` (the thread waits on interrupts a human must answer), ``answer`` (an answer
    to one of them was stored, through any door), ``outcome_unknown`` (a run acted on answers and
    stopped without recording how; a human must check and allow a retry), ``delivery_failed`` (another
    event was given up after its outbox's schedule of retries). ``name`` is the event's name within its
    thread, ``data`` the rest of its payload.
    """

    kind: EventKind
    thread_id: str
    name: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The same for every derivation of this event, different for every other event."""
        return f"{self.thread_id}/{self.name}"

    def payload(self, sent_at: float) -> dict[str, Any]:
        """The JSON object a webhook is sent: ``event`` (the kind), ``id``, ``thread_id``, ``sent_at``, the data."""
        return {"event": self.kind, "id": self.id, "thread_id": self.thread_id, "sent_at": round(sent_at, 3),
                **self.data}


def interrupt_event(entry: ThreadIndex) -> Event | None:
    """The event of a thread waiting on interrupts, from its index entry; None if it waits on nothing."""
    if entry.status != "interrupted" or not entry.interrupts:
        return None
    answered = {mark.interrupt_id for mark in entry.answered}
    interrupts = []
    for record in entry.interrupts:
        shown: dict[str, Any] = {"id": record.id, "name": record.name, "reason": record.reason, "node": record.node,
                                 "source": record.source, "answered": record.id in answered}
        if record.response_schema is not None:
            shown["response_schema"] = record.response_schema
        if record.expires_at is not None:
            shown["expires_at"] = record.expires_at
            shown["on_expire"] = record.on_expire
        interrupts.append(shown)
    return Event("interrupt", entry.thread_id, f"i.{entry.seq:012d}", {
        "checkpoint_id": f"{entry.seq:012d}", "machine": entry.machine, "step": entry.step,
        "waiting_since": entry.updated_at, "interrupts": interrupts,
    })


def answer_event(answer: StoredAnswer) -> Event:
    """The event of an answer stored for an interrupt (the answer record's own content)."""
    checkpoint = f"{int(answer.checkpoint_id):012d}"
    return Event("answer", answer.thread_id, f"a.{checkpoint}.{answer.interrupt_id}", {
        "checkpoint_id": checkpoint, "interrupt_id": answer.interrupt_id, "name": answer.name,
        "response": answer.response, "responder": answer.responder, "comment": answer.comment, "via": answer.via,
        "answered_at": answer.answered_at,
    })


def outcome_unknown_event(error: ActionOutcomeUnknownError, slot: int) -> Event:
    """The event of a thread whose last run acted on answers without recording how it ended (claim ``slot``)."""
    return Event("outcome_unknown", error.thread_id, f"u.{slot:012d}", {
        "interrupt_ids": list(error.interrupt_ids), "owner": error.owner, "started_at": error.started_at,
        "message": str(error),
    })


def delivery_failed_event(event: Event, rounds: int, error: str) -> Event:
    """The event of ``event`` given up after ``rounds`` failed rounds of delivery (``notify.py``)."""
    return Event("delivery_failed", event.thread_id, f"f.{event.name}", {
        "event_id": event.id, "event_kind": event.kind, "rounds": rounds, "error": error,
    })
