"""``statehitl.types.exceptions``: the exception names Strands users catch, as statehitl's own errors.

Each name is the statehitl error that means the same thing, not a copy, so ``except`` clauses written
for Strands catch what statehitl raises::

    ModelThrottledException         statehitl.models.errors.ModelThrottledException (a ModelError)
    ContextWindowOverflowException  statehitl.models.errors.ContextWindowOverflowException (a ModelError)
    ConcurrencyException            statehitl.errors.AgentBusyError: a second call on an agent still running one
    SessionException                statehitl.errors.CheckpointError: the session's store failed or refused
                                    (a conflict, a record it cannot read, an outage...)
    CheckpointException             statehitl.errors.AgentCheckpointError: a checkpointResume the agent cannot
                                    resume from (another schema version, another pause)
    SnapshotException               statehitl.errors.SnapshotError: a snapshot that cannot be taken or loaded
    StorageError                    statehitl.errors.StorageError: a ``statehitl.storage`` store refused a key
                                    (``StorageKeyError``) or failed

Strands' other exceptions (``MaxTokensReachedException``, ``StructuredOutputException``,
``EventLoopException``, MCP's) belong to behaviour statehitl does not have: a reply cut at
``max_tokens`` is returned with that stop reason, and errors are raised as they are, not wrapped.
"""

from __future__ import annotations

from statehitl.errors import AgentBusyError, AgentCheckpointError, CheckpointError, SnapshotError, StorageError
from statehitl.models.errors import ContextWindowOverflowException, ModelThrottledException

__all__ = [
    "CheckpointException",
    "ConcurrencyException",
    "ContextWindowOverflowException",
    "ModelThrottledException",
    "SessionException",
    "SnapshotException",
    "StorageError",
]

ConcurrencyException = AgentBusyError
SessionException = CheckpointError
CheckpointException = AgentCheckpointError
SnapshotException = SnapshotError
