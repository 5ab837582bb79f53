"""Checkpoint ids that say which thread they belong to, so one is never used on another thread.

A checkpoint's number (``000000000003``) is its place in its thread: every thread has a checkpoint 3.
A config taken from one thread and given another thread's id (a LangGraph program that builds
``{"configurable": {"thread_id": B, "checkpoint_id": ...}}`` from A's snapshot) would fork B from B's
own checkpoint 3 without a word. So the ids handed out in configs carry a tag of their thread,
``000000000003-1a2b3c4d`` (``tagged``; a StateGraph's derived checkpoints ``000000000003.1-1a2b3c4d``),
and an id whose tag is another thread's is refused (``untag``, ``parse``) rather than read as that
thread's. A bare id is still taken, as the CLI and older configs give it.
"""

from __future__ import annotations

import hashlib

from statehitl.errors import CheckpointNotFoundError

_SLOTS = 10**12


def _tag(thread_id: str) -> str:
    return hashlib.sha256(thread_id.encode()).hexdigest()[:8]


def tagged(thread_id: str, checkpoint_id: str) -> str:
    """The id of checkpoint ``checkpoint_id`` (its number) of ``thread_id``, as a config carries it."""
    return f"{checkpoint_id}-{_tag(thread_id)}"


def untag(thread_id: str, checkpoint_id: str) -> str:
    """``checkpoint_id`` without its thread's tag (as it is, if it has none); ``CheckpointNotFoundError`` when
    the tag is another thread's."""
    bare, dash, tag = checkpoint_id.rpartition("-")
    if not (dash and bare.replace(".", "", 1).isdigit() and len(tag) == len(_tag(thread_id))):
        return checkpoint_id
    if tag != _tag(thread_id):
        raise CheckpointNotFoundError(
            f"checkpoint id {checkpoint_id!r} is not one of thread {thread_id!r}: it names a checkpoint of "
            "another thread (a config of one thread used with another thread's id)")
    return bare


def parse(thread_id: str, checkpoint_id: str | int) -> int:
    """The number of checkpoint ``checkpoint_id`` of ``thread_id``: a bare number, or a tagged id of this
    thread. ``CheckpointNotFoundError`` for anything else, saying so when the id is another thread's."""
    number = untag(thread_id, checkpoint_id) if isinstance(checkpoint_id, str) else checkpoint_id
    try:
        seq = int(number)
    except (TypeError, ValueError):
        raise CheckpointNotFoundError(f"{checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}") from None
    if not 0 <= seq < _SLOTS:
        raise CheckpointNotFoundError(f"{checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}")
    return seq
