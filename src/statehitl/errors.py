"""Every error statehitl raises on purpose, so callers can catch by meaning.

The tree::

    StatehitlError
     ├── GraphValidationError (ValueError)     a machine that cannot run: bad edge, dead end, reserved name
     ├── InvalidUpdateError (ValueError)       a node returned something the state cannot take
     ├── StepLimitError (RuntimeError)         a run went past its step limit (a runaway loop)
     ├── InterruptError                        misuse of interrupts
     │    ├── InterruptReasonError (TypeError)    reason / response not JSON-serializable
     │    ├── ResumeInputError (TypeError)        input of the wrong shape for the thread's status
     │    ├── UnknownInterruptError (KeyError)    a response names an interrupt that is not pending
     │    ├── InvalidResponseError (ValueError)   an empty list, a block without id or response, a repeat
     │    ├── NotInterruptedError (ValueError)    responses sent to a thread that is not waiting
     │    └── DirectToolCallError (RuntimeError)  interrupt() in a direct call agent.tool.<name>()
     └── CheckpointError
          ├── InvalidThreadIdError (ValueError)   a thread id that could escape its store
          ├── CheckpointConflict                  another writer committed first (compare-and-set lost)
          ├── CheckpointCorruptError (ValueError) a stored record that cannot be read back
          ├── MachineChangedError (ValueError)    resuming a thread left by a different machine
          └── CheckpointerNotFoundError (LookupError) a URL scheme with no installed backend

Each message names the thing that was wrong and, where there is one, what to do about it. The built-in
bases (ValueError, TypeError, KeyError) let code written against LangGraph or Strands keep its
``except`` clauses.
"""

from __future__ import annotations


class StatehitlError(Exception):
    """Base of every error raised deliberately by statehitl."""


class GraphValidationError(StatehitlError, ValueError):
    """The machine's shape is wrong; raised by ``compile()`` before anything runs."""


class InvalidUpdateError(StatehitlError, ValueError):
    """A node's return value cannot be merged into the state."""


class StepLimitError(StatehitlError, RuntimeError):
    """A run took more steps than its limit allows; usually a loop with no exit."""


class InterruptError(StatehitlError):
    """Base of interrupt misuse errors."""


class InterruptReasonError(InterruptError, TypeError):
    """An interrupt reason or response is not JSON-serializable."""


class ResumeInputError(InterruptError, TypeError):
    """The input's shape does not fit the thread: a prompt while interrupted, or a malformed list."""


class UnknownInterruptError(InterruptError, KeyError):
    """A response names an interrupt id that is not pending on the thread."""

    def __str__(self) -> str:
        # KeyError quotes its argument; the message reads better unquoted.
        return str(self.args[0]) if self.args else ""


class InvalidResponseError(InterruptError, ValueError):
    """The resume list is empty, or a block lacks its id or response, or answers one interrupt twice."""


class NotInterruptedError(InterruptError, ValueError):
    """Interrupt responses were sent to a thread that is not waiting on any interrupt."""


class DirectToolCallError(InterruptError, RuntimeError):
    """An interrupt, from the tool or its ``BeforeToolCallEvent`` hook, in a direct call with no run to stop."""


class CheckpointError(StatehitlError):
    """Base of checkpoint and storage errors."""


class InvalidThreadIdError(CheckpointError, ValueError):
    """A thread id contains characters that could escape the store (separators, ``..``)."""


class CheckpointConflict(CheckpointError):
    """Another writer advanced the thread first; this writer's view is stale."""


class CheckpointCorruptError(CheckpointError, ValueError):
    """A stored record is truncated, tampered with or from an unknown schema version."""


class MachineChangedError(CheckpointError, ValueError):
    """A stopped thread was written by a machine with other nodes, edges or state schema."""


class CheckpointerNotFoundError(CheckpointError, LookupError):
    """No checkpoint backend is installed for a URL scheme."""
