"""The forms a message of a state's message channel takes: as given, as held, as stored.

*Given*, a message is anything ``add_messages`` takes: a LangChain message, a role/content dict, a
``(role, content)`` pair, a text, a ``RemoveMessage``. *Held* (in the state), it is a LangChain message when
langchain-core is installed, converted as LangGraph converts it; without it, a plain dict with ``role`` (or
``type``), ``content`` and ``id``. Either way every held message has an id. *Stored* (a checkpoint is JSON),
a LangChain message is langchain-core's dict form ``{"type": ..., "data": ...}`` and a plain dict is itself:
a plain message always has ``content``, so the two never look alike, and reading a stored message builds
only LangChain's fixed set of message classes.

A thread stored with LangChain messages and read where langchain-core is missing fails with what to
install, rather than reading as dicts the code does not expect.
"""

from __future__ import annotations

import functools
import uuid
from types import ModuleType
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator

REMOVE_ALL_MESSAGES = "__remove_all__"
"""``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` clears the channel: only the messages after it are kept."""


def needs_langchain(what: str) -> str:
    """The sentence saying that ``what`` needs langchain-core, and the command that installs it here."""
    from statehitl._install import install_command

    return f"{what} needs langchain-core, the statehitl[langchain] extra: {install_command('langchain')}"


class RemoveMessage(BaseModel):
    """Remove the message with this id from a message channel (``add_messages``), for plain dict messages; with
    langchain-core installed, LangChain's own ``RemoveMessage`` works the same (and this one becomes it)."""

    model_config = ConfigDict(frozen=True)
    type: ClassVar[str] = "remove"
    id: str
    content: str = ""


@functools.cache
def langchain() -> ModuleType | None:
    """The LangChain message bridge when langchain-core is installed, else None (asked once per process)."""
    try:
        import statehitl.graph.langchain_messages as bridge
    except ImportError:
        return None
    return bridge


def _stored_langchain(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"type", "data"} and isinstance(value["data"], dict)


def _plain(given: Any) -> Any:
    """A message as held without langchain-core: a dict with role or type, content and (after ``_with_id``) id."""
    if isinstance(given, RemoveMessage):
        return given
    if _stored_langchain(given):
        if given["type"] == "remove":
            return RemoveMessage(id=given["data"]["id"])
        raise ImportError(needs_langchain(f"this state holds a LangChain message ({given['type']!r}); reading it"))
    if isinstance(given, str):
        return {"role": "user", "content": given}
    if isinstance(given, tuple | list) and len(given) == 2 and isinstance(given[0], str):
        return {"role": given[0], "content": given[1]}
    if isinstance(given, dict) and "content" in given and ("role" in given or "type" in given):
        return dict(given)
    raise ValueError(f"{given!r} is not a message: give a dict with 'role' and 'content', a (role, content) pair or a "
                     f"text ({needs_langchain('a LangChain message')})")


def _held(given: Any) -> Any:
    bridge = langchain()
    if bridge is None:
        return _plain(given)
    if isinstance(given, RemoveMessage):
        return bridge.remove(given.id)
    if _stored_langchain(given):
        return bridge.loaded(given)
    try:
        return bridge.coerce(given)
    except (NotImplementedError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{given!r} is not a message: give a LangChain message, a dict with 'role' and 'content', a "
                         f"(role, content) pair or a text ({exc})") from None


def id_of(message: Any) -> str | None:
    found = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
    return found if isinstance(found, str) else None


def _with_id(message: Any) -> Any:
    """The message with an id: a LangChain message gets one in place (as LangGraph's add_messages does, so the
    object the node returned has it too), a dict a copy with one."""
    if id_of(message) is not None:
        return message
    new = str(uuid.uuid4())
    if isinstance(message, dict):
        return {**message, "id": new}
    message.id = new
    return message


def is_remove(message: Any) -> bool:
    bridge = langchain()
    return isinstance(message, RemoveMessage) or (bridge is not None and bridge.is_remove(message))


def coerce_all(given: Any) -> list[Any]:
    """What a write to a message channel holds: a list of held messages, each with an id."""
    items = given if isinstance(given, list) else [given]
    return [_with_id(_held(item)) for item in items]


def stored_form(message: Any) -> Any:
    """A held (or given) message as JSON data."""
    if isinstance(message, RemoveMessage):
        return {"type": "remove", "data": {"type": "remove", "id": message.id, "content": ""}}
    bridge = langchain()
    if bridge is not None and bridge.is_message(message):
        return bridge.dumped(message)
    return message


def stored_write(value: Any) -> Any:
    """A write to a message channel as JSON: one message or a list of them."""
    return [stored_form(m) for m in value] if isinstance(value, list) else stored_form(value)


def load_all(value: Any) -> list[Any]:
    """A message channel's value as read (a checkpoint, an input, a reducer's result): held messages (an input
    may give one message alone)."""
    held = coerce_all(value)
    removed = [id_of(m) for m in held if is_remove(m)]
    if removed:
        raise ValueError(f"RemoveMessage(id={removed[0]!r}) removes a message the channel does not hold")
    return held


MessageList = Annotated[list[Any], PlainValidator(load_all),
                        PlainSerializer(lambda value: [stored_form(m) for m in value], when_used="json")]
"""The type of a channel whose reducer is ``add_messages``, whatever its annotation says: its messages are
held and stored in the forms above."""
