"""Who may answer an interrupt: ``interrupt(..., responders=[...])``, checked where every answer is written.

A responder list names people (``"ann"``) and groups (``"group:finance"``): an answer is allowed when
its responder is one of the names, or one of the responder's groups is one of the groups. Names and
groups are compared exactly (case and all): they are whatever the door that authenticated the person
calls them (a token's name in the inbox's tokens file, a reverse proxy's user header, the name the
application's own call puts in ``"responder"``).

The list is checked where ``interrupt()`` is called, so a mistake (a bare string, an empty name, an
empty list that nobody could ever satisfy) fails in the handler that made it, not when the first
human tries to answer. The check of an answer (``may_answer``) runs inside the create-once write of
the answer (``checkpoint/answer_records.py``), whichever door it came through. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from statehitl.errors import InvalidRespondersError

GROUP = "group:"
"""How a responder list names a group rather than a person: ``"group:finance"``."""


def responders_of(name: str, responders: object) -> list[str] | None:
    """``responders=`` as the interrupt stores it (None: anyone may answer), or ``InvalidRespondersError``.

    A list (or tuple) of non-empty strings without surrounding whitespace; ``group:NAME`` names a group.
    Repeats are dropped, the order kept (it is the order the inbox shows them in).
    """
    if responders is None:
        return None
    where = f"interrupt {name!r}: responders="
    if isinstance(responders, str):
        raise InvalidRespondersError(f"{where} must be a list of names or 'group:NAME' strings, got the string "
                                     f"{responders!r}; for one responder write responders=[{responders!r}]")
    if not isinstance(responders, list | tuple):
        raise InvalidRespondersError(f"{where} must be a list of names or 'group:NAME' strings, got "
                                     f"{type(responders).__name__} {responders!r}")
    if not responders:
        raise InvalidRespondersError(f"{where}[] would let nobody answer; leave responders= out to let anyone "
                                     "answer, or name who may")
    kept: list[str] = []
    for item in responders:
        if not isinstance(item, str) or not item or item != item.strip():
            raise InvalidRespondersError(f"{where} holds {item!r}: each responder must be a non-empty name "
                                         "without surrounding spaces (or 'group:NAME' for a group)")
        if item.startswith(GROUP) and (not item[len(GROUP):] or item[len(GROUP):] != item[len(GROUP):].strip()):
            raise InvalidRespondersError(f"{where} holds {item!r}: a group is written 'group:NAME', with a name")
        if item not in kept:
            kept.append(item)
    return kept


def bare_groups(groups: Iterable[str]) -> tuple[str, ...]:
    """A responder's groups as names (``finance``); one given as ``group:finance`` is taken as ``finance``."""
    return tuple(g[len(GROUP):] if g.startswith(GROUP) else g for g in groups if g)


def may_answer(responders: Sequence[str] | None, responder: str | None, groups: Iterable[str] = ()) -> bool:
    """Whether ``responder`` (a member of ``groups``) may answer an interrupt that names ``responders``.

    None or no responders: anyone may, named or not. Otherwise an answer that names nobody may not: an
    unnamed responder is not one of the names, and belongs to no group anyone vouched for.
    """
    if not responders:
        return True
    if responder is None:
        return False
    member = {f"{GROUP}{g}" for g in bare_groups(groups)}
    return any(r == responder if not r.startswith(GROUP) else r in member for r in responders)


def describe(responders: Sequence[str]) -> str:
    """Who may answer, as a message says it: ``ann, bob or a member of group finance``."""
    people = [r for r in responders if not r.startswith(GROUP)]
    groups = [r[len(GROUP):] for r in responders if r.startswith(GROUP)]
    parts = list(people)
    if groups:
        parts.append(f"a member of group{'s' if len(groups) > 1 else ''} {_joined(groups, 'or')}")
    return _joined(parts, "or")


def _joined(parts: Sequence[str], word: str) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} {word} {parts[-1]}"
