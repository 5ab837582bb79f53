"""Testing kit: the transition recorder (also the ``transition_recorder`` pytest fixture), a storage
wrapper that counts I/O, and the storage conformance suite (``statehitl.testing.conformance``)."""

from __future__ import annotations

from statehitl.testing.counting import CountingStorage, StorageCounts
from statehitl.testing.recorder import TransitionRecorder

__all__ = ["CountingStorage", "StorageCounts", "TransitionRecorder"]
