"""Testing kit: the transition recorder (also the ``transition_recorder`` pytest fixture)."""

from __future__ import annotations

from statehitl.testing.recorder import TransitionRecorder

__all__ = ["TransitionRecorder"]
