"""Run status shared by StateGraph, Graph and Swarm results (Strands' ``Status`` values)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status"]


class Status(StrEnum):
    """Where a run stands. ``INTERRUPTED`` means a human's answer is needed to go on."""

    PENDING = "pending"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
