"""Workers: answers and expiries resume threads on their own, exactly once, on any store.

``Worker(store, build)`` (or ``statehitl worker --app module:build --store URL``) resumes every thread
whose answer is stored (by the inbox, its page, an expiry, or an app call that died before applying
it) and applies expiry defaults when they fall due. On DynamoDB it reads the table's stream, so the
answer's write is itself the event (``lambda_handler`` is the same worker as an AWS Lambda function on
that stream); on S3 and the file store it polls the thread index. ``on_interrupt=`` / ``on_answer=``
send each event once to Python callables or webhooks signed as Standard Webhooks says, through a durable
outbox (``read_outbox``, ``retry_failed``; ``statehitl deliveries``). See docs/workers.md.
"""

from __future__ import annotations

from statehitl.worker.events import Event, answer_event, delivery_failed_event, interrupt_event, outcome_unknown_event
from statehitl.worker.lambda_function import WorkerSettings, lambda_handler
from statehitl.worker.notify import RETRY_SCHEDULE, OutboxEntry, read_outbox, retry_failed
from statehitl.worker.report import Report
from statehitl.worker.thread_work import RETRY_COMMENT, ThreadOutcome
from statehitl.worker.webhook import (
    EVENT_HEADER,
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    TOLERANCE,
    CallableSink,
    Retrying,
    Sink,
    Webhook,
    WebhookDeliveryError,
    sign,
    verify_signature,
    webhook_id,
)
from statehitl.worker.worker import Worker

Outcome = ThreadOutcome
"""The name ``ThreadOutcome`` had before it was told apart from an answer's and an audit row's outcome; kept
for code that imports it."""

__all__ = [
    "EVENT_HEADER",
    "ID_HEADER",
    "RETRY_COMMENT",
    "RETRY_SCHEDULE",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "TOLERANCE",
    "CallableSink",
    "Event",
    "OutboxEntry",
    "Outcome",
    "Report",
    "Retrying",
    "Sink",
    "ThreadOutcome",
    "Webhook",
    "WebhookDeliveryError",
    "Worker",
    "WorkerSettings",
    "answer_event",
    "delivery_failed_event",
    "interrupt_event",
    "lambda_handler",
    "outcome_unknown_event",
    "read_outbox",
    "retry_failed",
    "sign",
    "verify_signature",
    "webhook_id",
]
