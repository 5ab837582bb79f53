"""``agent.state``: the agent's own key-value store, saved with the session.

Values must be JSON because they are checkpointed with the conversation: checking at ``set`` names the
bad value where it was introduced instead of failing later inside a checkpoint write.
"""

from __future__ import annotations

import copy
from typing import Any

from statehitl._json import require_json

__all__ = ["AgentState"]


class AgentState:
    """JSON values by string key. ``get()`` with no key returns a copy of everything.

    A new one counts as changed, so an agent given one (or assigned one later) checkpoints it.
    """

    def __init__(self, initial: dict[str, Any] | None = None, *, changed: bool = True) -> None:
        values = dict(initial or {})
        if values:  # an empty one (every agent's first, every graph node's) is JSON
            require_json(values, "agent state")
        self._values = values
        self._changed = changed

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serializable) under ``key``."""
        if not isinstance(key, str) or not key:
            raise ValueError(f"agent state keys must be non-empty strings, got {key!r}")
        require_json(value, f"agent state value for {key!r}")
        self._values[key] = copy.deepcopy(value)
        self._changed = True

    def get(self, key: str | None = None) -> Any:
        """The value under ``key`` (None if absent), or a copy of the whole state when ``key`` is None."""
        if key is None:
            return copy.deepcopy(self._values)
        return copy.deepcopy(self._values.get(key))

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        if key in self._values:
            del self._values[key]
            self._changed = True

    @property
    def changed(self) -> bool:
        """Whether values changed since the last ``snapshot()``."""
        return self._changed

    def snapshot(self) -> dict[str, Any] | None:
        """The values as they must be checkpointed, or None if nothing changed since the last snapshot."""
        if not self._changed:
            return None
        self._changed = False
        return copy.deepcopy(self._values)

    def __repr__(self) -> str:
        return f"AgentState({self._values!r})"
