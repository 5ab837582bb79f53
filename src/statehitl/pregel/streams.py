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

__all__ = ["PregelStream"]

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

    def _out(self, mode: str, chunk: Any) -> Any:
        return (mode, chunk) if self.paired else chunk

    def shown(self, item: Any) -> list[Any]:
        if not (isinstance(item, tuple) and len(item) == 2):
            return [item]  # subgraphs=True: (namespace, mode, chunk), as the StateGraph streams it
        mode, chunk = item
        if mode == "updates" and isinstance(chunk, dict):
            return self._updates(chunk)
        if mode == "values" and isinstance(chunk, dict):
            return self._values(chunk)
        return [self._out(mode, chunk)] if mode in self.requested else []

    def _updates(self, chunk: dict[str, Any]) -> list[Any]:
        self.resuming = False
        shown: dict[str, Any] = {}
        for node, update in chunk.items():
            if node.startswith("__") or not isinstance(update, dict):
                shown[node] = update
                continue
            self.written.update(update)
            shown[node] = self._projected(update)
        return [self._out("updates", shown)] if "updates" in self.requested else []

    def _projected(self, update: dict[str, Any]) -> Any:
        if isinstance(self.keys, str):
            return Published.written(update.get(self.keys))
        written = {k: Published.written(v) for k, v in update.items() if k in self.watched}
        return written or None

    def _values(self, chunk: dict[str, Any]) -> list[Any]:
        if "values" not in self.requested:
            return []
        if _INTERRUPT in chunk:
            return [self._out("values", {_INTERRUPT: chunk[_INTERRUPT]})]
        touched, self.written = self.written & self.watched, set()
        if not touched and not self.resuming:
            return []
        self.resuming = False
        return [self._out("values", self.pregel.output(chunk, self.keys))]
