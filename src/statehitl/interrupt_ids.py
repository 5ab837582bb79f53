"""Interrupt ids, and the call sites they are derived from: one module, because both are persisted.

An interrupt's id is a digest of where it was raised (its *site*: which step, which node, hook or tool
call) and its name. The id is stored in a waiting thread's checkpoint and quoted by the human's answer,
and the handler that re-runs on resume must derive the same id to find that answer. So the text of
every site is part of the checkpoint format: changing one f-string would strand every thread waiting
on an interrupt raised there. Keeping all of them here, pinned by a test of their exact output, makes
such a change impossible to make by accident.

A machine running as a node of another machine (an agent in a Graph) prefixes its sites with the site
of the node it runs in, so the same interrupt name raised by two nested runs gets two ids.

Ids are also unique across threads: a ``v2:`` id digests the thread id with the site and the name, so
an application that files approvals by id, or lists what waits across threads, never sees two threads'
interrupts share one. ``v1:`` ids (no thread in the digest) were written before; a thread still
waiting on one is resumed with the same derivation, so its answer is found.
"""

from __future__ import annotations

import hashlib

DIRECT_CALL = "direct"
"""The site of ``agent.tool.<name>()``: no run can resume it, so its ids are never stored."""


def interrupt_id(site: str, name: str, thread: str | None = None) -> str:
    """A stable id for an interrupt named ``name`` raised at ``site`` (e.g. ``"node:3:review"``) in
    ``thread`` (None: the ``v1`` derivation, for threads waiting since before ids named their thread).

    Stable across processes and re-runs of the same step, distinct across threads, sites and names.
    """
    if thread is None:
        digest = hashlib.blake2b(f"{site}\x00{name}".encode(), digest_size=12).hexdigest()
        return f"v1:{digest}"
    digest = hashlib.blake2b(f"{thread}\x00{site}\x00{name}".encode(), digest_size=12).hexdigest()
    return f"v2:{digest}"


def action_key(thread: str, site: str) -> str:
    """The idempotency key of the action at ``site`` (a tool call, a node call) in ``thread``: the same in
    every process and every re-run of that step, distinct across threads, steps and calls. A tool hands
    it to the outside world (a payment API's ``Idempotency-Key``, a ledger's unique column), so an action
    re-run after an unknown outcome (``ActionOutcomeUnknownError``) is recognised there as the same one.
    """
    digest = hashlib.blake2b(f"action\x00{thread}\x00{site}".encode(), digest_size=16).hexdigest()
    return f"statehitl-{digest}"


def is_legacy(interrupt_ids: list[str]) -> bool:
    """Whether a waiting thread's interrupts were raised with the ``v1`` derivation."""
    return any(i.startswith("v1:") for i in interrupt_ids)


def node(prefix: str, step: int, node_name: str) -> str:
    """``ctx.interrupt()`` inside node ``node_name`` at ``step``."""
    return f"{prefix}node:{step}:{node_name}"


def before_node_hook(prefix: str, step: int, node_name: str) -> str:
    """A ``BeforeNodeCallEvent`` hook before ``node_name`` runs at ``step``."""
    return f"{prefix}hook:before_node:{step}:{node_name}"


def before_tools_hook(prefix: str, step: int) -> str:
    """A ``BeforeToolsEvent`` hook of the tool batch at ``step``."""
    return f"{prefix}hook:before_tools:{step}"


def before_tool_hook(prefix: str, step: int, tool_use_id: str) -> str:
    """A ``BeforeToolCallEvent`` hook of one tool call (by its tool use id) at ``step``."""
    return f"{prefix}hook:before_tool:{step}:{tool_use_id}"


def tool_call(prefix: str, step: int, tool_use_id: str) -> str:
    """``tool_context.interrupt()`` inside one tool call at ``step``."""
    return f"{prefix}tool:{step}:{tool_use_id}"


def nested(site: str) -> str:
    """The prefix of every site of a machine running inside the node call at ``site``."""
    return f"{site}/"


def nested_call(site: str, index: int) -> str:
    """The prefix of the sites of the ``index``-th graph a node at ``site`` invokes in its own code (the
    first one's is ``nested(site)``, as for a graph that is the node)."""
    return nested(site) if index == 0 else f"{site}/call{index}/"
