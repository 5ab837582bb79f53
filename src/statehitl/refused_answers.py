"""An answer the handler refused when it re-ran: withdrawn, whichever door stored it, and kept as refused.

Every door checks an answer's type before it stores it: the interrupt's JSON schema always, the type
itself where the door's process knows it (``response_types.check_answer``). A door in another process
(the inbox, its page, a worker's host) knows only the schema, so an answer can pass it that the type
refuses (an ``AfterValidator``): the handler then refuses it when it re-runs (``InvalidResponseError``
with ``refused_answer``). Such an answer never bound anything, so it must not stay the interrupt's one
binding answer: a corrected answer would be refused as "already answered", and every worker that meets
the thread would resume it again and again. So the run that refused it, which stops before writing
anything, withdraws it: the answers its own call stored (a refused call binds nothing), and the refused
interrupt's stored answer whichever door stored it, with its mark in the thread's index entry (the inbox
lists the interrupt as pending again). The refusal is kept first, in the audit trail, as ``refused``
with who answered, through which door, and why the type refused it.
"""

from __future__ import annotations

from statehitl.checkpoint.answer_records import answer_key, unmark_index, withdraw_answers
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import AuditEntry
from statehitl.checkpoint.refusals import keep_refusal
from statehitl.errors import InvalidResponseError
from statehitl.position import Position


async def withdraw_refused(checkpointer: Checkpointer, at: Position, error: BaseException) -> None:
    """Withdraw what a resume from ``at`` stored or applied and ``error`` refused (see the module docstring);
    nothing when ``error`` is no refusal of an answer on re-run."""
    if not (isinstance(error, InvalidResponseError) and error.refused_answer):
        return
    keys = list(at.recorded)
    refused = _refused_entry(at, error)
    if refused is not None and at.cursor is not None and refused.checkpoint_id is not None:
        thread, seq = at.cursor.thread_id, int(refused.checkpoint_id)
        interrupt = next(i for i in at.waiting if i.id == refused.interrupt_id)
        await keep_refusal(checkpointer, thread, seq, interrupt, refused.response, responder=refused.responder,
                           comment=refused.comment, via=refused.via or "app", why=str(error))
        key = answer_key(thread, seq, refused.interrupt_id)
        if key not in keys:
            keys.append(key)
        await withdraw_answers(checkpointer, keys)
        await unmark_index(checkpointer, thread, seq, refused.interrupt_id)
        _say_withdrawn(error)
        return
    await withdraw_answers(checkpointer, keys)


def _refused_entry(at: Position, error: InvalidResponseError) -> AuditEntry | None:
    """The answer ``error`` refused, among those the resume applied (None: not one of the thread's own)."""
    if error.interrupt_id is None or not any(i.id == error.interrupt_id for i in at.waiting):
        return None
    return next((e for e in at.answered if e.interrupt_id == error.interrupt_id), None)


def _say_withdrawn(error: InvalidResponseError) -> None:
    """Tell whoever reads the error what became of the answer."""
    error.args = (f"{error}; the answer was withdrawn (kept in the audit trail as refused), and the interrupt "
                  "waits to be answered again",)
