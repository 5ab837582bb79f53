"""Rows that put statehitl beside a peer framework: medians, their ratio, the table and the JSON."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from harness.timing import median_or_none


def fmt(value: float | None) -> str:
    """A number for the tables: one decimal from 10 up, two below; `n/a` for a side not measured."""
    if value is None:
        return "n/a"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


@dataclass
class Row:
    """One line of a results table; `unit` tells how to read both numbers."""

    name: str
    unit: str
    statehitl: float | None
    peer: float | None
    """The peer framework's median (its column is named after the peer)."""
    statehitl_samples: list[float] = field(default_factory=list)
    peer_samples: list[float] = field(default_factory=list)
    has_ratio: bool = True
    """False for a row whose two numbers are not one measure of both sides (bench_agent's growth rows)."""

    @property
    def ratio(self) -> float | None:
        """peer / statehitl: above 1 means statehitl is faster."""
        if not self.has_ratio or self.statehitl is None or self.peer is None or self.statehitl <= 0:
            return None
        return self.peer / self.statehitl


@dataclass(frozen=True)
class Peer:
    """The framework a script measures statehitl against, named in its table, its JSON and its `--only`."""

    name: str
    """The peer's side name: `langgraph` or `strands`."""
    has_ratio_field: bool = False
    """Whether the JSON rows say `has_ratio` (only a script that has rows without a ratio)."""

    @property
    def sides(self) -> tuple[str, str]:
        return ("statehitl", self.name)

    def measured(self, only: str | None) -> list[str]:
        """The sides a run measures: both, or the one `--only` names."""
        return [only] if only else list(self.sides)

    def row(self, name: str, unit: str, samples: dict[str, list[float]]) -> Row:
        """A row of the medians of each side's samples; a side missing from `samples` was not measured."""
        ours, theirs = samples.get("statehitl", []), samples.get(self.name, [])
        return Row(name, unit, median_or_none(ours), median_or_none(theirs), ours, theirs)

    def progress(self, row: Row) -> None:
        """One line to stderr per finished row, so a long run shows it is alive: `done: NAME: side=median ...`."""
        print(f"  done: {row.name}: statehitl={fmt(row.statehitl)} {self.name}={fmt(row.peer)}", file=sys.stderr)

    def table(self, rows: list[Row]) -> str:
        lines = [
            f"| benchmark | unit | statehitl | {self.name} | ratio ({self.name} / statehitl) |",
            "| --- | --- | ---: | ---: | ---: |",
        ]
        for row in rows:
            ratio = "—" if not row.has_ratio else "n/a" if row.ratio is None else f"{row.ratio:.2f}x"
            lines.append(f"| {row.name} | {row.unit} | {fmt(row.statehitl)} | {fmt(row.peer)} | {ratio} |")
        return "\n".join(lines)

    def json(self, row: Row) -> dict[str, Any]:
        """The row as the results JSON has it: the peer's numbers under its own name."""
        out: dict[str, Any] = {"name": row.name, "unit": row.unit, "statehitl": row.statehitl, self.name: row.peer}
        if self.has_ratio_field:
            out["has_ratio"] = row.has_ratio
        out["statehitl_samples"] = row.statehitl_samples
        out[f"{self.name}_samples"] = row.peer_samples
        out["ratio"] = row.ratio
        return out


Check = tuple[str, float | None, bool | None]
"""A target next to what a run measured: its text, the measured value (None: a side was not measured) and
whether it is met (None likewise)."""


def at_least(text: str, value: float | None, target: float) -> Check:
    return text, value, None if value is None else value >= target


def at_most(text: str, value: float | None, target: float) -> Check:
    return text, value, None if value is None else value <= target


def targets_markdown(checks: list[Check]) -> tuple[str, list[dict[str, Any]]]:
    """The targets table (`| target | measured | met |`, a missed target in bold) and its JSON."""
    lines = ["| target | measured | met |", "| --- | ---: | --- |"]
    for text, value, met in checks:
        shown = "n/a" if value is None else f"{value:.2f}x"
        lines.append(f"| {text} | {shown} | {'n/a' if met is None else 'yes' if met else '**no**'} |")
    return "\n".join(lines), [{"target": t, "measured": v, "met": m} for t, v, m in checks]
