"""Agent benchmark: statehitl's Agent vs Strands Agents, side by side in one run.

Run from the repository root:

    uv run --group bench python benchmarks/bench_agent.py            # full run (about 30 s)
    uv run --group bench python benchmarks/bench_agent.py --quick    # smoke run
    uv run --group bench python benchmarks/bench_agent.py --profile  # where statehitl's cycle time goes

Both agents run on a scripted model that replays the same assistant messages as the same Converse
stream events, so what is measured is each framework's own overhead: the agent loop, hooks, tool
execution, message bookkeeping and (with a session) persistence. Each framework runs in its own
worker process (so neither pays for the other's heap), driven turn by turn from this one. Two
measurements:

1. a conversation of 100 turns on one agent, each turn `agent(prompt)` = a model call that asks for
   one `add` tool call, the tool call, and a model call that answers (2 cycles, 1 tool call), with and
   without a file session; the two frameworks take turns in blocks of 10 turns (`BLOCK`);
2. the seed's server/client interrupt round trip: a BeforeToolCallEvent hook interrupts before
   `delete_files`, and every server call builds a new Agent on a file session; on a new session,
   and on one with 100 round trips behind it.

See benchmarks/README.md for what every row measures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import dataclasses
import functools
import gc
import importlib.metadata
import json
import multiprocessing
import os
import pstats
import statistics
import sys
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench_core import (
    Trial,
    base_environment,
    bench_arguments,
    cold_import_ms,
    fmt,
    median_or_none,
    report_done,
    run_interleaved,
    scratch_dir,
    settle_disk,
    statehitl_version,
    to_ms,
    write_results,
)

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "agent.json"

SIDES = ("statehitl", "strands")
VARIANTS = ("none", "file")
VARIANT_LABELS = {"none": "no session", "file": "file session"}

TURNS = 100
"""Turns of one measured conversation; its first 20 turns are the 20-turn conversation."""

WINDOWS = ((11, 20), (91, 100))
"""1-based inclusive turn ranges whose per-turn times are reported: the end of 20 turns and of 100."""

CYCLES_PER_TURN = 2
"""Model calls per turn: one that asks for the tool, one that answers."""

BLOCK = 10
"""Turns one side runs back to back before the other side's block; the windows are whole blocks.

Alternating turn by turn instead makes each side idle for exactly the other side's turn, and a cycle
after a longer idle starts with colder caches (statehitl's no-session cycle: about 150 µs after a 2 ms
idle, 210 µs after 15 ms, flat from turn 1 to 100 at either). Strands' turns grow from 4 to 30 ms over
a conversation, so statehitl's per-cycle cost appeared to grow 1.6x with history when only its idle
had grown. Each window's median is of its back-to-back turns; ``--idle`` adds a fixed pause before
every turn, to measure cycles that start cold, as after a real model call."""

TARGET_CYCLE_RATIO = 10.0
TARGET_GROWTH = 1.5
TARGET_ROUNDTRIP_RATIO = 4.0

APP_NAME = "myapp"
RT_PATHS = ["/tmp/a.txt", "/tmp/b.txt"]
RT_PROMPT = f"paths=<{RT_PATHS}>"
RT_ANSWER = "Deleted both files."


# --------------------------------------------------------------------------- config and results


@dataclass(frozen=True)
class Config:
    """Repetition counts; `--quick` shrinks them so a smoke run takes seconds."""

    conversations: int = 5  # 100-turn conversations per side and variant; each window gets 10 turns of each
    warmup_turns: int = 3
    roundtrip_warmup: int = 3
    roundtrip_reps: int = 40
    import_runs: int = 7
    idle: float = 0.0  # seconds of pause before every conversation turn (--idle)
    long_history: int = 100  # round trips a long session has behind it before its round trips are timed
    long_reps: int = 10

    @classmethod
    def quick(cls) -> Config:
        return cls(1, 2, 1, 5, 2, long_history=10, long_reps=3)


@dataclass
class Row:
    """One line of the results table."""

    name: str
    unit: str
    statehitl: float | None
    strands: float | None
    has_ratio: bool = True
    statehitl_samples: list[float] = field(default_factory=list)
    strands_samples: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """strands / statehitl: above 1 means statehitl is faster."""
        if not self.has_ratio or self.statehitl is None or self.strands is None or self.statehitl <= 0:
            return None
        return self.strands / self.statehitl


# --------------------------------------------------------------------------- the script both models replay


def prompt_for(i: int) -> str:
    return f"What is {i} + 1?"


def answer_for(i: int) -> str:
    return f"{i} + 1 = {i + 1}."


def tool_use_message(tool_use_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    use = {"toolUseId": tool_use_id, "name": name, "input": tool_input}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def conversation_script(turns: int) -> list[dict[str, Any] | str]:
    """Per turn: ask for add(i, 1), then answer; one model call each."""
    script: list[dict[str, Any] | str] = []
    for i in range(turns):
        script += [tool_use_message(f"tooluse_add_{i}", "add", {"a": i, "b": 1}), answer_for(i)]
    return script


RT_TOOL_USE = tool_use_message("tooluse_delete_0", "delete_files", {"paths": RT_PATHS})


def roundtrip_script(prompt: Any) -> list[dict[str, Any] | str]:
    """What the model says in each server call: a new prompt asks for delete_files; answers get the reply."""
    return [RT_TOOL_USE] if isinstance(prompt, str) else [RT_ANSWER]


def converse_events(response: dict[str, Any] | str) -> list[dict[str, Any]]:
    """The Converse stream events for one assistant reply, as statehitl's ScriptedModel replays them.

    `check_same_events` asserts at start-up that the two match, so both frameworks parse the same stream.
    """
    message: dict[str, Any] = (
        {"role": "assistant", "content": [{"text": response}]} if isinstance(response, str) else response
    )
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    chars = 0
    has_tool = False
    for block in message["content"]:
        if "text" in block:
            events.append({"contentBlockDelta": {"delta": {"text": block["text"]}}})
            chars += len(block["text"])
        else:
            use = block["toolUse"]
            raw = json.dumps(use["input"])
            events.append({"contentBlockStart": {"start": {"toolUse": {"toolUseId": use["toolUseId"],
                                                                          "name": use["name"]}}}})
            events.append({"contentBlockDelta": {"delta": {"toolUse": {"input": raw}}}})
            chars += len(raw)
            has_tool = True
        events.append({"contentBlockStop": {}})
    tokens = -(-chars // 4)
    events.append({"messageStop": {"stopReason": "tool_use" if has_tool else "end_turn"}})
    events.append({"metadata": {"usage": {"inputTokens": 0, "outputTokens": tokens, "totalTokens": tokens},
                                "metrics": {"latencyMs": 0}}})
    return events


def check_same_events() -> None:
    """statehitl's ScriptedModel and the Strands replay model must stream identical events."""
    from statehitl.models import ScriptedModel

    script = [*conversation_script(1), RT_TOOL_USE, RT_ANSWER]
    model = ScriptedModel(script)

    async def collect() -> list[list[dict[str, Any]]]:
        return [[event async for event in model.stream([])] for _ in script]

    replayed = asyncio.run(collect())
    expected = [converse_events(response) for response in script]
    if replayed != expected:
        raise AssertionError(
            "statehitl's ScriptedModel no longer streams the events this benchmark replays to Strands; update "
            f"converse_events() so both frameworks parse the same stream.\nScriptedModel: {replayed}\n"
            f"converse_events: {expected}"
        )


# --------------------------------------------------------------------------- tools and the approval hook


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first
        b: the second
    """
    return a + b


DELETED: list[list[str]] = []
"""What delete_files was called with, both frameworks together; the round trip checks it grew by one."""


def delete_files(paths: list[str]) -> bool:
    """Delete files (here: only record the call).

    Args:
        paths: the files to delete
    """
    DELETED.append(paths)
    return True


def inspect_files(paths: list[str]) -> dict[str, Any]:
    """Describe files.

    Args:
        paths: the files to inspect
    """
    return {"paths": paths}


class ApprovalHook:
    """The seed's hook: ask before `delete_files`; anything but "y" cancels the call.

    The same class serves both frameworks (their HookProvider protocols have the same shape); only the
    event type it subscribes to differs.
    """

    def __init__(self, app_name: str, event_type: type) -> None:
        self.app_name = app_name
        self.event_type = event_type

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(self.event_type, self.approve)

    def approve(self, event: Any) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() != "y":
            event.cancel_tool = "User denied permission to delete files"


@functools.cache
def statehitl_kit() -> SimpleNamespace:
    """statehitl's side of everything a server process defines at import time."""
    from statehitl import Agent, tool
    from statehitl.hooks import BeforeToolCallEvent
    from statehitl.models import ScriptedModel
    from statehitl.session import FileSessionManager

    return SimpleNamespace(
        Agent=Agent, Model=ScriptedModel, FileSessionManager=FileSessionManager,
        BeforeToolCallEvent=BeforeToolCallEvent,
        add=tool(add), delete_files=tool(delete_files), inspect_files=tool(inspect_files),
        agent_kwargs={},
    )


@functools.cache
def strands_kit() -> SimpleNamespace:
    """The Strands side: its Agent, tools, session manager, and a replay model (Strands ships none)."""
    from strands import Agent, tool
    from strands.agent.conversation_manager import NullConversationManager
    from strands.hooks import BeforeToolCallEvent
    from strands.models import Model
    from strands.session import FileSessionManager

    class StrandsReplayModel(Model):
        """Replays scripted replies as Converse stream events, built once like ScriptedModel's.

        It does what ScriptedModel does per call (count the call, keep a shallow copy of the request),
        so the two models cost the same.
        """

        def __init__(self, responses: list[dict[str, Any] | str]) -> None:
            self._script = [converse_events(response) for response in responses]
            self.calls = 0
            self.requests: list[dict[str, Any]] = []
            self.config: dict[str, Any] = {}

        def update_config(self, **model_config: Any) -> None:
            self.config.update(model_config)

        def get_config(self) -> dict[str, Any]:
            return self.config

        def structured_output(self, output_model: Any, prompt: Any, system_prompt: str | None = None,
                              **kwargs: Any) -> Any:
            raise NotImplementedError("the replay model has no structured output")

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                         **kwargs: Any) -> AsyncIterator[Any]:
            index = self.calls
            self.calls += 1
            self.requests.append({"messages": list(messages), "tool_specs": tool_specs, "system_prompt": system_prompt})
            if index >= len(self._script):
                raise RuntimeError(f"replay model asked for reply {index + 1} of {len(self._script)}")
            for event in self._script[index]:
                yield event

    return SimpleNamespace(
        Agent=Agent, Model=StrandsReplayModel, FileSessionManager=FileSessionManager,
        BeforeToolCallEvent=BeforeToolCallEvent,
        add=tool(add), delete_files=tool(delete_files), inspect_files=tool(inspect_files),
        # Strands' default SlidingWindowConversationManager keeps only the last 40 messages; statehitl keeps
        # the whole history, so Strands keeps it too here and both agents carry the same conversation.
        agent_kwargs={"conversation_manager_factory": NullConversationManager},
    )


def kit(side: str) -> SimpleNamespace:
    return statehitl_kit() if side == "statehitl" else strands_kit()


def build_agent(side: str, model: Any, tools: list[Any], session_id: str | None, storage_dir: Path,
                hooks: list[Any] | None = None) -> Any:
    """`Agent(model=..., tools=..., callback_handler=None[, session_manager=FileSessionManager(...)])`."""
    k = kit(side)
    kwargs: dict[str, Any] = {"model": model, "tools": tools, "callback_handler": None}
    if hooks:
        kwargs["hooks"] = hooks
    if session_id is not None:
        kwargs["session_manager"] = k.FileSessionManager(session_id=session_id, storage_dir=str(storage_dir))
    factory = k.agent_kwargs.get("conversation_manager_factory")
    if factory is not None:
        kwargs["conversation_manager"] = factory()
    return k.Agent(**kwargs)


# --------------------------------------------------------------------------- correctness checks


def result_text(result: Any) -> str:
    return str(result).strip()  # Strands ends the text of a result with a newline


def check_history(messages: list[dict[str, Any]], turns: int, who: str) -> None:
    """4 messages per turn: prompt, toolUse, toolResult with the right sum, answer."""
    assert len(messages) == 4 * turns, f"{who}: {len(messages)} messages after {turns} turns, expected {4 * turns}"
    for i in range(turns):
        prompt, use, result, answer = messages[4 * i: 4 * i + 4]
        assert prompt["role"] == "user", (who, i, prompt)
        assert prompt["content"][0]["text"] == prompt_for(i), (who, i, prompt)
        assert use["content"][0]["toolUse"]["toolUseId"] == f"tooluse_add_{i}", (who, i, use)
        tool_result = result["content"][0]["toolResult"]
        assert tool_result["status"] == "success", (who, i, result)
        assert tool_result["content"][0]["text"] == str(i + 1), (who, i, result)
        assert answer["role"] == "assistant", (who, i, answer)
        assert answer["content"][0]["text"] == answer_for(i), (who, i, answer)


class Conversation:
    """One agent (one side, one variant) taking turns; `turn` times itself and checks the answer."""

    def __init__(self, side: str, variant: str, workdir: Path, label: str, turns: int) -> None:
        self.side = side
        self.session_id = f"{label}-{uuid.uuid4().hex[:8]}" if variant == "file" else None
        self.storage_dir = workdir / f"{side}-sessions"
        self.model = kit(side).Model(conversation_script(turns))
        self.agent = build_agent(side, self.model, [kit(side).add], self.session_id, self.storage_dir)

    def turn(self, i: int) -> float:
        t0 = time.perf_counter()
        result = self.agent(prompt_for(i))
        elapsed = time.perf_counter() - t0
        assert result.stop_reason == "end_turn", (self.side, i, result.stop_reason)
        assert result_text(result) == answer_for(i), (self.side, i, str(result))
        return elapsed

    def check(self, turns: int) -> None:
        check_history(self.agent.messages, turns, self.side)
        assert self.model.calls == CYCLES_PER_TURN * turns, (self.side, self.model.calls)
        if self.session_id is not None:  # a new agent on the session sees the whole conversation
            reloaded = build_agent(self.side, kit(self.side).Model([]), [kit(self.side).add], self.session_id,
                                   self.storage_dir)
            check_history(reloaded.messages, turns, f"{self.side} (reloaded from its session)")


# --------------------------------------------------------------------------- 1. agent cycles


class WorkerError(RuntimeError):
    """A worker's command failed; the message holds the worker's traceback, verbatim."""


class Worker:
    """One framework in its own process, driven by commands over a pipe.

    Each side runs in a separate interpreter so neither pays for the other's heap: in one shared
    process statehitl's turns got slower as the Strands conversation beside them grew, which made
    statehitl's per-cycle cost look as if it grew with its own history. Times are taken inside the
    worker, around `agent(...)` only; the pipe round trip is outside the clock.
    """

    def __init__(self, side: str, workdir: Path) -> None:
        ctx = multiprocessing.get_context("spawn")  # a clean interpreter: statehitl's never imports Strands
        self.side = side
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=worker_main, args=(child, side, str(workdir)), name=f"bench-{side}",
                                   daemon=True)
        self.process.start()
        child.close()

    def call(self, command: str, *args: Any) -> Any:
        self.conn.send((command, *args))
        ok, value = self.conn.recv()
        if not ok:
            raise WorkerError(f"the {self.side} worker failed on {(command, *args)!r}:\n{value}")
        return value

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(("exit",))
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()


def worker_main(conn: Connection, side: str, workdir_str: str) -> None:
    """The worker loop: run one command at a time, answer (True, value) or (False, traceback)."""
    workdir = Path(workdir_str)
    conversation: Conversation | None = None
    roundtrip: Trial | None = None
    long_roundtrip: Callable[[], float] | None = None
    while True:
        command, *args = conn.recv()
        if command == "exit":
            return
        try:
            value: Any = None
            if command == "start":  # variant, label, turns
                conversation = None
                gc.collect()
                conversation = Conversation(side, args[0], workdir, args[1], args[2])
            elif command == "turn":
                assert conversation is not None
                value = conversation.turn(args[0])  # the collector runs as usual, never forced (bench_core)
            elif command == "check":
                assert conversation is not None
                conversation.check(args[0])
            elif command == "freeze":
                freeze_imports()
            elif command == "roundtrip":
                roundtrip = roundtrip or roundtrip_trial(side, workdir)
                value = roundtrip(args[0])
            elif command == "long-session":  # history: build a session that many round trips long
                long_roundtrip = long_session_trial(side, workdir, args[0])
            elif command == "long-roundtrip":
                assert long_roundtrip is not None
                value = long_roundtrip()
            elif command == "info":
                value = {"tracer_provider": tracer_provider(), "pid": os.getpid()}
            else:
                raise ValueError(f"unknown worker command {command!r}")
            conn.send((True, value))
        except BaseException:
            conn.send((False, traceback.format_exc()))


@contextlib.contextmanager
def workers(sides: list[str], workdir: Path) -> Iterator[dict[str, Worker]]:
    started: dict[str, Worker] = {}
    try:
        for side in sides:
            started[side] = Worker(side, workdir)
        yield started
    finally:
        for worker in started.values():
            worker.close()


def bench_conversations(cfg: Config, pool: dict[str, Worker]) -> dict[str, dict[str, list[list[float]]]]:
    """Per variant and side: one list of TURNS per-turn times (seconds) per conversation.

    The sides take turns in blocks of BLOCK turns (flipping which goes first every block), so
    background load and disk writeback hit both alike while each side's turns run back to back, as
    in a loop. The collector runs as in real use, never forced between turns.
    """
    sides = list(pool)
    for variant in VARIANTS:
        for side, worker in pool.items():  # warm-up: lazy imports, first session directory, caches
            worker.call("start", variant, f"warm-{variant}-{side}", cfg.warmup_turns)
            for i in range(cfg.warmup_turns):
                worker.call("turn", i)
            worker.call("check", cfg.warmup_turns)
    for worker in pool.values():
        worker.call("freeze")
    times: dict[str, dict[str, list[list[float]]]] = {}
    for variant in VARIANTS:
        times[variant] = {side: [] for side in sides}
        for rep in range(cfg.conversations):
            settle_disk()
            for side, worker in pool.items():
                worker.call("start", variant, f"conv-{variant}-{side}-{rep}", TURNS)
            run: dict[str, list[float]] = {side: [] for side in sides}
            for block, start in enumerate(range(0, TURNS, BLOCK)):
                for side in sides if (block + rep) % 2 == 0 else reversed(sides):
                    for i in range(start, min(start + BLOCK, TURNS)):
                        if cfg.idle:
                            time.sleep(cfg.idle)
                        run[side].append(pool[side].call("turn", i))
            for side, worker in pool.items():
                worker.call("check", TURNS)
                times[variant][side].append(run[side])
            print(f"  done: {TURNS}-turn conversation {rep + 1}/{cfg.conversations}, {VARIANT_LABELS[variant]}: "
                  + ", ".join(f"{side} {sum(run[side]):.2f} s" for side in sides), file=sys.stderr)
    return times


def freeze_imports() -> None:
    """Move everything alive now (the framework's modules, classes, tools) out of the collector's reach.

    A framework and its dependencies leave up to ~10^5 long-lived objects behind at import; without
    this every full collection walks them all (tens of ms each on these VMs). Objects made later (the
    conversations) are collected as usual, inside the timed turns too.
    """
    gc.collect()
    gc.freeze()


def window(samples: list[list[float]], lo: int, hi: int) -> list[float]:
    """Turns lo..hi (1-based, inclusive) of every conversation."""
    return [s for conversation in samples for s in conversation[lo - 1: hi]]


def conversation_rows(times: dict[str, dict[str, list[list[float]]]]) -> tuple[list[Row], list[Row]]:
    """µs/cycle rows, ms/turn rows, and the growth rows (turns 91-100 over 11-20, per cycle)."""
    cycle_rows, turn_rows, growth_rows = [], [], []
    for variant in VARIANTS:
        per_side = times[variant]
        medians: dict[tuple[str, int], float] = {}
        for lo, hi in WINDOWS:
            cycle: dict[str, list[float]] = {}
            turn: dict[str, list[float]] = {}
            for side in SIDES:
                raw = window(per_side.get(side, []), lo, hi)
                cycle[side] = [s / CYCLES_PER_TURN * 1e6 for s in raw]
                turn[side] = to_ms(raw)
                if raw:
                    medians[side, lo] = statistics.median(cycle[side])
            label = f"{VARIANT_LABELS[variant]}, turns {lo}-{hi}"
            cycle_rows.append(make_row(f"agent cycle, {label}", "µs/cycle", cycle))
            turn_rows.append(make_row(f"agent turn (2 cycles + 1 tool call), {label}", "ms/turn", turn))
        (first, _), (last, _) = WINDOWS
        growth = {side: medians[side, last] / medians[side, first] for side in SIDES if (side, first) in medians}
        growth_rows.append(Row(f"per-cycle growth, turns {WINDOWS[1][0]}-{WINDOWS[1][1]} ÷ {WINDOWS[0][0]}-"
                               f"{WINDOWS[0][1]}, {VARIANT_LABELS[variant]}", "x",
                               growth.get("statehitl"), growth.get("strands"), has_ratio=False))
    return cycle_rows + turn_rows, growth_rows


# --------------------------------------------------------------------------- 2. the seed's interrupt round trip


def roundtrip_trial(side: str, workdir: Path) -> Trial:
    """server(prompt) -> interrupt -> server(responses) -> answer; every server call builds a new Agent.

    The tools, the hook class and the model's script exist before the clock starts (a server defines
    them at import); the clock covers both server calls, each building its FileSessionManager, model and
    Agent, loading the session, running, and saving. The session id is fresh every repetition.
    """
    k = kit(side)
    storage_dir = workdir / f"{side}-roundtrip"

    def server(prompt: Any, session_id: str) -> tuple[Any, Any]:
        agent = build_agent(side, k.Model(roundtrip_script(prompt)), [k.delete_files, k.inspect_files], session_id,
                            storage_dir, hooks=[ApprovalHook(APP_NAME, k.BeforeToolCallEvent)])
        return agent(prompt), agent

    def trial(session_id: str) -> float:
        deleted = len(DELETED)
        t0 = time.perf_counter()
        paused, _ = server(RT_PROMPT, session_id)
        responses = [{"interruptResponse": {"interruptId": i.id, "response": "y"}}
                     for i in paused.interrupts if i.name == f"{APP_NAME}-approval"]
        done, agent = server(responses, session_id)
        elapsed = time.perf_counter() - t0
        assert paused.stop_reason == "interrupt", (side, paused.stop_reason)
        assert len(paused.interrupts) == 1, (side, paused.interrupts)
        assert paused.interrupts[0].reason == {"paths": RT_PATHS}, (side, paused.interrupts)
        assert done.stop_reason == "end_turn", (side, done.stop_reason)
        assert result_text(done) == RT_ANSWER, (side, str(done))
        assert DELETED[deleted:] == [RT_PATHS], (side, DELETED[deleted:])
        roles = [m["role"] for m in agent.messages]
        assert len(roles) % 4 == 0, (side, agent.messages)  # 4 per round trip, earlier ones included
        assert roles == ["user", "assistant"] * (len(roles) // 2), (side, agent.messages)
        assert agent.messages[-2]["content"][0]["toolResult"]["status"] == "success", (side, agent.messages[-2])
        return elapsed

    return trial


def long_session_trial(side: str, workdir: Path, history: int) -> Callable[[], float]:
    """The same round trip, late in one conversation: the session has `history` round trips behind it.

    A server builds a new Agent for every request, so each request loads the session as it stands;
    this shows what that costs once the conversation is long. The history is built once, untimed;
    each timed round trip then adds one more (a tenth more over a full run).
    """
    trial = roundtrip_trial(side, workdir)
    session_id = f"long-{uuid.uuid4().hex[:8]}"
    for _ in range(history):
        trial(session_id)
    return functools.partial(trial, session_id)


def bench_roundtrip(cfg: Config, pool: dict[str, Worker]) -> Row:
    trials: dict[str, Trial] = {side: functools.partial(worker.call, "roundtrip") for side, worker in pool.items()}
    raw = run_interleaved(trials, cfg.roundtrip_warmup, cfg.roundtrip_reps, "rt")
    row = make_row("interrupt round trip (new Agent per call, file session)", "ms",
                   {side: to_ms(raw.get(side, [])) for side in SIDES})
    progress(row)
    return row


def bench_long_roundtrip(cfg: Config, pool: dict[str, Worker]) -> Row:
    for worker in pool.values():  # before run_interleaved, whose settle_disk then flushes what it wrote
        worker.call("long-session", cfg.long_history)
    trials: dict[str, Trial] = {
        side: lambda _label, worker=worker: worker.call("long-roundtrip") for side, worker in pool.items()
    }
    raw = run_interleaved(trials, 1, cfg.long_reps, "long-rt")
    row = make_row(f"the same, on a session with {cfg.long_history}+ earlier round trips", "ms",
                   {side: to_ms(raw.get(side, [])) for side in SIDES})
    progress(row)
    return row


# --------------------------------------------------------------------------- profile of statehitl's cycle


def profile_statehitl(workdir: Path, top: int) -> str:
    """cProfile statehitl turns 91-100 of a 100-turn conversation, without and with a file session.

    Only those turns run under the profiler (enabled around each `agent(prompt)`), so the tables show
    where a cycle's time goes once the history is long. cProfile slows Python code down unevenly;
    read the shares, not the absolute times.
    """
    lo, hi = WINDOWS[1]
    warm = Conversation("statehitl", "file", workdir, "profile-warm", 2)
    for i in range(2):
        warm.turn(i)
    freeze_imports()
    sections = []
    for variant in VARIANTS:
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
    for i in range(3):
        trial(f"profile-rt-warm-{i}-{uuid.uuid4().hex[:8]}")
    profiler = cProfile.Profile()
    wall = 0.0
    for i in range(reps):
        t0 = time.perf_counter()
        profiler.enable()
        trial(f"profile-rt-{i}-{uuid.uuid4().hex[:8]}")
        profiler.disable()
        wall += time.perf_counter() - t0
    return profile_tables(pstats.Stats(profiler), reps, wall, top,
                          f"statehitl, interrupt round trip (file session), {reps} round trips", per="round trip")


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


AGENT_IMPORTS = {
    "baseline": "pass",
    "statehitl": "from statehitl import Agent, tool",
    "strands": "from strands import Agent, tool",
}


def bench_cold_import(cfg: Config, workdir: Path, sides: list[str]) -> Row:
    """What a serverless instance pays before its first agent call: importing the agent (with .pyc files)."""
    ms, _ = cold_import_ms(cfg.import_runs, sides, workdir, AGENT_IMPORTS)
    row = make_row("cold import of the Agent (fresh interpreter, minus `python -c pass`)", "ms",
                   {side: ms.get(side, []) for side in SIDES})
    progress(row)
    return row


# --------------------------------------------------------------------------- output


def make_row(name: str, unit: str, samples: dict[str, list[float]]) -> Row:
    sh, st = samples.get("statehitl", []), samples.get("strands", [])
    return Row(name, unit, median_or_none(sh), median_or_none(st), statehitl_samples=sh, strands_samples=st)


def progress(row: Row) -> None:
    report_done(row.name, statehitl=row.statehitl, strands=row.strands)


def markdown_table(rows: list[Row]) -> str:
    lines = [
        "| benchmark | unit | statehitl | strands | ratio (strands / statehitl) |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        ratio = "—" if not row.has_ratio else "n/a" if row.ratio is None else f"{row.ratio:.2f}x"
        lines.append(f"| {row.name} | {row.unit} | {fmt(row.statehitl)} | {fmt(row.strands)} | {ratio} |")
    return "\n".join(lines)


def targets_table(cycle_rows: list[Row], growth_rows: list[Row], roundtrip: Row) -> tuple[str, list[dict[str, Any]]]:
    """The issue's targets next to what this run measured."""
    checks: list[tuple[str, float | None, bool | None]] = []
    for row in cycle_rows:
        if row.unit == "µs/cycle":
            r = row.ratio
            checks.append((f"≥{TARGET_CYCLE_RATIO:g}x less overhead per cycle than Strands: {row.name}", r,
                           None if r is None else r >= TARGET_CYCLE_RATIO))
    for row in growth_rows:
        g = row.statehitl
        checks.append((f"statehitl per cycle flat (≤{TARGET_GROWTH:g}x): {row.name}", g,
                       None if g is None else g <= TARGET_GROWTH))
    r = roundtrip.ratio
    checks.append((f"round trip ≥{TARGET_ROUNDTRIP_RATIO:g}x faster than Strands", r,
                   None if r is None else r >= TARGET_ROUNDTRIP_RATIO))
    lines = ["| target | measured | met |", "| --- | ---: | --- |"]
    for text, value, met in checks:
        shown = "n/a" if value is None else f"{value:.2f}x"
        lines.append(f"| {text} | {shown} | {'n/a' if met is None else 'yes' if met else '**no**'} |")
    return "\n".join(lines), [{"target": t, "measured": v, "met": m} for t, v, m in checks]


def versions(sides: list[str]) -> dict[str, str]:
    out = {"statehitl": statehitl_version()} if "statehitl" in sides else {}
    if "strands" in sides:
        out["strands-agents"] = importlib.metadata.version("strands-agents")
    return out


def tracer_provider() -> str:
    """Whether OpenTelemetry tracing is live (Strands imports it; statehitl traces only with a real provider)."""
    trace = sys.modules.get("opentelemetry.trace")
    return "opentelemetry not imported" if trace is None else type(trace.get_tracer_provider()).__name__


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # `--only langgraph` parses as "strands" (the peer here); --lg-durability is accepted and ignored
    p = bench_arguments(__doc__, RESULTS_PATH, "few repetitions: a smoke run, not numbers to quote", peer="strands")
    p.add_argument("--profile", action="store_true",
                   help="instead of timing, cProfile statehitl's turns 91-100 (no session, file session) and its "
                        "interrupt round trip, and print the top functions")
    p.add_argument("--profile-top", type=int, default=25, help="rows per profile table (default 25)")
    p.add_argument("--idle", type=float, default=0.0, metavar="MS",
                   help="pause this many ms before every conversation turn, so each cycle starts cold, as after "
                        "a real model call (default 0: a side's turns run back to back)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = dataclasses.replace(Config.quick() if args.quick else Config(), idle=args.idle / 1000)
    sides = [args.only] if args.only else list(SIDES)

    with scratch_dir(args.tmpdir) as workdir:
        if args.profile:
            print(profile_statehitl(workdir, args.profile_top))
            print()
            print(profile_roundtrip(workdir, args.profile_top))
            return 0
        if "statehitl" in sides and "strands" in sides:
            check_same_events()
        env: dict[str, Any] = {
            **base_environment(),
            "workdir": str(workdir),
            "versions": versions(sides),
            "turns": TURNS,
            "windows": WINDOWS,
            "config": asdict(cfg),
        }
        with workers(sides, workdir) as pool:
            env["workers"] = {side: worker.call("info") for side, worker in pool.items()}
            times = bench_conversations(cfg, pool)
            roundtrip = bench_roundtrip(cfg, pool)
            long_roundtrip = bench_long_roundtrip(cfg, pool)
        cold = bench_cold_import(cfg, workdir, sides)
        cycle_rows, growth_rows = conversation_rows(times)

    rows = [*cycle_rows, *growth_rows, roundtrip, long_roundtrip, cold]
    table = markdown_table(rows)
    targets, target_results = targets_table(cycle_rows, growth_rows, roundtrip)
    print(table)
    print()
    print(targets)
    env["loadavg_at_end"] = os.getloadavg()
    payload = {
        "environment": env,
        "rows": [{**asdict(r), "ratio": r.ratio} for r in rows],
        "targets": target_results,
        "turn_seconds": times,
        "table_markdown": table,
        "targets_markdown": targets,
    }
    write_results(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
