"""What a worker did, and which storage keys it acts on."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from statehitl.checkpoint.answer_records import is_answer_key
from statehitl.checkpoint.index import INDEX_PREFIX
from statehitl.worker.thread_work import ThreadOutcome


@dataclass
class Report:
    """What a worker did: outcomes counted by kind, the threads that need a human, and failures."""

    counts: Counter[str] = field(default_factory=Counter)
    unknown: set[str] = field(default_factory=set)
    """Threads left with an action of unknown outcome (without ``retry_unknown``)."""
    failed: dict[str, str] = field(default_factory=dict)
    """Threads whose work raised, with the error (the last few hundred)."""
    retry: set[str] = field(default_factory=set)
    """Threads to look at again after a transient store error (the Lambda handler asks for them again)."""

    def add(self, outcome: ThreadOutcome) -> None:
        self.counts[outcome.what] += 1
        self.counts["expired"] += len(outcome.expired)
        self.counts["retried"] += outcome.retried
        if outcome.what == "unknown":
            self.unknown.add(outcome.thread_id)
        else:
            self.unknown.discard(outcome.thread_id)
        if outcome.what == "failed" and outcome.error is not None:
            self.failed[outcome.thread_id] = outcome.error
            while len(self.failed) > 500:
                del self.failed[next(iter(self.failed))]

    @property
    def resumed(self) -> int:
        return self.counts["resumed"]

    @property
    def expired(self) -> int:
        return self.counts["expired"]


def changed_thread(key: str) -> tuple[str, str] | None:
    """``("answer", thread)`` for an answer record's key, ``("entry", thread)`` for an index entry's, else None
    (checkpoints, claims, markers: nothing a worker acts on)."""
    if key.startswith("threads/") and is_answer_key(key):
        return "answer", key.split("/", 2)[1]
    if key.startswith(INDEX_PREFIX) and key.endswith("/entry") and key.count("/") == 2:
        return "entry", key.split("/", 2)[1]
    return None


