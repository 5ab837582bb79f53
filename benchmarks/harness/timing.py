"""Timing loops: every side of a row runs interleaved with the others, on a quiet disk."""

from __future__ import annotations

import os
import statistics
import uuid
from collections.abc import Callable

Trial = Callable[[str], float]
"""Runs one repetition on the given fresh thread id and returns the timed seconds.

A trial times itself (rather than being timed from outside) so that setup that
is not part of the measured definition -- e.g. building the first graph of a
round trip -- can stay out of the clock.
"""


def settle_disk() -> None:
    """Write back what earlier rows left dirty before timing more durable writes (untimed).

    ext4 in its default data=ordered mode makes a journal commit wait for the writeback of other
    files' data, and a new log's first fdatasync needs a commit. Pages that earlier rows left dirty
    (the chains' unsynced writes, the peer's session files, an earlier run) slowed whichever side
    fsyncs next, by a varying amount (see "Fairness notes" in benchmarks/README.md). Every row that
    times writes starts all its sides from the same quiet disk.
    """
    os.sync()


BLOCK = 10
"""Repetitions one side runs back to back before the other side's block.

Alternating rep by rep makes each side idle for exactly the other side's rep, and a call after a
longer idle starts with colder CPU caches: on the 2-core VMs here statehitl's Graph round trip took
2.1-2.4 ms back to back, 2.9 ms after 0.2 ms idle, 3.7 ms after 3 ms and 4.8 ms after 10 ms
(Strands' took 9.9 ms back to back, 11.5 ms after 10 ms). So the faster side, idling through the
slower side's longer reps, paid the most, and every ratio was pulled towards 1 by the harness. In
blocks both sides run as in a loop: a worker's block is one command (``WorkerTrial.many``), so it
does not idle on the pipe between reps either, and only a block's first call starts after the
other side's block (the median sets it aside). ``block=1`` gives the old rep-by-rep alternation."""


def run_interleaved(trials: dict[str, Trial], warmup: int, reps: int, label: str,
                    block: int = BLOCK) -> dict[str, list[float]]:
    """Warm every side up, then let the sides take turns in blocks of ``block`` reps; each trial gets a
    fresh thread id.

    Taking turns (and flipping which side goes first each block) makes background load and disk
    writeback hit both sides alike, so the ratio stays meaningful on a shared or noisy machine; the
    blocks keep each side's reps back to back (``BLOCK``). Fresh thread ids keep every rep on an empty
    history. The collector runs as in real use: enabled, never forced between reps. A forced full
    collection before each rep released memory that the rep then faulted back in (the same calls,
    every one of them slower, for both frameworks), a harness cost that squeezed every ratio towards 1
    (see "Why no forced collection" in benchmarks/README.md).
    """
    settle_disk()
    for side, trial in trials.items():
        _run_block(trial, [f"{label}-{side}-warm-{i}-{uuid.uuid4().hex[:8]}" for i in range(warmup)])
    samples: dict[str, list[float]] = {side: [] for side in trials}
    order = list(trials)
    for number, start in enumerate(range(0, reps, block)):
        for side in order if number % 2 == 0 else reversed(order):
            labels = [f"{label}-{side}-{i}-{uuid.uuid4().hex[:8]}" for i in range(start, min(start + block, reps))]
            samples[side].extend(_run_block(trials[side], labels))
    return samples


def _run_block(trial: Trial, labels: list[str]) -> list[float]:
    """One rep per label, back to back: in one command when the trial runs in a worker (its ``many``)."""
    many: Callable[[list[str]], list[float]] | None = getattr(trial, "many", None)
    return many(labels) if many is not None else [trial(label) for label in labels]


def median_or_none(samples: list[float]) -> float | None:
    """The median, or None for a side that was not measured (`--only`)."""
    return statistics.median(samples) if samples else None


def to_ms(samples: list[float]) -> list[float]:
    return [s * 1e3 for s in samples]
