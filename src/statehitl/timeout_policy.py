"""LangGraph's ``TimeoutPolicy``: how long one attempt of an async node (or a task, or a ``Send``'s task) may
take. Its own module, below the graph and the commands, so that a ``Send`` coerces its ``timeout`` as LangGraph's
does; ``graph.node_guards`` applies it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

__all__ = ["TimeoutPolicy"]


@dataclass(frozen=True, kw_only=True)
class TimeoutPolicy:
    """How long one attempt of an async node may take (``add_node(timeout=)``, ``set_node_defaults(timeout=)``):
    ``run_timeout`` caps its wall-clock time; ``idle_timeout`` caps the time without progress, which
    ``runtime.heartbeat()`` reports (and, with ``refresh_on="auto"``, each chunk the node writes to the custom
    stream). Seconds, or a ``timedelta``; a plain number given where a policy is taken is a ``run_timeout``."""

    run_timeout: float | timedelta | None = None
    idle_timeout: float | timedelta | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    @classmethod
    def coerce(cls, value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
        """A policy in seconds from any form ``timeout=`` takes; None for none. A limit that is not above 0 is
        a ``ValueError``."""
        if value is None:
            return None
        if isinstance(value, TimeoutPolicy) and _in_seconds(value):
            return value  # already coerced: the same policy, as LangGraph's
        policy = value if isinstance(value, TimeoutPolicy) else cls(run_timeout=value)
        if policy.refresh_on not in ("auto", "heartbeat"):
            raise ValueError(f"refresh_on must be 'auto' or 'heartbeat', got {policy.refresh_on!r}")
        run, idle = _seconds(policy.run_timeout, "run_timeout"), _seconds(policy.idle_timeout, "idle_timeout")
        if run is None and idle is None:
            return None
        return cls(run_timeout=run, idle_timeout=idle, refresh_on=policy.refresh_on)


def _seconds(value: float | timedelta | None, name: str) -> float | None:
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"{name} must be greater than 0, got {value!r}")
    return seconds


def _in_seconds(policy: TimeoutPolicy) -> bool:
    """Whether ``policy`` is one ``coerce`` returns: limits in positive float seconds, a known ``refresh_on``."""
    limits = [x for x in (policy.run_timeout, policy.idle_timeout) if x is not None]
    seconds = all(type(limit) is float and limit > 0 for limit in limits)
    return bool(limits) and seconds and policy.refresh_on in ("auto", "heartbeat")
