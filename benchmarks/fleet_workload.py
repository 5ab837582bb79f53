"""What bench_fleet.py's worker processes run: interrupted agent turns, and a fleet racing to answer them.

One turn, on either side: the user asks for a change; the model asks for the `apply_change` tool; an
approval gate stops the turn before the tool runs (statehitl: a `BeforeToolCallEvent` hook calling
`event.interrupt`, as in the seed; LangGraph: `interrupt()` in the node before the action); a human's
"y" lets the tool run, and the model answers. The tool appends one line to a file of its thread (opened
O_APPEND, shared by every process), so an action that ran twice shows up as two lines.

Every worker process keeps one boto3 client per backend for its whole life, as a fleet worker would, with
a `fleet_wire.WireCounter` on it; each request builds a new agent (or compiles the graph) on a new
session manager (saver) around that client, as the seed's server does. The file store is wrapped in
statehitl's `CountingStorage`, which counts the calls and bytes it hands to the files.
"""

from __future__ import annotations

import operator
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Annotated, Any, TypedDict

from fleet_wire import Wire, WireCounter
from harness.aws import REGION
from harness.graphs import langgraph_config
from harness.workers import serve

APP = "fleet"
TOOL = "apply_change"

EFFECTS_DIR: Path | None = None
"""Where the approved action leaves its lines: one file per thread, shared by every worker (set per worker)."""


def prompt_for(thread: str) -> str:
    return (f"Please apply the pending configuration change for {thread}: raise the connection pool of the "
            "billing service from 32 to 64 and restart it during the maintenance window tonight.")


def tool_input(thread: str) -> dict[str, Any]:
    return {"thread": thread, "service": "billing", "setting": "max_pool_connections", "value": 64}


def answer_for(thread: str) -> str:
    return f"Done: the billing service of {thread} now has a pool of 64 connections and was restarted."


def apply_change(thread: str, service: str, setting: str, value: int) -> str:
    """Apply a configuration change (here: append one line to the thread's side-effect file).

    Args:
        thread: the conversation the change belongs to
        service: the service to change
        setting: the setting to change
        value: its new value
    """
    assert EFFECTS_DIR is not None
    fd = os.open(EFFECTS_DIR / f"{thread}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, f"{os.getpid()} {service} {setting}={value}\n".encode())
    finally:
        os.close(fd)
    return f"{service}: {setting} set to {value}"


def executions(effects: Path, threads: list[str]) -> dict[str, int]:
    """How many times the approved action ran, per thread (lines in its side-effect file)."""
    out = {}
    for thread in threads:
        path = effects / f"{thread}.log"
        out[thread] = len(path.read_text().splitlines()) if path.exists() else 0
    return out


# --------------------------------------------------------------------------- where each backend lives


@dataclass(frozen=True)
class Stores:
    """Where the stores are: the file store's directory, the servers' endpoints, bucket and tables."""

    file_dir: str
    s3_endpoint: str
    dynamodb_endpoint: str
    bucket: str
    table: str
    langgraph_table: str
    compress: bool = True
    """statehitl's records stored compressed, its default; False: plain JSON (bench_fleet.py --no-compress)."""


@dataclass
class Attempts:
    """What one worker's pass over the threads did, and the traffic it caused."""

    outcomes: Counter[str] = field(default_factory=Counter)
    """won (answered and completed), lost (the conflict error), done (nothing left to answer when loaded);
    LangGraph: other (its resume returned something else than the finished turn)."""
    wire: Wire = field(default_factory=Wire)
    storage: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    anomalies: list[str] = field(default_factory=list)
    """LangGraph only: resumes that returned something other than the finished turn (outcome `other`)."""

    def to_json(self) -> dict[str, Any]:
        return {"outcomes": dict(self.outcomes), "wire": self.wire.to_json(), "storage": self.storage,
                "seconds": self.seconds, "anomalies": self.anomalies}


# --------------------------------------------------------------------------- statehitl


class StatehitlSide:
    """statehitl's Agent on a session of one backend, in one worker process."""

    def __init__(self, stores: Stores) -> None:
        from statehitl_checkpoint_dynamodb import DynamoDBStorage
        from statehitl_checkpoint_s3 import S3Storage

        from statehitl import Agent, tool
        from statehitl.checkpoint import Checkpointer
        from statehitl.checkpoint.file import FileStorage
        from statehitl.errors import CheckpointConflict
        from statehitl.hooks import BeforeToolCallEvent
        from statehitl.models import ScriptedModel
        from statehitl.session import DynamoDBSessionManager, S3SessionManager, SessionManager
        from statehitl.testing import CountingStorage

        self.stores = stores
        self.Agent, self.ScriptedModel, self.BeforeToolCallEvent = Agent, ScriptedModel, BeforeToolCallEvent
        self.Conflict = CheckpointConflict
        self.tool = tool(apply_change)
        self.counter = WireCounter()
        # the clients the backends build for themselves, built once per process and passed to every request's
        # session manager (their `client=` option)
        self.s3 = S3Storage(stores.bucket, "fleet", region_name=REGION, endpoint_url=stores.s3_endpoint).client
        self.dynamodb = DynamoDBStorage(stores.table, region_name=REGION,
                                        endpoint_url=stores.dynamodb_endpoint).client
        self.counter.attach(self.s3)
        self.counter.attach(self.dynamodb)
        self.counting = CountingStorage(FileStorage(stores.file_dir))
        self.Checkpointer = Checkpointer
        self._session_classes = (SessionManager, S3SessionManager, DynamoDBSessionManager)

    def session(self, backend: str, session_id: str) -> Any:
        plain, s3, dynamodb = self._session_classes
        options = {"compress": self.stores.compress}
        if backend == "file":  # new per request, like the AWS managers
            return plain(session_id, self.Checkpointer(self.counting, **options))
        if backend == "s3":
            return s3(session_id, self.stores.bucket, "fleet", client=self.s3, checkpointer_options=options)
        return dynamodb(session_id, self.stores.table, client=self.dynamodb, checkpointer_options=options)

    def agent(self, backend: str, thread: str, script: list[Any]) -> Any:
        def approve(event: Any) -> None:
            if event.tool_use["name"] != TOOL:
                return
            if event.interrupt(f"{APP}-approval", reason=event.tool_use["input"]) != "y":
                event.cancel_tool = "the change was not approved"

        agent = self.Agent(model=self.ScriptedModel(script), tools=[self.tool], callback_handler=None,
                           session_manager=self.session(backend, thread))
        agent.add_hook(self.BeforeToolCallEvent, approve)
        return agent

    def create(self, backend: str, thread: str) -> None:
        use = {"toolUse": {"toolUseId": f"tooluse_{thread}", "name": TOOL, "input": tool_input(thread)}}
        result = self.agent(backend, thread, [{"role": "assistant", "content": [use]}])(prompt_for(thread))
        assert result.stop_reason == "interrupt", (thread, result.stop_reason)
        assert [i.name for i in result.interrupts] == [f"{APP}-approval"], result.interrupts

    def answer(self, backend: str, thread: str) -> str:
        agent = self.agent(backend, thread, [answer_for(thread)])
        pending = agent.interrupts
        if not pending:  # answered already: completed, or another worker is finishing the turn right now
            return "done"
        try:
            result = agent([{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in pending])
        except self.Conflict:
            return "lost"
        assert result.stop_reason == "end_turn", (thread, result.stop_reason)
        assert str(result).strip() == answer_for(thread), str(result)
        return "won"

    def completed(self, backend: str, thread: str) -> bool:
        """The thread's conversation, as a new agent loads it: nothing pending, and the answer last."""
        agent = self.agent(backend, thread, [])
        return not agent.interrupts and agent.messages[-1]["content"][0]["text"] == answer_for(thread)

    def storage_counts(self) -> dict[str, int]:
        counts = self.counting.reset()
        return {**{f"calls.{k}": v for k, v in counts.calls.items()}, "bytes_read": counts.bytes_read,
                "bytes_written": counts.bytes_written}


# --------------------------------------------------------------------------- LangGraph with DynamoDBSaver


class LGState(TypedDict):
    """LangGraph's state: the thread's name and the conversation, appended to like the agent's messages.

    At module level: LangGraph reads the annotations with get_type_hints, which cannot see a class's
    local names.
    """

    thread: str
    messages: Annotated[list[dict[str, Any]], operator.add]



class LangGraphSide:
    """LangGraph on AWS's DynamoDBSaver (langgraph-checkpoint-aws), big payloads offloaded to the S3 server."""

    def __init__(self, stores: Stores) -> None:
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Command, interrupt
        from langgraph_checkpoint_aws import DynamoDBSaver

        def model(state: LGState) -> dict[str, Any]:
            thread = state["thread"]
            use = {"toolUse": {"toolUseId": f"tooluse_{thread}", "name": TOOL, "input": tool_input(thread)}}
            return {"messages": [{"role": "assistant", "content": [use]}]}

        def act(state: LGState) -> dict[str, Any]:
            use = state["messages"][-1]["content"][0]["toolUse"]
            if interrupt({"name": f"{APP}-approval", "reason": use["input"]}) != "y":
                text, status = "the change was not approved", "error"
            else:
                text, status = apply_change(**use["input"]), "success"
            result = {"toolResult": {"toolUseId": use["toolUseId"], "status": status, "content": [{"text": text}]}}
            return {"messages": [{"role": "user", "content": [result]}]}

        def answer(state: LGState) -> dict[str, Any]:
            return {"messages": [{"role": "assistant", "content": [{"text": answer_for(state["thread"])}]}]}

        graph = StateGraph(LGState)
        graph.add_node("model", model)
        graph.add_node("act", act)
        graph.add_node("answer", answer)
        graph.add_edge(START, "model")
        graph.add_edge("model", "act")
        graph.add_edge("act", "answer")
        graph.add_edge("answer", END)
        self.graph, self.Command = graph, Command
        self.anomalies: list[str] = []
        self.counter = WireCounter()
        # one saver per process, as LangGraph's docs build it (its clients live in it)
        self.saver = DynamoDBSaver(stores.langgraph_table, region_name=REGION, endpoint_url=stores.dynamodb_endpoint,
                                   s3_offload_config={"bucket_name": stores.bucket, "endpoint_url": stores.s3_endpoint})
        self.counter.attach(self.saver.client)
        if self.saver.storage.s3_client is not None:
            self.counter.attach(self.saver.storage.s3_client)

    def app(self) -> Any:
        return self.graph.compile(checkpointer=self.saver)

    def create(self, backend: str, thread: str) -> None:
        prompt = {"role": "user", "content": [{"text": prompt_for(thread)}]}
        out = self.app().invoke({"thread": thread, "messages": [prompt]}, langgraph_config(thread))
        assert "__interrupt__" in out, out

    def answer(self, backend: str, thread: str) -> str:
        app = self.app()
        state = app.get_state(langgraph_config(thread))
        if not state.next:
            return "done"
        out = app.invoke(self.Command(resume="y"), langgraph_config(thread))
        # LangGraph has no compare-and-set: every worker that found the interrupt resumes it and runs the action
        if out.get("messages", [{}])[-1].get("content", [{}])[0].get("text") == answer_for(thread):
            return "won"
        self.anomalies.append(f"{thread}: {out!r}"[:600])  # racing resumes interleaved: kept for the JSON
        return "other"

    def completed(self, backend: str, thread: str) -> bool:
        """As statehitl's; a state whose last message is not the answer's text counts as not completed (racing
        resumes can leave one: the DynamoDBSaver then logs "Value payload NOT FOUND" for a write another
        resume replaced, and the last message is the tool's result)."""
        state = self.app().get_state(langgraph_config(thread))
        last = state.values.get("messages", [{}])[-1].get("content", [{}])[0]
        return not state.next and last.get("text") == answer_for(thread)

    def checkpoints(self, thread: str) -> int:
        return sum(1 for _ in self.saver.list(langgraph_config(thread)))

    def storage_counts(self) -> dict[str, int]:
        return {}


# --------------------------------------------------------------------------- the worker


def worker_main(conn: Connection, side: str, stores: Stores, effects: str) -> None:
    """One fleet worker: `create` threads, `race` over all of them, `verify` them; each returns its traffic."""
    global EFFECTS_DIR
    EFFECTS_DIR = Path(effects)
    impl: StatehitlSide | LangGraphSide = StatehitlSide(stores) if side == "statehitl" else LangGraphSide(stores)

    def measured(work: Any) -> Attempts:
        impl.counter.take()
        impl.storage_counts()
        attempts = Attempts()
        t0 = time.perf_counter()
        work(attempts.outcomes)
        attempts.seconds = time.perf_counter() - t0
        attempts.wire = impl.counter.take()
        attempts.storage = impl.storage_counts()
        if isinstance(impl, LangGraphSide):
            attempts.anomalies, impl.anomalies = impl.anomalies, []
        return attempts

    def handle(command: str, *args: Any) -> Any:
        if command == "create":  # backend, threads: start each turn until it waits for approval
            backend, threads = args

            def create(outcomes: Counter[str]) -> None:
                for thread in threads:
                    impl.create(backend, thread)
                    outcomes["created"] += 1

            return measured(create).to_json()
        if command == "race":  # backend, threads, seed: answer every thread, in an order of this worker's own
            backend, threads, seed = args
            order = list(threads)
            random.Random(f"{seed}-{os.getpid()}").shuffle(order)

            def race(outcomes: Counter[str]) -> None:
                for thread in order:
                    outcomes[impl.answer(backend, thread)] += 1

            return measured(race).to_json()
        if command == "warm":  # backend, thread: one whole turn, untimed and uncounted (imports, first calls)
            backend, thread = args
            impl.create(backend, thread)
            assert impl.answer(backend, thread) == "won"
            return None
        if command == "verify":  # backend, threads: which threads a new agent / graph finds completed
            backend, threads = args
            return {thread: impl.completed(backend, thread) for thread in threads}
        if command == "seqs":  # backend, threads: the newest checkpoint's sequence number per thread
            backend, threads = args
            return sequence_numbers(impl, backend, threads)
        raise ValueError(f"unknown worker command {command!r}")

    serve(conn, handle)


def sequence_numbers(impl: StatehitlSide | LangGraphSide, backend: str, threads: list[str]) -> dict[str, int]:
    """Checkpoints per thread so far: statehitl's newest sequence number, LangGraph's listed checkpoints."""
    if isinstance(impl, LangGraphSide):
        return {thread: impl.checkpoints(thread) for thread in threads}
    import asyncio

    async def newest() -> dict[str, int]:
        out = {}
        for thread in threads:
            checkpointer = impl.session(backend, thread).checkpointer
            record = await checkpointer.latest(thread)
            out[thread] = -1 if record is None else record.seq
        return out

    return asyncio.run(newest())
