"""LangGraph's ``RetryPolicy``: a node that raises is called again, after a growing pause, before its step
fails. The retries happen inside the step, so nothing of a failed attempt is stored; an interrupt is never
retried (it is how a node asks, not a failure)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from statehitl.interrupt import InterruptRaised

T = TypeVar("T")

_NOT_RETRIED = (ValueError, TypeError, ArithmeticError, ImportError, LookupError, NameError, SyntaxError,
                RuntimeError, ReferenceError, StopIteration, StopAsyncIteration, OSError)
"""Errors a retry would only repeat (a bug, a bad value), as LangGraph's default leaves them; a
``ConnectionError``, though an ``OSError``, is retried."""


def default_retry_on(error: Exception) -> bool:
    """LangGraph's default: retry what may pass on a second try, not what a bug or a bad value raised."""
    if isinstance(error, ConnectionError):
        return True
    response = getattr(error, "response", None)
    if _is_a(error, "httpx", "HTTPStatusError"):  # a server's fault may pass, a client's will not
        status = getattr(response, "status_code", None)
        return isinstance(status, int) and 500 <= status < 600
    if _is_a(error, "requests", "HTTPError"):
        # LangGraph asks for a server's status only when the response is truthy, and a requests Response is
        # falsy for any status from 400 on: so a client's fault is retried too, as there
        return not response or 500 <= getattr(response, "status_code", 0) < 600
    return not isinstance(error, _NOT_RETRIED)


def _is_a(error: Exception, package: str, name: str) -> bool:
    """Whether ``error`` is of class ``name`` of ``package`` (or a subclass), without importing the package."""
    return any(kind.__name__ == name and kind.__module__.split(".")[0] == package for kind in type(error).__mro__)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a node is called again after it raised (``add_node(retry_policy=)``).

    The pause before attempt ``n + 1`` is ``initial_interval * backoff_factor ** (n - 1)`` seconds, at most
    ``max_interval``, plus up to a second at random with ``jitter``. ``retry_on``: an exception type, a
    sequence of them, or a function of the exception saying whether to retry.
    """

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = default_retry_on

    def matches(self, error: Exception) -> bool:
        on = self.retry_on
        if isinstance(on, type):
            return isinstance(error, on)
        if isinstance(on, Sequence) and not isinstance(on, str):
            return isinstance(error, tuple(on))
        if not callable(on):  # told when a node fails, as LangGraph tells it (a policy never used is not checked)
            raise TypeError(f"retry_on must be an Exception class, a list or tuple of Exception classes, or a "
                            f"callable, got {on!r}")
        return bool(on(error))

    def pause(self, attempts: int) -> float:
        interval = min(self.max_interval, self.initial_interval * self.backoff_factor ** (attempts - 1))
        return interval + random.uniform(0, 1) if self.jitter else interval


Policies = RetryPolicy | Sequence[RetryPolicy]


def _next_pause(policies: Sequence[RetryPolicy], error: Exception, attempts: int) -> float | None:
    """The pause before the next attempt after ``attempts`` failed, or None: the error goes on."""
    if isinstance(error, InterruptRaised):
        return None
    policy = next((p for p in policies if p.matches(error)), None)
    if policy is None or attempts >= policy.max_attempts:
        return None
    return policy.pause(attempts)


def _as_list(policies: Policies) -> list[RetryPolicy]:
    return [policies] if isinstance(policies, RetryPolicy) else list(policies)


def retried(call: Callable[[], T], policies: Policies) -> T:
    """``call()``, again after a pause while ``policies`` say so."""
    listed, attempts = _as_list(policies), 0
    while True:
        try:
            return call()
        except Exception as error:
            attempts += 1
            pause = _next_pause(listed, error, attempts)
            if pause is None:
                raise
            time.sleep(pause)


async def retried_async(call: Callable[[], Awaitable[T]], policies: Policies) -> T:
    """``await call()``, again after a pause while ``policies`` say so."""
    listed, attempts = _as_list(policies), 0
    while True:
        try:
            return await call()
        except Exception as error:
            attempts += 1
            pause = _next_pause(listed, error, attempts)
            if pause is None:
                raise
            await asyncio.sleep(pause)
