"""The record of a thread's next checkpoint, built from the state: what ``Checkpointer.commit`` writes.

Pure: a cursor (where the thread stands), the state and its codec, the checkpoint's fields and the
time give the record as validated (every write whole, what callers and the warm cache keep), the
record as stored (its writes by reference to what it holds anyway, ``step_writes``), and the link the
cursor moves to once it is stored. Append-only channels are stored as the items added since the
record's base (``chain``); everything else whole. Testable without storage.
"""

from __future__ import annotations

from typing import Any

from statehitl.checkpoint.chain import Cursor, Link, StateCodec, base_link
from statehitl.checkpoint.records import StoredCheckpoint
from statehitl.checkpoint.step_writes import reference_writes, split_value_writes

StepRecord = tuple[StoredCheckpoint, StoredCheckpoint, Link]
"""A checkpoint ready to store: as validated (every write whole), as stored, and its link on the chain.
A plain tuple: a commit unpacks it at once, and a step pays for every object it builds."""


def build_step_record(cursor: Cursor, state: Any, codec: StateCodec, fields: dict[str, Any], *, machine: str,
                      fingerprint: str, status: str, delta: bool, created_at: float, lease_until: float | None
                      ) -> StepRecord:
    """The next checkpoint of ``machine`` (``fingerprint``) after ``cursor``, holding ``state``, ``status``
    and ``fields`` (step, position...), made at ``created_at``; ``delta``: its base is its parent (the store reads
    chains in bulk), else the Fenwick base. ``lease_until``: it holds the cursor's owner's lease until then
    (a held checkpoint).

    The record is validated from plain data: pydantic's validator fills in the defaults and builds the
    pieces faster than ``model_construct``'s loop over the fields in Python, and checks the record on
    the way (a missing or unknown field, or a value it cannot hold, raises ``ValidationError``).
    """
    depth = 1 if cursor.migrated else cursor.depth + 1
    # a channel an Overwrite replaced is stored whole (from item 0) on a record built on its parent: a piece
    # that starts at 0 on a record with a base says "replaced here" to readers that cut old checkpoints
    # from the current one (graph/time_travel.py), which a base-less Fenwick record could not say
    restarted = {c for c in codec.append_channels if codec.restarted(state, c)}
    base = None if cursor.migrated else base_link(cursor.chain, depth, delta=delta or bool(restarted))
    lengths = {c: codec.length(state, c) for c in codec.append_channels}
    appends = {}
    for channel, length in lengths.items():
        start = base.lengths.get(channel, 0) if base is not None else 0
        start = start if start <= length and channel not in restarted else 0
        appends[channel] = {"start": start, "items": codec.dump_items(state, channel, start)}
    record = StoredCheckpoint.model_validate({
        **fields,
        "thread_id": cursor.thread_id,
        "seq": cursor.next_slot,
        "parent_seq": cursor.parent,
        "depth": depth,
        "base_seq": None if base is None else base.seq,
        "created_at": created_at,
        "machine": machine,
        "fingerprint": fingerprint,
        "status": status,
        "values": codec.dump_values(state),
        "appends": appends,
        "owner": cursor.owner if lease_until is not None else None,
        "lease_until": lease_until,
    })
    writes, same = split_value_writes(reference_writes(record.writes, appends), record.values)
    stored = record.model_copy(update={"writes": writes, "value_writes": same}) if writes is not record.writes \
        else record
    return record, stored, Link(depth, record.seq, lengths)
