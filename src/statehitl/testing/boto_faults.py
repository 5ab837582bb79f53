"""Faults injected into a boto3 client's HTTP requests, for testing a backend against a real server.

A store on S3 or DynamoDB must survive what the network and the service do to it: a write that lands
while its answer is lost, a 500, a reset connection, throttling. Mocking the client in-process tests
none of that (botocore's retries, the server's conditions, what a retry finds stored), so ``BotoFaults``
works one level lower, on botocore's ``before-send`` event: every other request goes to the real server
(moto_server, DynamoDB Local, MinIO), and a faulted one either never leaves (an answer made up here) or
is sent to the server for real and then has its answer replaced by an error. botocore then does what
it does in production: retries, backs off, and hands the backend the error or the retry's answer.

::

    faults = BotoFaults(store.client)
    faults.fail("PutItem", kind="landed-lost")              # the next PutItem lands; its answer is lost
    faults.fail("PutObject", kind="500", times="always")    # every PutObject answered 500
    faults.fail("GetItem", kind="reset", after=2)           # the third GetItem attempt from now
    ...
    faults.attempts["PutItem"], faults.injected["PutItem"], faults.delivered
    faults.detach()                                         # or: with BotoFaults(client) as faults:

Kinds (``BotoFaultKind``):

- ``"landed-lost"``: the request is sent to the server (a write lands), then the client sees a read
  timeout (``ReadTimeoutError``): the outcome the client cannot know. botocore retries it.
- ``"landed-500"``: sent to the server, then answered with a 500 instead of the server's answer.
- ``"500"``: answered 500 without reaching the server (S3 ``InternalError``, DynamoDB
  ``InternalServerError``).
- ``"reset"``: the connection is closed before any answer (``ConnectionClosedError``); nothing sent.
- ``"timeout"``: a read timeout (``ReadTimeoutError``) on a request that never reached the server.
- ``"throttle"``: the service's throttling answer (S3 ``503 SlowDown``, DynamoDB ``400
  ThrottlingException``); nothing sent.

Counting is per operation and per HTTP attempt (botocore's retries count: a call retried twice is three
attempts), which is what a server sees; ``calls`` counts API calls once each. ``after=N`` lets the next
``N`` attempts of the operation through untouched, so a test can fault the Nth one. botocore is
imported only when a client is faulted (through the client itself), and urllib3 (botocore's own HTTP
library) only to deliver a ``landed-*`` request, so ``statehitl.testing`` needs no boto3.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

if TYPE_CHECKING:
    from botocore.awsrequest import AWSPreparedRequest, AWSResponse

__all__ = ["KINDS", "BotoFaultKind", "BotoFaults"]

BotoFaultKind = Literal["landed-lost", "landed-500", "500", "reset", "timeout", "throttle"]
"""What happens to a faulted request; see the module docstring."""

KINDS: Final[tuple[BotoFaultKind, ...]] = get_args(BotoFaultKind)
"""Every ``BotoFaultKind``, for a test parametrized over all of them."""

_JSON_PROTOCOLS = frozenset({"json", "rest-json"})
_XML_PROTOCOLS = frozenset({"rest-xml", "query", "ec2"})


@dataclass
class _Rule:
    """One ``fail()``: which operation, what to do, how many attempts to let by first, how many to fault."""

    operation: str
    kind: BotoFaultKind
    skip: int
    remaining: int | None  # None: every attempt from now on

    def matches(self, operation: str) -> bool:
        return self.operation in (operation, "*")


class _Body:
    """A made-up answer's body, as botocore reads one from the connection (``raw.stream()``)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


class BotoFaults:
    """Fault injection for one boto3 client (``client.meta.events``), counting its requests per operation.

    Attach one per client; every ``fail()`` adds a rule, and the first armed rule for an operation
    decides what its next attempt meets. Thread-safe: a store's worker threads share the client.
    """

    def __init__(self, client: Any) -> None:
        model = client.meta.service_model
        self.service: str = model.service_id.hyphenize()
        """botocore's event name for the service (``s3``, ``dynamodb``)."""
        self.protocol: str = getattr(model, "resolved_protocol", None) or model.protocol
        if self.protocol not in _JSON_PROTOCOLS | _XML_PROTOCOLS:
            raise ValueError(
                f"BotoFaults makes up error answers in JSON or XML; {self.service} speaks {self.protocol!r}"
            )
        self.attempts: Counter[str] = Counter()
        """HTTP attempts per operation, retries included (what the server would have seen, faulted or not)."""
        self.calls: Counter[str] = Counter()
        """API calls per operation, each counted once however often botocore retried it."""
        self.injected: Counter[str] = Counter()
        """Attempts per operation that met a fault."""
        self.delivered: list[tuple[str, int]] = []
        """``(operation, HTTP status)`` of each ``landed-*`` request the server answered, in order: a test
        checks here that the write it faulted really landed (status 200)."""
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._events = client.meta.events
        self._id = f"statehitl.testing.BotoFaults-{id(self)}"
        self._pool: Any = None
        self._events.register(f"before-send.{self.service}", self._before_send, unique_id=f"{self._id}-send")
        self._events.register(f"before-call.{self.service}", self._before_call, unique_id=f"{self._id}-call")

    def fail(self, operation: str, kind: BotoFaultKind = "500", *, times: int | Literal["always"] = 1,
             after: int = 0) -> BotoFaults:
        """Fault ``times`` attempts of ``operation`` (botocore's name, ``PutItem``; ``"*"`` for any)
        after letting the next ``after`` through. Returns the faults, so calls chain."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if times != "always" and (not isinstance(times, int) or times < 1):
            raise ValueError(f"times must be a positive number of attempts or 'always', got {times!r}")
        if not isinstance(after, int) or after < 0:
            raise ValueError(f"after must be a number of attempts (0 or more), got {after!r}")
        with self._lock:
            self._rules.append(_Rule(operation, kind, after, None if times == "always" else times))
        return self

    @property
    def armed(self) -> int:
        """Rules that will still fault an attempt (an ``"always"`` rule stays armed until ``clear()``)."""
        with self._lock:
            return len(self._rules)

    def clear(self) -> None:
        """Disarm every rule; the counters keep counting."""
        with self._lock:
            self._rules.clear()

    def detach(self) -> None:
        """Unregister from the client: its requests go through untouched and are no longer counted."""
        self._events.unregister(f"before-send.{self.service}", unique_id=f"{self._id}-send")
        self._events.unregister(f"before-call.{self.service}", unique_id=f"{self._id}-call")
        if self._pool is not None:
            self._pool.clear()

    def __enter__(self) -> BotoFaults:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.detach()

    # -- botocore's events ------------------------------------------------------------------------

    def _before_call(self, model: Any, **_: Any) -> None:
        with self._lock:
            self.calls[model.name] += 1

    def _before_send(self, request: AWSPreparedRequest, event_name: str, **_: Any) -> AWSResponse | None:
        """botocore's hook before each HTTP attempt: ``None`` sends it as usual; an ``AWSResponse`` is the
        answer instead; an exception is what the connection raised (botocore retries both as usual)."""
        operation = event_name.rsplit(".", 1)[-1]
        with self._lock:
            self.attempts[operation] += 1
            kind = self._take(operation)
            if kind is not None:
                self.injected[operation] += 1
        if kind is None:
            return None
        if kind.startswith("landed-"):
            status = self._deliver(request)
            with self._lock:
                self.delivered.append((operation, status))
        return self._fault(kind, request)

    def _take(self, operation: str) -> BotoFaultKind | None:
        """The kind of the first armed rule for this attempt (called with the lock held); every matching
        rule still letting attempts by counts this one."""
        fired: _Rule | None = None
        for rule in self._rules:
            if not rule.matches(operation):
                continue
            if rule.skip:
                rule.skip -= 1
            elif fired is None:
                fired = rule
        if fired is None:
            return None
        if fired.remaining is not None:
            fired.remaining -= 1
            if fired.remaining == 0:
                self._rules.remove(fired)
        return fired.kind

    # -- what a faulted attempt meets -------------------------------------------------------------

    def _fault(self, kind: BotoFaultKind, request: AWSPreparedRequest) -> AWSResponse:
        from botocore.exceptions import ConnectionClosedError, ReadTimeoutError

        if kind in ("landed-lost", "timeout"):
            raise ReadTimeoutError(endpoint_url=request.url)
        if kind == "reset":
            raise ConnectionClosedError(endpoint_url=request.url)
        if kind == "throttle":
            if self.service == "s3":
                return self._answer(request, 503, "SlowDown", "Please reduce your request rate.")
            code = "ThrottlingException" if self.protocol in _JSON_PROTOCOLS else "Throttling"
            return self._answer(request, 400, code, "Rate exceeded")
        if self.service == "s3":
            return self._answer(request, 500, "InternalError", "We encountered an internal error. Please try again.")
        code = "InternalServerError" if self.protocol in _JSON_PROTOCOLS else "InternalFailure"
        return self._answer(request, 500, code, "Internal server error")

    def _answer(self, request: AWSPreparedRequest, status: int, code: str, message: str) -> AWSResponse:
        """An error answer in the service's own format, as its parser expects it."""
        from botocore.awsrequest import AWSResponse
        from botocore.compat import HTTPHeaders

        detail = f"{message} (injected by statehitl.testing.BotoFaults)"
        request_id = "statehitl-boto-faults"
        if self.protocol in _JSON_PROTOCOLS:
            body = json.dumps({"__type": f"statehitl.testing#{code}", "message": detail}).encode()
            fields = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": request_id}
        else:
            error = f"<Code>{code}</Code><Message>{detail}</Message>"
            xml = (f"<Error>{error}<RequestId>{request_id}</RequestId></Error>" if self.protocol == "rest-xml"
                   else f"<ErrorResponse><Error>{error}</Error><RequestId>{request_id}</RequestId></ErrorResponse>")
            body = f'<?xml version="1.0" encoding="UTF-8"?>\n{xml}'.encode()
            fields = {"Content-Type": "application/xml", "x-amz-request-id": request_id}
        headers = HTTPHeaders()
        for name, value in {**fields, "Content-Length": str(len(body))}.items():
            headers[name] = value
        return AWSResponse(request.url, status, headers, _Body(body))

    def _deliver(self, request: AWSPreparedRequest) -> int:
        """Send the request, signed as botocore signed it, to the real server; its HTTP status.

        A streamed body (S3's) is read from its start, where botocore rewinds it before every attempt,
        and left there for the retry.
        """
        import urllib3

        body: Any = request.body
        if body is None:
            data = b""
        elif isinstance(body, bytes | bytearray):
            data = bytes(body)
        elif isinstance(body, str):
            data = body.encode()
        else:
            body.seek(0)
            data = body.read()
            body.seek(0)
        headers = {name: value.decode() if isinstance(value, bytes) else str(value)
                   for name, value in request.headers.items() if name.lower() != "expect"}
        with self._lock:
            if self._pool is None:
                self._pool = urllib3.PoolManager(maxsize=32, timeout=urllib3.Timeout(connect=10.0, read=60.0))
            pool = self._pool
        answer = pool.request(request.method, request.url, body=data, headers=headers, retries=False,
                              redirect=False)
        return int(answer.status)
