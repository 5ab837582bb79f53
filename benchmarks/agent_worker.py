"""bench_agent.py's worker processes (harness/workers.py): the commands each framework's worker takes.

The commands run what agent_workload.py defines.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from agent_workload import Conversation, long_session_trial, roundtrip_trial
from harness.timing import Trial
from harness.workers import serve


def worker_main(conn: Connection, side: str, workdir_str: str) -> None:
    """One agent framework's worker: conversations turn by turn, and round trips."""
    workdir = Path(workdir_str)
    conversation: Conversation | None = None
    roundtrip: Trial | None = None
    long_roundtrip: Callable[[], float] | None = None

    def handle(command: str, *args: Any) -> Any:
        nonlocal conversation, roundtrip, long_roundtrip
        if command == "start":  # variant, label, turns
            conversation = None
            gc.collect()
            conversation = Conversation(side, args[0], workdir, args[1], args[2])
        elif command == "turn":
            assert conversation is not None
            return conversation.turn(args[0])  # the collector runs as usual, never forced (harness.timing)
        elif command == "check":
            assert conversation is not None
            conversation.check(args[0])
        elif command == "roundtrip":
            roundtrip = roundtrip or roundtrip_trial(side, workdir)
            return roundtrip(args[0])
        elif command == "long-session":  # history: build a session that many round trips long
            long_roundtrip = long_session_trial(side, workdir, args[0])
        elif command == "long-roundtrip":
            assert long_roundtrip is not None
            return long_roundtrip()
        else:
            raise ValueError(f"unknown worker command {command!r}")
        return None

    serve(conn, handle)
