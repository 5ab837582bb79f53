"""The snapshot-session program the session tests run on Strands and on statehitl, on files, in memory,
on S3 and on DynamoDB (tests/session/test_snapshot_session_manager.py, tests/backends/)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import strands.session
import strands.storage
from strands.agent.conversation_manager import NullConversationManager as StrandsNull

import statehitl.session
import statehitl.storage
from statehitl.agent.conversation_manager import NullConversationManager as StatehitlNull
from strands_side import side

__all__ = ["framework", "keys", "time_travel"]


def framework(name: str) -> tuple[Any, Any, Any]:
    """Its ``session`` and ``storage`` modules, and a conversation manager that keeps every message."""
    if name == "strands":
        return strands.session, strands.storage, StrandsNull
    return statehitl.session, statehitl.storage, StatehitlNull


def keys(storage: Any) -> list[str]:
    return sorted(re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<uuid7>", key) for key in asyncio.run(storage.list("")))


def time_travel(name: str, storage: Any) -> list[Any]:
    """Snapshots on a trigger, a restore back in time, a new agent on the session, deletion (run on S3 and
    DynamoDB too, by tests/backends/test_snapshot_sessions_aws.py)."""
    on = side(name)
    sessions, _, null = framework(name)
    manager = sessions.SnapshotSessionManager(
        "s1", storage=storage, snapshot_trigger=lambda *, agent_data, **kwargs: len(agent_data.messages) in (2, 6))
    agent = on.Agent(model=on.model(["a1", "a2", "a3", "a4"]), callback_handler=None, system_prompt="sp",
                     conversation_manager=null(), session_manager=manager)
    agent("one")
    agent.state.set("k", 1)
    agent("two")
    agent("three")
    ids = asyncio.run(manager.list_snapshot_ids(agent))
    seen: list[Any] = [len(ids), keys(storage)]
    seen.append(asyncio.run(manager.restore_snapshot(agent, snapshot_id=ids[0])))
    seen.append((len(agent.messages), agent.state.get()))
    seen.append((str(agent("branch")).strip(), len(agent.messages)))
    other = on.Agent(model=on.model([]), callback_handler=None, system_prompt="other", conversation_manager=null(),
                     session_manager=sessions.SnapshotSessionManager("s1", storage=storage))
    seen.append((len(other.messages), other.system_prompt, other.state.get()))
    added = asyncio.run(manager.save_snapshot(agent, is_latest=False))
    seen.append((added is not None and added > ids[-1], asyncio.run(manager.save_snapshot(agent, is_latest=True))))
    every = asyncio.run(manager.list_snapshot_ids(agent))
    seen.append((len(every), asyncio.run(manager.list_snapshot_ids(agent, limit=1, start_after=every[0])) == every[1:2],
                 asyncio.run(manager.list_snapshot_ids(agent, limit=0))))
    seen.append(asyncio.run(manager.restore_snapshot(agent, snapshot_id="01890a5d-ac96-774b-bcce-b302099a8057")))
    asyncio.run(manager.delete_session())
    seen.append(keys(storage))
    return seen
