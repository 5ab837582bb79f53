"""What ``Pregel.stream`` shows, made from the StateGraph's ``updates`` and ``values`` chunks.

LangGraph's low-level stream is about the stream channels (every channel unless told otherwise):
``"values"`` gives their values after each step that wrote one of them (not after the input), and
``"updates"`` gives each node's writes to them (its one channel's value, when there is one stream channel;
None for a node that wrote none of them). Every other mode is the StateGraph's, as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statehitl.channels.topic import Published
from statehitl.pregel.shape import PregelShape

_INTERRUPT = "__interrupt__"


class PregelStream:
    """One call's translation: ``modes`` is what to ask the StateGraph for, ``shown`` what each of its chunks
    becomes (none, one, or, for a chunk of several nodes, several)."""

    def __init__(self, pregel: PregelShape, mode: str | Sequence[str], keys: str | Sequence[str] | None) -> None:
        self.pregel = pregel
        self.paired = not isinstance(mode, str)
        self.requested = [mode] if isinstance(mode, str) else list(mode)
        self.modes: list[Any] = list(dict.fromkeys([*self.requested, "updates", "values"]))
        self.keys = pregel.stream_keys if keys is None else keys
        self.watched = {self.keys} if isinstance(self.keys, str) else set(self.keys)
        self.written: set[str] = set()
        self.resuming = False
        """The call goes on from a stopped run: the thread's values are shown as it starts (LangGraph's)."""

    def shown(self, item: tuple[Any, ...]) -> list[Any]:
        """What the StateGraph's ``(mode, chunk)`` (``(namespace, mode, chunk)`` with ``subgraphs=True``) becomes.
        A graph's own chunks are translated; a subgraph's (a graph run in a node's code) are its own."""
        *namespace, mode, chunk = item
        if namespace and namespace[0]:
            chunks = [chunk] if mode in self.requested else []
        elif mode == "updates" and isinstance(chunk, dict):
            chunks = self._updates(chunk)
        elif mode == "values" and isinstance(chunk, dict):
            chunks = self._values(chunk)
        else:
            chunks = [chunk] if mode in self.requested else []
        paired = [(mode, c) if self.paired else (c,) for c in chunks]
        return [(*namespace, *p) if namespace or len(p) > 1 else p[0] for p in paired]

    def _updates(self, chunk: dict[str, Any]) -> list[Any]:
        self.resuming = False
        shown: dict[str, Any] = {}
        for node, update in chunk.items():
            if node.startswith("__") or not isinstance(update, dict):
                shown[node] = update
                continue
            self.written.update(update)
            shown[node] = self._projected(update)
        return [shown] if "updates" in self.requested else []

    def _projected(self, update: dict[str, Any]) -> Any:
        if isinstance(self.keys, str):
            return Published.written(update.get(self.keys))
        written = {k: Published.written(v) for k, v in update.items() if k in self.watched}
        return written or None

    def _values(self, chunk: dict[str, Any]) -> list[Any]:
        if "values" not in self.requested:
            return []
        if _INTERRUPT in chunk:
            return [{_INTERRUPT: chunk[_INTERRUPT]}]
        touched, self.written = self.written & self.watched, set()
        if not touched and not self.resuming:
            return []
        self.resuming = False
        return [self.pregel.output(chunk, self.keys)]
