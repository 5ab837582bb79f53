"""One streamed HTTP POST for the providers that speak JSON over plain HTTP (OpenAI-compatible servers,
Anthropic), with the standard library only.

The call blocks, so it runs in the worker thread ``iterate_in_thread`` gives it. Its response is read
line by line as the server sends it (server-sent events), and a failure is reported by meaning: an HTTP
error status goes to the provider's own mapping (``status_error``), because only the provider knows
which of its bodies mean throttling or an overflowing context; refused connections, silences longer
than ``timeout`` and broken transports become ``ModelError``s that say what to check.

Retries happen here, and only before the first line is read: a request the server refused with a
retryable status is sent again, but once the reply has begun streaming, its events are already the
agent's (its callbacks have printed them), so a failure then is raised, not hidden by a second reply.
"""

from __future__ import annotations

import http.client
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.message import Message as HeaderMap
from urllib.parse import urlsplit

from statehitl.models.errors import ModelError

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""What the Anthropic and OpenAI SDKs retry: timeouts, lock conflicts, rate limits, server errors, overload."""
_INITIAL_DELAY = 0.5
_MAX_DELAY = 8.0
_MAX_RETRY_AFTER = 60.0
"""A server asking for a longer wait than this is not waited for: the call fails and says so instead."""

StatusError = Callable[[int, bytes, HeaderMap], ModelError]
"""``(status, body, headers) -> error``: a provider's reading of an HTTP error response."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests go: ``base_url`` as the user gave it (for messages) and the parts a connection needs."""

    base_url: str
    scheme: str
    host: str
    port: int | None
    path: str

    @classmethod
    def parse(cls, base_url: str, suffix: str, *, owner: str, example: str) -> Endpoint:
        """``base_url`` + ``suffix`` (the API path); ``owner`` and ``example`` word the error for a bad URL."""
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"{owner} needs an http(s) URL such as {example}, not {base_url!r}")
        try:
            port = url.port
        except ValueError:
            raise ValueError(f"{owner}: {base_url!r} has a port that is not a number") from None
        return cls(base_url, url.scheme, url.hostname, port, url.path.rstrip("/") + suffix)


def stream_lines(
    endpoint: Endpoint,
    body: bytes,
    headers: Mapping[str, str],
    *,
    timeout: float,
    status_error: StatusError,
    refused_hint: str,
    max_retries: int = 0,
) -> Iterator[bytes]:
    """POST ``body`` and yield the response's lines as they arrive.

    An HTTP error status raises ``status_error(status, body, headers)``, after up to ``max_retries``
    new attempts when the status is retryable (and the server's ``x-should-retry`` does not say no),
    waiting as ``retry-after-ms``/``retry-after`` ask or with exponential backoff. ``refused_hint``
    ends the message for a refused connection (how to start the server).
    """
    attempt = 0
    while True:
        connection_class = http.client.HTTPSConnection if endpoint.scheme == "https" else http.client.HTTPConnection
        connection = connection_class(endpoint.host, endpoint.port, timeout=timeout)
        try:
            try:
                connection.request("POST", endpoint.path, body=body, headers=dict(headers))
                response = connection.getresponse()
            except ConnectionRefusedError as error:
                raise ModelError(f"could not connect to {endpoint.base_url}: connection refused. {refused_hint}"
                                 ) from error
            with response:  # closing it releases the socket it holds
                if response.status >= 400:
                    payload = response.read()
                    delay = _retry_delay(response.status, response.headers, attempt, max_retries)
                    if delay is None:
                        raise status_error(response.status, payload, response.headers)
                else:
                    yield from response
                    return
        except TimeoutError as error:
            raise ModelError(
                f"{endpoint.base_url} sent nothing for {timeout} s; the model may still be loading or the reply "
                "may be long. Raise the timeout if it is just slow"
            ) from error
        except (OSError, http.client.HTTPException) as error:
            raise ModelError(f"the request to {endpoint.base_url} failed: {error!r}") from error
        finally:
            connection.close()
        time.sleep(delay)
        attempt += 1


def _retry_delay(status: int, headers: HeaderMap, attempt: int, max_retries: int) -> float | None:
    """Seconds to wait before the next attempt, or None when this response is final."""
    if attempt >= max_retries:
        return None
    verdict = headers.get("x-should-retry")
    if verdict == "false" or (verdict != "true" and status not in RETRY_STATUSES):
        return None
    asked = _retry_after(headers)
    if asked is not None:
        return asked if asked <= _MAX_RETRY_AFTER else None
    return min(_INITIAL_DELAY * 2.0**attempt, _MAX_DELAY) * (1 - 0.25 * random.random())


def _retry_after(headers: HeaderMap) -> float | None:
    """The wait the server asked for (``retry-after-ms``, else ``retry-after`` in seconds), if it asked."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value: str | None = headers.get(name)
        if value is not None:
            try:
                seconds = float(value) / scale
                return max(seconds, 0.0)
            except ValueError:
                continue  # an HTTP date: rare enough to fall back to backoff
    return None
