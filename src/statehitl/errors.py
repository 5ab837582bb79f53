"""Every error statehitl raises on purpose, so callers can catch by meaning.

The tree::

    StatehitlError
     ├── GraphValidationError (ValueError)       a machine that cannot run: bad edge, dead end, reserved name
     ├── UnknownNodeError (KeyError)             a node id that is not a node of the machine
     ├── InvalidUpdateError (ValueError)         a node (or the input) wrote what the state cannot take
     ├── StepLimitError (RuntimeError)           a run went past its step limit (a runaway loop)
     ├── NodeCancelledError (RuntimeError)       a node was cancelled: a Graph's by a hook, or one that raised
     │                                           asyncio.CancelledError itself
     ├── AgentBusyError (RuntimeError)           an agent asked to do two things at once
     ├── NotJSONError (TypeError)                a value that must be stored is not JSON (agent state...)
     │    └── ValueNotStorableError                 ... nor a standard or known type statehitl.values tags
     ├── NestingTooDeepError (ValueError)        a value nested deeper than a stored value may (nothing stored)
     ├── NodeTimeoutError                        a StateGraph node ran past its ``timeout`` (LangGraph's)
     ├── AgentCheckpointError (ValueError)       a checkpointResume the agent cannot resume from (Strands'
     │                                           CheckpointException): another schema, another pause
     ├── SnapshotError (ValueError)              a snapshot that cannot be taken or loaded (Strands'
     │                                           SnapshotException): unknown field, schema, scope
     ├── InterruptError                          misuse of interrupts
     │    ├── InterruptReasonError (NotJSONError)   an interrupt's reason is not JSON
     │    ├── InterruptResponseError (NotJSONError) an answer's response is not JSON
     │    ├── InterruptNameError (TypeError)        an interrupt name that is not a non-empty str
     │    ├── DuplicateInterruptNameError (ValueError)  one name used twice in one event, node or tool
     │    ├── InterruptOutsideRunError (RuntimeError)   interrupt() where no run can stop
     │    │    └── DirectToolCallError                  ... in a direct call, agent.tool.<name>()
     │    ├── ResumeInputError (TypeError)          input of the wrong shape for the thread's status
     │    │    ├── EmptyInputError                      ``invoke(None)`` with no stopped run to continue
     │    │    └── AmbiguousResumeError (RuntimeError)  a bare ``Command(resume=)`` while several interrupts wait
     │    ├── UnknownInterruptError (KeyError)      a response names an interrupt that is not pending
     │    ├── InvalidResponseError (ValueError)     an empty list, a block without id or response, a repeat
     │    │    ├── ResponseValidationError              a response that is not of the interrupt's response type
     │    │    └── DigestMismatchError                  an approval of another tool call than the one to run
     │    ├── NotInterruptedError (ValueError)      responses sent to a thread that is not waiting
     │    ├── InvalidExpiryError (ValueError)       expires_in/expires_at/on_expire that cannot work
     │    ├── InvalidRespondersError (ValueError)   responders= that is not a list of names or 'group:NAME'
     │    └── ResponderNotAllowedError              an answer from someone the interrupt's responders do not
     │                                              name (refused before it binds; the refusal is audited)
     ├── InboxError                              the inbox (statehitl.inbox) could not do what was asked
     │    ├── UnknownInboxItemError (KeyError)      no pending interrupt has that id
     │    ├── AlreadyAnsweredError                  someone (or a sweep) answered the interrupt first
     │    └── AppLoadError (ValueError)             --app module:build could not be loaded or built the wrong app
     ├── StoreError                              the long-term memory store (statehitl.store) could not do it
     │    ├── InvalidNamespaceError (ValueError)    a namespace label or key the store cannot take
     │    ├── InvalidIndexError (ValueError)        index= that cannot embed, or an embedding of the wrong size
     │    └── StoreCorruptError (ValueError)        a stored item that cannot be read back
     └── CheckpointError
          ├── InvalidThreadIdError (ValueError)     a thread id that could escape its store
          ├── InvalidCursorError (ValueError)       a listing's page cursor that is altered, or not this listing's
          ├── CheckpointNotFoundError (KeyError)    no such checkpoint (or no checkpoint at all) on a thread
          ├── CheckpointConflict                    another writer committed first (compare-and-set lost)
          ├── CheckpointCorruptError (ValueError)   a stored record that cannot be read back
          ├── MachineChangedError (ValueError)      resuming a thread left by a different machine
          ├── CheckpointerNotFoundError (LookupError)  a URL scheme with no installed backend
          ├── ActionOutcomeUnknownError             an approved action began, and whether it finished is unknown
          ├── ClockSkewError                        this machine's clock is too far off the store's to claim
          └── StorageError                          a backend could not do what was asked (``.transient`` says
               │                                    whether the same call may succeed later)
               ├── StorageNotFoundError (LookupError)     its bucket or table does not exist
               ├── StorageAccessError (PermissionError)   its credentials or permissions were refused
               ├── StorageThrottledError                  still throttled after every retry (transient)
               ├── StorageUnavailableError                5xx, resets, timeouts or I/O errors past every retry
               │                                          (transient)
               ├── StorageFullError                       no space left, a file-size limit, a read-only store
               ├── StorageConfigError (ValueError)        a store URL or option that names no usable store
               └── StorageKeyError (ValueError)           a ``statehitl.storage`` key that is empty, has a
                                                          backslash or a ``..`` segment

Besides the tree, LangGraph's control flow (not errors; ``GraphBubbleUp`` and its ``GraphInterrupt``,
``ParentCommand``, ``GraphDrained``) and ``NodeError``, what an error handler is given.

Each message names the thing that was wrong and, where there is one, what to do about it. The built-in
bases (ValueError, TypeError, KeyError, RuntimeError) let code written against LangGraph or Strands
keep its ``except`` clauses.
"""

from __future__ import annotations

from typing import Literal

from statehitl.control_flow import GraphBubbleUp, GraphDrained, GraphInterrupt, NodeError, ParentCommand

__all__ = [
    "ActionOutcomeUnknownError", "AgentBusyError", "AgentCheckpointError", "AlreadyAnsweredError",
    "AmbiguousResumeError", "AppLoadError", "CheckpointConflict", "CheckpointCorruptError", "CheckpointError",
    "CheckpointNotFoundError", "CheckpointerNotFoundError", "ClockSkewError", "DigestMismatchError",
    "DirectToolCallError", "DuplicateInterruptNameError", "EmptyInputError", "GraphBubbleUp", "GraphDrained",
    "GraphInterrupt", "GraphRecursionError", "GraphValidationError", "InboxError", "InterruptError",
    "InterruptNameError", "InterruptOutsideRunError", "InterruptReasonError", "InterruptResponseError",
    "InvalidCursorError", "InvalidExpiryError", "InvalidIndexError", "InvalidNamespaceError", "InvalidRespondersError",
    "InvalidResponseError", "InvalidThreadIdError", "InvalidUpdateError", "MachineChangedError",
    "NestingTooDeepError", "NodeCancelledError", "NodeError", "NodeTimeoutError", "NotInterruptedError",
    "NotJSONError", "ParentCommand", "ResponderNotAllowedError", "ResponseValidationError", "ResumeInputError",
    "SnapshotError", "StatehitlError", "StepLimitError", "StorageAccessError", "StorageConfigError", "StorageError",
    "StorageFullError", "StorageKeyError", "StorageNotFoundError", "StorageThrottledError", "StorageUnavailableError",
    "StoreCorruptError", "StoreError", "UnknownInboxItemError", "UnknownInterruptError", "UnknownNodeError",
    "ValueNotStorableError",
]


class StatehitlError(Exception):
    """Base of every error raised deliberately by statehitl."""


class _Unquoted(KeyError):
    """A ``KeyError`` whose message reads as a sentence: ``KeyError`` alone quotes its argument."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class GraphValidationError(StatehitlError, ValueError):
    """The machine's shape is wrong; raised by ``compile()``/``build()`` before anything runs."""


class UnknownNodeError(StatehitlError, _Unquoted):
    """A node id names no node of the machine (``update_state(as_node=...)``, a Graph edge)."""


class InvalidUpdateError(StatehitlError, ValueError):
    """A node's return value (or a run's input) cannot be merged into the state."""


class StepLimitError(StatehitlError, RuntimeError):
    """A run took more steps than its limit allows; usually a loop with no exit."""


class GraphRecursionError(StepLimitError, RecursionError):
    """A run took more steps than its limit (LangGraph's ``recursion_limit``); the thread is saved and
    ``invoke(None, ...)`` continues it. LangGraph's name for ``StepLimitError``, raised by every shape."""


class NodeTimeoutError(StatehitlError):
    """A StateGraph node ran past its ``timeout`` (``add_node(timeout=)``, a ``TimeoutPolicy``): its attempt was
    cancelled. Not a ``TimeoutError`` (an ``OSError``), so the default retry policy retries it; a step that
    ends with it failed, and ``invoke(None, config)`` retries it as any failed step. ``kind`` says which limit
    fired (``"run"``: the wall-clock cap; ``"idle"``: no progress for ``idle_timeout``), ``timeout`` its value,
    ``elapsed`` the seconds the attempt ran."""

    def __init__(self, node: str, elapsed: float, *, kind: Literal["idle", "run"],
                 idle_timeout: float | None = None, run_timeout: float | None = None) -> None:
        timeout = idle_timeout if kind == "idle" else run_timeout
        if kind not in ("idle", "run") or timeout is None:
            raise ValueError(f"NodeTimeoutError(kind={kind!r}) needs kind 'idle' or 'run' and that timeout")
        what = f"idle timeout of {timeout:.3f}s without making progress" if kind == "idle" \
            else f"run timeout of {timeout:.3f}s"
        super().__init__(f"Node '{node}' exceeded its {what} (elapsed: {elapsed:.3f}s).")
        self.node, self.elapsed, self.kind, self.timeout = node, elapsed, kind, timeout
        self.idle_timeout, self.run_timeout = idle_timeout, run_timeout


class NodeCancelledError(StatehitlError, RuntimeError):
    """A node was cancelled: a Graph node by a ``BeforeNodeCallEvent`` hook (Strands raises a RuntimeError
    too), or a StateGraph node that raised ``asyncio.CancelledError`` itself, which fails its run as any error
    would (LangGraph's ``NodeCancelledError``, made as ``NodeCancelledError(node)``).

    For a Graph the thread is checkpointed as failed before this is raised; ``node_id`` (also ``node``) and
    ``message`` say which node and why, and the graph takes a new task normally afterwards.
    """

    def __init__(self, node: str, message: str | None = None, *, node_id: str | None = None) -> None:
        if node_id is not None:  # statehitl's own form: NodeCancelledError(message, node_id=...)
            node, message = node_id, node
        text = message or f"Node {node!r} raised asyncio.CancelledError"
        super().__init__(text)
        self.node_id = node
        self.node = node
        self.message = text


class AgentBusyError(StatehitlError, RuntimeError):
    """An agent is running a call (or waiting on a human) and cannot take another one now."""


class NotJSONError(StatehitlError, TypeError):
    """A value that is stored in checkpoints is not JSON; the message names what was being checked."""


class NestingTooDeepError(StatehitlError, ValueError):
    """A value nests deeper than ``statehitl.json_depth.MAX_NESTING`` levels of lists and objects: stored, it could
    not be read back (the JSON reader stops near 200 levels), so it is refused where it is written, and
    nothing is stored."""


class ValueNotStorableError(NotJSONError):
    """A value written to a StateGraph's state, a ``Send`` or an answer that statehitl cannot store: not JSON,
    not one of the standard types it tags (``statehitl.values``), not a class the schema names or
    ``statehitl.values.register`` registered. Names where (node and channel, the Send, the answer) and what;
    nothing is stored."""


class AgentCheckpointError(StatehitlError, ValueError):
    """A ``{"checkpointResume": {"checkpoint": ...}}`` the agent cannot resume from: a checkpoint of another
    schema version or position than the pause its thread stopped at, or a thread that is not paused at all.
    Raised before anything is written (Strands' ``CheckpointException``)."""


class SnapshotError(StatehitlError, ValueError):
    """A snapshot that cannot be taken or loaded: an unknown field, preset, schema version or scope, data
    of the wrong type, or a checkpoint it names that the agent's thread does not hold. Raised before the
    agent changes (Strands' ``SnapshotException``)."""


class InterruptError(StatehitlError):
    """Base of interrupt misuse errors."""


class InterruptReasonError(InterruptError, NotJSONError):
    """An interrupt's reason (or a preset response given where it is asked) is not JSON-serializable."""


class InterruptResponseError(InterruptError, NotJSONError):
    """An answer's response is not JSON-serializable (it could not be stored, nor shown to anyone)."""


class InterruptNameError(InterruptError, TypeError):
    """An interrupt's name is not a non-empty string."""


class DuplicateInterruptNameError(InterruptError, ValueError):
    """One interrupt name used twice in one hook event, node call or tool call (ids derive from names)."""


class InterruptOutsideRunError(InterruptError, RuntimeError):
    """``interrupt()`` was called where no run can stop and be resumed (a hook event fired by hand)."""


class DirectToolCallError(InterruptOutsideRunError):
    """An interrupt, from the tool or its ``BeforeToolCallEvent`` hook, in a direct call with no run to stop."""


class ResumeInputError(InterruptError, TypeError):
    """The input's shape does not fit the thread: a prompt while interrupted, or a malformed list."""


class EmptyInputError(ResumeInputError):
    """``invoke(None)`` (or an empty ``Command()``) on a thread with no stopped run to continue: a new thread,
    or one that finished. LangGraph's name; a ``ResumeInputError`` too."""


class AmbiguousResumeError(ResumeInputError, RuntimeError):
    """A bare ``Command(resume=answer)`` while several interrupts wait: which one it answers is not known. Name
    each by id (``Command(resume={interrupt_id: answer, ...})``). LangGraph raises a ``RuntimeError`` here."""


class UnknownInterruptError(InterruptError, _Unquoted):
    """A response names an interrupt id that is not pending on the thread."""


class InvalidResponseError(InterruptError, ValueError):
    """The resume list is empty, or a block lacks its id or response, or answers one interrupt twice."""

    refused_answer: bool = False
    """Raised while a run applied a human's answer (its type, its tool call, its edit was refused): the
    answer was never applied, so the run writes nothing and the thread still waits on it. Any other
    ``InvalidResponseError`` a node raises fails its step like any error."""
    interrupt_id: str | None = None
    """With ``refused_answer``: the interrupt whose answer was refused. Its stored answer is withdrawn,
    whichever door stored it, and the refusal kept in the audit trail."""


class ResponseValidationError(InvalidResponseError):
    """A response does not validate against its interrupt's ``response_type`` (or an ``Edit`` against
    the tool's input schema). Raised before the answer is applied: the thread still waits on it."""


class DigestMismatchError(InvalidResponseError):
    """An answer about a tool call does not match the call that would run: the human saw (and approved)
    other arguments. Raised before the answer is applied: the thread still waits on it."""


class NotInterruptedError(InterruptError, ValueError):
    """Interrupt responses were sent to a thread that is not waiting on any interrupt."""


class InvalidExpiryError(InterruptError, ValueError):
    """``expires_in=``/``expires_at=``/``on_expire=`` given in a way that cannot work."""


class InvalidRespondersError(InterruptError, ValueError):
    """``responders=`` given in a way that cannot work: not a list, an empty list (nobody could answer), a
    name that is empty or padded with spaces, ``group:`` without a name."""


class ResponderNotAllowedError(InterruptError):
    """An answer to an interrupt that names who may answer (``responders=``), from someone it does not
    name (or from nobody named). Refused before the answer is stored, so it does not bind: the interrupt
    still waits for someone allowed. The refusal itself is kept in the thread's audit trail (outcome
    ``refused``).

    ``thread_id`` and ``interrupt_id`` say which interrupt, ``responder`` and ``groups`` who tried,
    ``responders`` who may answer.
    """

    def __init__(self, message: str, *, thread_id: str = "", interrupt_id: str = "", responder: str | None = None,
                 groups: tuple[str, ...] = (), responders: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.interrupt_id = interrupt_id
        self.responder = responder
        self.groups = groups
        self.responders = responders


class InboxError(StatehitlError):
    """The inbox could not list, answer or resume what was asked."""


class UnknownInboxItemError(InboxError, _Unquoted):
    """No pending interrupt in the store has the id given."""


class AlreadyAnsweredError(InboxError):
    """The interrupt was answered first by someone else (another reviewer, a sweep): the first answer wins."""


class AppLoadError(InboxError, ValueError):
    """``module:build`` could not be imported or called, or built something that cannot resume the thread."""


class StoreError(StatehitlError):
    """The store of long-term memory (``statehitl.store``) could not do what was asked."""


class InvalidNamespaceError(StoreError, ValueError):
    """A namespace or key the store cannot take (LangGraph's name): an empty or non-str label, one with a
    ``.``, a root label ``langgraph``, or one too long to be a storage key. Nothing was written."""


class InvalidIndexError(StoreError, ValueError):
    """A store's ``index=`` that cannot work (no ``embed``, a provider name instead of a function), or an
    embedding function that returned vectors of another size than ``dims``. Nothing was written."""


class StoreCorruptError(StoreError, ValueError):
    """A stored item that does not read back as one (edited by hand, or written under another key)."""


class CheckpointError(StatehitlError):
    """Base of checkpoint and storage errors."""


class InvalidThreadIdError(CheckpointError, ValueError):
    """A thread id contains characters that could escape the store (separators, ``..``)."""


class InvalidCursorError(CheckpointError, ValueError):
    """A page cursor (``--cursor``, ``cursor=``) that this listing of this store did not give: altered or cut
    short, from another store or listing, or from another version of statehitl."""


class CheckpointNotFoundError(CheckpointError, _Unquoted):
    """A checkpoint id the thread does not have, or a thread with no checkpoint where one is needed."""


class CheckpointConflict(CheckpointError):
    """Another writer advanced the thread first; this writer's view is stale."""


class CheckpointCorruptError(CheckpointError, ValueError):
    """A stored record is truncated, tampered with or from an unknown schema version."""


class MachineChangedError(CheckpointError, ValueError):
    """A stopped thread was written by a machine with other nodes, edges or state schema."""


class CheckpointerNotFoundError(CheckpointError, LookupError):
    """No checkpoint backend is installed for a URL scheme."""


class ActionOutcomeUnknownError(CheckpointError):
    """An answer was being acted on (its claim said "action started") and the run that acted on it never
    recorded how it ended: its process died, or the store failed past every retry. The action may have
    run. A second answer does not run it again blindly; a human checks the outside world (the
    ``idempotency_key`` the tool was given names the action there) and then retries it
    (``Checkpointer.retry_unknown``, ``statehitl threads retry``).

    ``thread_id``, ``interrupt_ids`` (the answers acted on), ``owner`` (the process that acted) and
    ``started_at`` (epoch seconds) say which action.
    """

    def __init__(self, message: str, *, thread_id: str = "", interrupt_ids: tuple[str, ...] = (),
                 owner: str = "", started_at: float = 0.0) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.interrupt_ids = interrupt_ids
        self.owner = owner
        self.started_at = started_at


class ClockSkewError(CheckpointError):
    """This machine's clock is further off the store's (the ``Date`` of its responses) than the
    checkpointer's ``max_clock_skew``: nothing is claimed. Leases are judged by the store's clock, but the
    deadlines an interrupt carries and the times answers record are this machine's; fix the clock (NTP).
    ``offset`` is the store's clock minus this machine's, in seconds."""

    def __init__(self, message: str, *, offset: float = 0.0) -> None:
        super().__init__(message)
        self.offset = offset


class StorageError(CheckpointError):
    """A storage backend could not do what the engine asked.

    ``transient`` says whether the same call may succeed later without anyone changing anything (an
    outage, throttling) or needs a fix first (a missing bucket, refused credentials, a full disk).
    ``store`` names the bucket, table or directory, ``operation`` the request that failed, ``code`` the
    service's own error code (or the ``errno`` name); the underlying exception is chained as ``__cause__``.
    Never a claim that another process got there first: that is ``CheckpointConflict``.
    """

    transient: bool = False

    def __init__(self, message: str, *, store: str = "", operation: str = "", code: str = "",
                 transient: bool | None = None) -> None:
        super().__init__(message)
        self.store = store
        self.operation = operation
        self.code = code
        if transient is not None:
            self.transient = transient


class StorageNotFoundError(StorageError, LookupError):
    """The bucket or table the store names does not exist (where these credentials can see)."""


class StorageAccessError(StorageError, PermissionError):
    """The service refused the credentials, or they lack a permission the backend needs."""


class StorageThrottledError(StorageError):
    """Requests were still throttled after every retry the client was allowed."""

    transient = True


class StorageUnavailableError(StorageError):
    """The store failed to answer, past every retry: server errors (5xx), connections reset or timed out,
    an I/O error from the disk. Nothing says the store is misconfigured; the call may succeed later."""

    transient = True


class StorageFullError(StorageError):
    """The store has no room for the write: no space left on the device, a file-size limit, a quota, a
    read-only file system. Nothing was recorded as done; the previous checkpoint stays as it was and
    resumable once there is room."""


class StorageConfigError(StorageError, ValueError):
    """A store URL or option that names no usable store (a malformed URL, an unknown option, a bad
    bucket or table name); found before any request is sent."""


class StorageKeyError(StorageError, ValueError):
    """A key (or listing prefix) given to a ``statehitl.storage`` store that is empty, holds a backslash or
    has a ``..`` segment: it could name a place outside the store. Found before any request is sent."""
