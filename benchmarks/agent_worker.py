"""bench_agent.py's worker processes (harness/workers.py): the commands each framework's worker takes.

The commands run what agent_workload.py defines.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from agent_workload import (
    Conversation,
    long_session_trial,
    roundtrip_trial,
    statehitl_bytes_per_request,
    statehitl_bytes_per_turn,
)
from harness.timing import Trial
from harness.workers import serve


def worker_main(conn: Connection, side: str, tmpfs_str: str, disk_str: str) -> None:
    """One agent framework's worker: conversations turn by turn, and round trips.

    Sessions go to `tmpfs` (the like-for-like rows: fsync is free there, and Strands never fsyncs) except
    for the `file-disk` variant and the `disk` round trip, which go to `disk` (each side's default there).
    """
    tmpfs, disk = Path(tmpfs_str), Path(disk_str)
    conversation: Conversation | None = None
    roundtrips: dict[str, Trial] = {}
    long_roundtrip: Callable[[], float] | None = None

    def handle(command: str, *args: Any) -> Any:
        nonlocal conversation, long_roundtrip
        if command == "start":  # variant, label, turns
            conversation = None
            gc.collect()
            conversation = Conversation(side, args[0], disk if args[0] == "file-disk" else tmpfs, args[1], args[2])
        elif command == "turn":
            assert conversation is not None
            return conversation.turn(args[0])  # the collector runs as usual, never forced (harness.timing)
        elif command == "check":
            assert conversation is not None
            conversation.check(args[0])
        elif command == "roundtrip":  # where ("tmpfs" or "disk"), session id
            where, session_id = args
            if where not in roundtrips:
                roundtrips[where] = roundtrip_trial(side, tmpfs if where == "tmpfs" else disk)
            return roundtrips[where](session_id)
        elif command == "long-session":  # history: build a session that many round trips long (on the tmpfs)
            long_roundtrip = long_session_trial(side, tmpfs, args[0])
        elif command == "long-roundtrip":
            assert long_roundtrip is not None
            return long_roundtrip()
        elif command == "bytes-per-turn":  # turns: what each turn of a statehitl conversation writes, on the disk
            return statehitl_bytes_per_turn(disk / "bytes-probe", args[0])
        elif command == "bytes-per-request":  # what each request of statehitl's round trip writes, on the disk
            return statehitl_bytes_per_request(disk / "bytes-probe")
        else:
            raise ValueError(f"unknown worker command {command!r}")
        return None

    serve(conn, handle)
