"""What both agents of bench_agent.py run: the scripted model, the tools, the approval hook, and the checks.

Both agents are driven through one interface (`kit(side)`: the framework's Agent, tool decorator,
session manager and hook event, plus a replay model for Strands, which ships none), so a
conversation or a round trip is written once and runs on either side, in a worker process
(agent_worker.py) or, for `--profile`, in this one.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.timing import Trial

VARIANTS = ("none", "file", "file-disk")
VARIANT_LABELS = {"none": "no session", "file": "file session on tmpfs (like-for-like)",
                  "file-disk": "file session on disk"}
"""`file` puts both sides' sessions on a tmpfs, where fsync is free: Strands never fsyncs, so only there do
both do the same work (issue 16). `file-disk` is each side's default on the disk of `--tmpdir`."""

LIKE_FOR_LIKE = ("none", "file")
"""The variants the ratio targets are read from."""

TURNS = 100
"""Turns of one measured conversation; its first 20 turns are the 20-turn conversation."""

WINDOWS = ((11, 20), (91, 100))
"""1-based inclusive turn ranges whose per-turn times are reported: the end of 20 turns and of 100."""

CYCLES_PER_TURN = 2
"""Model calls per turn: one that asks for the tool, one that answers."""

APP_NAME = "myapp"
RT_PATHS = ["/tmp/a.txt", "/tmp/b.txt"]
RT_PROMPT = f"paths=<{RT_PATHS}>"
RT_ANSWER = "Deleted both files."


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
        self.session_id = f"{label}-{uuid.uuid4().hex[:8]}" if variant != "none" else None
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


# --------------------------------------------------------------------------- the seed's interrupt round trip


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


# --------------------------------------------------------------------------- what statehitl writes, for the fsync floor


def statehitl_bytes_per_turn(directory: Path, turns: int) -> list[int]:
    """Bytes statehitl's file session passed to write syscalls in each turn of one conversation (untimed).

    The fsync floor of a turn is one write of that many bytes and one fdatasync (harness/fsync_floor.py).
    """
    from storage_workload import measured, probe_overhead  # it imports statehitl: not in the Strands worker

    conversation = Conversation("statehitl", "file-disk", directory, "bytes-probe", turns)
    overhead = probe_overhead()
    written = [measured(functools.partial(conversation.turn, i), overhead)[1].wchar for i in range(turns)]
    conversation.check(turns)
    return written


def statehitl_bytes_per_request(directory: Path) -> list[int]:
    """Bytes statehitl's round trip passed to write syscalls, on a new session, per forced write: the first
    request forces one (the checkpoint it returns on), the resume two (its claim, the record that the
    approved action started, forced before the action runs; then the checkpoint it returns on). The
    resume's bytes are split between its two: an fdatasync of a few hundred bytes costs the same for any
    split."""
    from storage_workload import measured, probe_overhead

    k = kit("statehitl")
    storage_dir = directory / "bytes-probe-roundtrip"

    def server(prompt: Any) -> Any:
        agent = build_agent("statehitl", k.Model(roundtrip_script(prompt)), [k.delete_files, k.inspect_files],
                            "bytes-probe", storage_dir, hooks=[ApprovalHook(APP_NAME, k.BeforeToolCallEvent)])
        return agent(prompt)

    overhead = probe_overhead()
    paused, first = measured(functools.partial(server, RT_PROMPT), overhead)
    responses = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in paused.interrupts]
    done, second = measured(functools.partial(server, responses), overhead)
    assert paused.stop_reason == "interrupt", paused.stop_reason
    assert done.stop_reason == "end_turn", done.stop_reason
    return [first.wchar, second.wchar // 2, second.wchar - second.wchar // 2]
