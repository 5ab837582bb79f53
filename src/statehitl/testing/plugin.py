"""pytest plugin (registered through the ``pytest11`` entry point): statehitl's fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from statehitl.testing.recorder import TransitionRecorder


@pytest.fixture
def transition_recorder() -> Iterator[TransitionRecorder]:
    """A recorder attached for the test's duration: ``assert transition_recorder.log == snapshot``."""
    with TransitionRecorder() as recorder:
        yield recorder
