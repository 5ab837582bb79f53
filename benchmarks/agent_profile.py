"""`bench_agent.py --profile`: where statehitl's time goes in an agent cycle and in a round trip."""

from __future__ import annotations

import cProfile
import functools
import pstats
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from agent_workload import (
    CYCLES_PER_TURN,
    LIKE_FOR_LIKE,
    TURNS,
    VARIANT_LABELS,
    WINDOWS,
    Conversation,
    prompt_for,
    roundtrip_trial,
)
from harness.workers import freeze_imports


def profile_statehitl(workdir: Path, top: int) -> str:
    """cProfile statehitl turns 91-100 of a 100-turn conversation, without and with a file session.

    Only those turns run under the profiler (enabled around each `agent(prompt)`), so the tables show
    where a cycle's time goes once the history is long. cProfile slows Python code down unevenly;
    read the shares, not the absolute times. `workdir` should be a tmpfs (bench_agent.py passes its
    `--tmpfs`), so the tables show statehitl's own work rather than the disk's.
    """
    lo, hi = WINDOWS[1]
    warm = Conversation("statehitl", "file", workdir, "profile-warm", 2)
    for i in range(2):
        warm.turn(i)
    freeze_imports()
    sections = []
    for variant in LIKE_FOR_LIKE:
        conv = Conversation("statehitl", variant, workdir, f"profile-{variant}", TURNS)
        profiler = cProfile.Profile()
        wall = 0.0
        for i in range(TURNS):
            if lo <= i + 1 <= hi:
                t0 = time.perf_counter()
                profiler.enable()
                conv.agent(prompt_for(i))
                profiler.disable()
                wall += time.perf_counter() - t0
            else:
                conv.turn(i)
        conv.check(TURNS)
        cycles = (hi - lo + 1) * CYCLES_PER_TURN
        sections.append(profile_tables(pstats.Stats(profiler), cycles, wall, top,
                                       f"statehitl, {VARIANT_LABELS[variant]}, turns {lo}-{hi} of {TURNS}"))
    return "\n\n".join(sections)


def profile_roundtrip(workdir: Path, top: int, reps: int = 20) -> str:
    """cProfile statehitl's interrupt round trip (both server calls, new Agent each) over `reps` repetitions."""
    trial = roundtrip_trial("statehitl", workdir)
    return profile_runs(lambda i: functools.partial(trial, f"profile-rt-{i}-{uuid.uuid4().hex[:8]}"), reps, reps,
                        top, f"statehitl, interrupt round trip (file session), {reps} round trips", per="round trip")


def profile_runs(prepare: Callable[[int], Callable[[], object]], reps: int, units: int, top: int, title: str,
                 per: str, warmup: int = 3) -> str:
    """cProfile `reps` runs after `warmup` unprofiled ones, and the tables per `per` (`units` of them in all).

    `prepare(i)` makes run i outside the profiler (e.g. builds the graph it invokes); only the run is profiled.
    """
    for i in range(warmup):
        prepare(-1 - i)()
    profiler = cProfile.Profile()
    wall = 0.0
    for i in range(reps):
        run = prepare(i)
        t0 = time.perf_counter()
        profiler.enable()
        run()
        profiler.disable()
        wall += time.perf_counter() - t0
    return profile_tables(pstats.Stats(profiler), units, wall, top, title, per=per)


def profile_tables(stats: pstats.Stats, cycles: int, wall: float, top: int, title: str, per: str = "cycle") -> str:
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, tt, _, _) in entries.values())  # profiled function time (main thread only)

    def name(key: tuple[str, int, str]) -> str:
        file, line, func = key
        if file == "~":
            return func
        path = Path(file)
        parts = path.parts
        short = "/".join(parts[parts.index("statehitl"):]) if "statehitl" in parts else "/".join(parts[-2:])
        return f"{func} ({short}:{line})"

    def plumbing(key: tuple[str, int, str]) -> bool:
        """asyncio's loop and context frames: they wrap everything, so they crowd the cumulative table."""
        return "/asyncio/" in key[0] or key[2] == "<method 'run' of '_contextvars.Context' objects>"

    def table(sort_index: int, heading: str) -> list[str]:
        candidates = [kv for kv in entries.items() if sort_index == 2 or not plumbing(kv[0])]
        rows = sorted(candidates, key=lambda kv: kv[1][sort_index], reverse=True)[:top]
        out = [f"| {heading} | calls/{per} | µs/{per} | share |", "| --- | ---: | ---: | ---: |"]
        for key, (_, nc, tt, ct, _) in rows:
            t = ct if sort_index == 3 else tt
            out.append(f"| `{name(key)}` | {nc / cycles:.1f} | {t / cycles * 1e6:.1f} | {t / wall:.1%} |")
        return out

    lines = [
        f"### {title}",
        "",
        f"{cycles} {per}s profiled; {wall / cycles * 1e6:.0f} µs/{per} under the profiler, "
        f"{total / cycles * 1e6:.0f} µs/{per} of profiled function time. Shares are of the wall time under the "
        "profiler; time in worker threads (statehitl's fsyncs) shows up as the main thread waiting in `epoll`.",
        "",
        "By cumulative time (the function and everything it calls; asyncio's own frames left out, see the "
        "own-time table for them):",
        "",
        *table(3, "function (cumulative)"),
        "",
        "By own time (excluding callees):",
        "",
        *table(2, "function (own time)"),
    ]
    return "\n".join(lines)
