"""``lambda_handler``: the worker as an AWS Lambda function on the DynamoDB table's stream.

An event source mapping on the table's stream invokes it with batches of stream records (``Records``);
each answer record written wakes a resume of its thread, as ``statehitl worker`` does in a container.
Invoked by anything else (an EventBridge schedule, ``{}``), it makes one pass over the thread index:
it applies expiry defaults that fell due (a stream carries writes, not time) and picks up threads a
crashed resume left (their claim's lease has run out). docs/workers.md has the SAM template.

It is configured by environment variables, read when an invocation starts (never at import), and
kept for the next invocations of a warm container while they stay the same:

- ``STATEHITL_WORKER_STORE``: the store URL, ``dynamodb://TABLE?region=...`` (required);
- ``STATEHITL_WORKER_APPS``: one or more ``module:build`` in the function's package, separated by
  commas or spaces (required; routed by machine name when several);
- ``STATEHITL_WORKER_LEASE``: claims' lease in seconds (default: the checkpointer's, 60);
- ``STATEHITL_WORKER_RETRY_UNKNOWN``: ``true`` to retry actions of unknown outcome on its own (only
  when every action honours its idempotency key);
- ``STATEHITL_WORKER_ON_INTERRUPT`` / ``STATEHITL_WORKER_ON_ANSWER``: webhook URLs for the events
  (several separated by commas or spaces), signed with ``STATEHITL_WEBHOOK_SECRET``;
- ``STATEHITL_WORKER_CONCURRENCY``: threads resumed at once per invocation (default 8).

A thread whose resume failed on a transient store error is reported back as a batch item failure
(``FunctionResponseTypes: [ReportBatchItemFailures]``), so Lambda retries from its record; anything
else that failed is logged and not retried by Lambda, which would retry it forever.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statehitl.worker.webhook import Webhook

logger = logging.getLogger("statehitl.worker")

ENV_PREFIX = "STATEHITL_WORKER_"
WEBHOOK_SECRET_ENV = "STATEHITL_WEBHOOK_SECRET"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def _split(value: str) -> tuple[str, ...]:
    return tuple(part for part in re.split(r"[,\s]+", value.strip()) if part)


@dataclass(frozen=True)
class WorkerSettings:
    """What a worker is told to do, as the Lambda handler reads it from its environment (``from_env``)."""

    store: str
    apps: tuple[str, ...]
    lease_seconds: float | None = None
    retry_unknown: bool = False
    on_interrupt: tuple[str, ...] = ()
    on_answer: tuple[str, ...] = ()
    webhook_secret: bytes | None = dataclasses.field(default=None, repr=False)
    concurrency: int = 8

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> WorkerSettings:
        """The settings ``environ`` gives (see the module docstring); ``ValueError`` naming what is wrong."""
        def get(name: str) -> str:
            return environ.get(ENV_PREFIX + name, "").strip()

        store = get("STORE")
        if not store:
            raise ValueError(f"set {ENV_PREFIX}STORE to the store URL, e.g. dynamodb://TABLE?region=eu-west-1")
        apps = _split(get("APPS"))
        if not apps:
            raise ValueError(f"set {ENV_PREFIX}APPS to the app's module:build (several separated by commas)")
        retry = get("RETRY_UNKNOWN").lower()
        if retry not in _TRUE | _FALSE:
            raise ValueError(f"{ENV_PREFIX}RETRY_UNKNOWN must be true or false, got {retry!r}")
        lease = _number(get("LEASE"), "LEASE", float)
        concurrency = _number(get("CONCURRENCY"), "CONCURRENCY", int)
        secret = environ.get(WEBHOOK_SECRET_ENV, "").strip()
        settings = cls(store, apps, lease, retry in _TRUE, _split(get("ON_INTERRUPT")), _split(get("ON_ANSWER")),
                       secret.encode() or None, 8 if concurrency is None else int(concurrency))
        if (settings.on_interrupt or settings.on_answer) and settings.webhook_secret is None:
            raise ValueError(f"webhooks are signed: set {WEBHOOK_SECRET_ENV} to the secret their receivers share")
        return settings

    def build(self) -> Any:
        """The ``Worker`` these settings describe (its apps imported now)."""
        from statehitl.inbox.apps import load_app
        from statehitl.worker.worker import Worker

        def hooks(urls: Sequence[str]) -> list[Webhook]:
            return [Webhook(url, self.webhook_secret or b"") for url in urls]

        return Worker(self.store, [load_app(spec) for spec in self.apps], app_names=self.apps,
                      lease_seconds=self.lease_seconds, retry_unknown=self.retry_unknown,
                      on_interrupt=hooks(self.on_interrupt), on_answer=hooks(self.on_answer),
                      concurrency=self.concurrency)


def _number(text: str, name: str, kind: type[float] | type[int]) -> float | None:
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name} must be a number, got {text!r}") from None
    if value <= 0:
        raise ValueError(f"{ENV_PREFIX}{name} must be positive, got {text!r}")
    return value


_WARM: tuple[WorkerSettings, Any] | None = None
"""The worker of this container, kept between invocations (its store clients and warm threads with it)."""


def _worker() -> Any:
    global _WARM
    settings = WorkerSettings.from_env(os.environ)
    if _WARM is None or _WARM[0] != settings:
        _WARM = (settings, settings.build())
    return _WARM[1]


def lambda_handler(event: Mapping[str, Any], context: Any = None) -> dict[str, Any]:
    """The AWS Lambda entry point (``statehitl.worker.lambda_handler``): stream records, or a scheduled pass."""
    from statehitl._sync import run_sync
    from statehitl.worker.report import Report

    worker = _worker()
    worker.report = Report()  # this invocation's
    records = event.get("Records")
    if isinstance(records, list):
        return run_sync(_apply(worker, records))
    run_sync(_pass(worker))
    logger.info("statehitl worker pass: %s", dict(worker.report.counts))
    return {"batchItemFailures": []}


async def _pass(worker: Any) -> None:
    await worker.apass()
    await worker.notifier.drain()


async def _apply(worker: Any, records: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Act on a batch of stream records; the first record of a thread that failed on a transient store
    error is handed back to Lambda, which then retries the batch from there."""
    from statehitl_checkpoint_dynamodb.stream_records import stream_changes

    from statehitl.worker.report import changed_thread

    changes = stream_changes(records)  # the DynamoDB package reads its own stream records
    report = await worker.aapply_changes(change.key for change in changes)
    await worker.notifier.drain()
    logger.info("statehitl worker: %d stream records: %s", len(records), dict(report.counts))
    for change in changes:
        changed = changed_thread(change.key)
        if changed is not None and changed[1] in report.retry and change.sequence:
            return {"batchItemFailures": [{"itemIdentifier": change.sequence}]}
    return {"batchItemFailures": []}
