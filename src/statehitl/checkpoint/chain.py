"""Where each checkpoint's append-only items live: each record holds the items added since its *base*.

Two ways to choose the base, by what the storage can do:

- **Deltas** (a storage with a bulk read, ``SupportsReadAll``: memory, file, DynamoDB): the base is
  the parent, so a step writes exactly what it added, whatever the thread's length, and loading a
  thread reads all of its records in the one bulk read.
- **A Fenwick chain** (any other storage, such as S3, where each record is a request): the base of
  the checkpoint at depth ``d`` is the ancestor at depth ``d & (d - 1)`` (``d`` with its lowest set
  bit cleared). Loading walks base to base: at most popcount(d) records, so never more than
  log2(d) + 1 reads (11 for a thousand steps). Each item is rewritten once per level it climbs, so a
  thread of T steps writes O(T log T) item-bytes in all instead of the O(T^2) of whole snapshots.

A reader needs neither rule: it follows ``base_seq`` and joins the pieces, so a thread written one
way goes on the other way (a store wrapped differently) and old threads stay readable.

Pure functions and plain data, testable without storage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from statehitl.checkpoint.records import CheckpointRecord, StoredCheckpoint
from statehitl.checkpoint.step_writes import resolve_writes
from statehitl.errors import CheckpointCorruptError


class StateCodec(Protocol):
    """How the engine reads a state it stores: which channels are append-only, and their JSON."""

    append_channels: frozenset[str]

    def dump_values(self, state: Any) -> dict[str, Any]:
        """The state's ordinary (not append-only) channels as JSON."""
        ...

    def dump_items(self, state: Any, channel: str, start: int) -> list[Any]:
        """Items ``start:`` of an append-only channel as JSON."""
        ...

    def length(self, state: Any, channel: str) -> int:
        """How many items an append-only channel holds."""
        ...

    def restarted(self, state: Any, channel: str) -> bool:
        """Whether the channel's items were replaced in this state's step (they no longer extend the
        parent's), so the record must hold it whole."""
        ...


@dataclass(frozen=True, slots=True)
class Link:
    """A checkpoint on the chain: its depth, its sequence number, its append-channel lengths."""

    depth: int
    seq: int
    lengths: dict[str, int]


@dataclass(slots=True)
class Cursor:
    """A writer's position on a thread: the next record goes to slot ``slot + 1`` and follows ``parent``.

    ``chain`` is the parent's Fenwick chain (the parent first, then its bases), which is all a writer
    needs to compute the next record's base. Each field has one owner, and changes only through the
    method named beside it, so what moves a cursor can be found by name:

    - ``slot``, ``parent``, ``chain``: the records the thread holds. A commit moves them past the record
      it stored (``advance``, the engine's); a claim takes the next slot (``claim``) and a release the one
      after (``release``), both ``ThreadClaims``'.
    - ``owner``: the run that holds the thread: a new run's (``take``, ``run_start.start_position``) or a
      claim's (``claim``).
    - ``claimed``, ``acting``: whether this run holds a claim, and its slot when the claim records answers
      being acted on ("action started"): ``claim``.
    - ``settled``: whether the last record this run stored holds no lease and acts on no answers (the run
      stopped and said how, or released its claim): ``advance``, ``claim``, ``release``.
    - ``migrated``: the next checkpoint stores the state whole, asked by whoever rewrote the state (a
      migration, a trimmed conversation: ``store_whole``) and done by the commit that stores it (``advance``).
    - ``indexed``: what the thread's index entry says, as the reader or the last commit learned it
      (``index_known``), so a commit can skip rewriting an entry that would say the same thing.
    """

    thread_id: str
    slot: int | None = None
    parent: int | None = None
    chain: tuple[Link, ...] = ()
    owner: str | None = None
    claimed: bool = False
    migrated: bool = field(default=False)
    indexed: tuple[Any, ...] | None = None
    acting: int | None = None
    settled: bool = False

    @property
    def depth(self) -> int:
        return self.chain[0].depth if self.chain else 0

    @property
    def next_slot(self) -> int:
        return 0 if self.slot is None else self.slot + 1

    def take(self, owner: str) -> None:
        """A new run, ``owner``, holds the thread: its held checkpoints carry a lease against takeovers."""
        self.owner = owner

    def store_whole(self, rewritten: bool = True) -> None:
        """The state's history was rewritten, not appended to (when ``rewritten``): the next checkpoint
        stores it whole, on a chain of its own."""
        self.migrated = self.migrated or rewritten

    def advance(self, link: Link, *, settled: bool) -> None:
        """A commit stored checkpoint ``link`` after this cursor: the next record follows it. ``settled``:
        it holds no lease and acts on no answers."""
        self.slot = self.parent = link.seq
        self.settled = settled
        self.chain = extend_chain(() if self.migrated else self.chain, link)
        self.migrated = False

    def claim(self, slot: int, owner: str, *, acting: bool) -> None:
        """Claim record ``slot`` of ``owner`` is stored (``acting``: it records answers the run acts on)."""
        self.slot = slot
        self.owner = owner
        self.claimed = True
        self.acting = slot if acting else None
        self.settled = False

    def release(self) -> None:
        """A record releasing this cursor's claim took the next slot: the run stopped, and said so."""
        self.slot = self.next_slot
        self.settled = True

    def index_known(self, material: tuple[Any, ...]) -> None:
        """The thread's index entry says ``material`` (``index.index_material``)."""
        self.indexed = material


def base_depth(depth: int) -> int:
    """The depth of the base of a checkpoint at ``depth`` (0: no base, its pieces start at 0)."""
    return depth & (depth - 1)


def base_link(chain: tuple[Link, ...], depth: int, *, delta: bool = False) -> Link | None:
    """The base of a new checkpoint at ``depth`` whose parent's chain is ``chain`` (parent first).

    ``delta``: the parent. Otherwise the Fenwick base, or the parent when the chain does not hold it
    (a thread written as deltas, going on as a Fenwick chain).
    """
    if not chain:
        return None
    if delta:
        return chain[0]
    wanted = base_depth(depth)
    if wanted == 0:
        return None
    for link in chain:
        if link.depth == wanted:
            return link
    return chain[0]


def extend_chain(chain: tuple[Link, ...], link: Link) -> tuple[Link, ...]:
    """The chain of a new checkpoint ``link`` whose parent's chain is ``chain``."""
    keep = base_depth(link.depth)
    return (link, *(c for c in chain if c.depth <= keep))


def assemble(records: Iterable[StoredCheckpoint]) -> dict[str, list[Any]]:
    """Join the pieces of a chain (newest record first) into whole append-only channels."""
    pieces: dict[str, list[tuple[int, list[Any]]]] = {}
    closed: set[str] = set()
    for record in records:
        for channel, piece in record.appends.items():
            if channel in closed:
                continue
            pieces.setdefault(channel, []).append((piece.start, piece.items))
            if piece.start == 0:
                closed.add(channel)
    whole: dict[str, list[Any]] = {}
    for channel, parts in pieces.items():
        items: list[Any] = []
        for start, chunk in reversed(parts):
            if start != len(items):
                raise CheckpointCorruptError(
                    f"channel {channel!r}: a piece starts at item {start} but the chain holds {len(items)}"
                )
            items.extend(chunk)
        whole[channel] = items
    return whole


def whole_record(record: StoredCheckpoint, chain: list[StoredCheckpoint]) -> CheckpointRecord:
    """The caller's view of ``record``: every channel whole (``chain`` is it and its bases)."""
    fields = {name: getattr(record, name) for name in CheckpointRecord.model_fields}
    whole = assemble(chain)
    fields["values"] = values = {**record.values, **whole}
    fields["writes"] = resolve_writes(record.writes, values, record.value_writes)
    return CheckpointRecord.model_construct(**fields)


class ChannelBuilder:
    """The append-only channels of many checkpoints of one thread, assembled in one pass.

    Each record's piece continues its base's channel (or restarts it at item 0), so a channel is one list
    shared along a branch: a record keeps the list and its length, extending the list in place when it is
    the base's latest extension, and copying it only where branches part. Assembling a whole history is
    then linear in its records and items, where assembling each record from its chain would be quadratic
    (record k of a chain of deltas has k bases). ``records`` must come oldest first (a base before what is
    built on it); ``whole(record)`` gives a record's channels as lists of their own.
    """

    def __init__(self) -> None:
        self._channels: dict[int, dict[str, tuple[list[Any], int]]] = {}

    def add(self, record: StoredCheckpoint) -> None:
        base = self._channels.get(record.base_seq) if record.base_seq is not None else {}
        if base is None:
            raise CheckpointCorruptError(f"thread {record.thread_id!r}: checkpoint {record.checkpoint_id} is built "
                                         f"on checkpoint {record.base_seq:012d}, which is missing")
        channels = dict(base)
        for name, piece in record.appends.items():
            shared, length = base.get(name, (None, 0))
            if piece.start == 0:
                items = list(piece.items)
            elif shared is None or piece.start != length:
                raise CheckpointCorruptError(f"channel {name!r}: a piece of checkpoint {record.checkpoint_id} starts "
                                             f"at item {piece.start} but its base holds {length}")
            elif len(shared) == length:  # the base's latest extension: this record goes on in place
                shared.extend(piece.items)
                items = shared
            else:
                items = [*shared[:length], *piece.items]
            channels[name] = (items, len(items))
        self._channels[record.seq] = channels

    def whole(self, record: StoredCheckpoint) -> CheckpointRecord:
        """``record`` with every channel whole (it and its bases must have been added)."""
        fields = {name: getattr(record, name) for name in CheckpointRecord.model_fields}
        whole = {name: items[:length] for name, (items, length) in self._channels[record.seq].items()}
        fields["values"] = values = {**record.values, **whole}
        fields["writes"] = resolve_writes(record.writes, values, record.value_writes)
        return CheckpointRecord.model_construct(**fields)
