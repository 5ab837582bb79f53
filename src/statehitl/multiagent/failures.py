"""A node's exception as the orchestration's thread stores it, and back, keeping its type.

A failed node's ``NodeResult.result`` is the exception that failed it. The thread keeps it as JSON, and
a result read back in a new process (a Graph or Swarm built on a session) should still be the same
kind of error: ``isinstance(result.result, TimeoutError)`` must not turn false because the result
crossed a process. Strands reads every stored failure back as a plain ``Exception``.

Reading one back never imports a module and never runs an ``__init__``: a stored record only names
its class, and that class is used only if its module is already imported in this process (the code
that raised it, or the application that catches it, has imported it). The instance is made with
``__new__`` and given back its ``args`` and its plain attributes (``node_id`` of a
``NodeCancelledError``), so a record cannot make this process do anything but build an exception.
An error whose class is not loaded here reads back as a plain ``Exception`` with its message, as in
Strands.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def dump_exception(error: BaseException) -> dict[str, Any]:
    """``error`` as JSON: its class (module and qualified name), message, args and plain attributes."""
    cls = type(error)
    payload: dict[str, Any] = {"type": "exception", "exception": cls.__name__, "module": cls.__module__,
                               "qualname": cls.__qualname__, "message": str(error)}
    if all(isinstance(a, _SCALARS) for a in error.args):
        payload["args"] = list(error.args)
    own = getattr(error, "__dict__", {})
    attributes = {k: v for k, v in own.items() if not k.startswith("_") and isinstance(v, _SCALARS)}
    if attributes:
        payload["attributes"] = attributes
    return payload


def load_exception(payload: dict[str, Any]) -> Exception:
    """The exception ``dump_exception`` stored: of its own class when that class is loaded here."""
    message = str(payload.get("message", "node failed"))
    cls = _loaded_class(payload)
    if cls is None:
        return Exception(message)
    try:
        error = cls.__new__(cls)
        error.args = tuple(payload.get("args", [message]))
        for name, value in payload.get("attributes", {}).items():
            with contextlib.suppress(AttributeError, TypeError):
                setattr(error, name, value)
        str(error)  # a class whose __str__ needs what __init__ would have set reads back plainly
    except Exception:
        return Exception(message)
    return error


def _loaded_class(payload: dict[str, Any]) -> type[Exception] | None:
    """The stored error's class, if its module is imported in this process (records written before the
    module was stored name only the class: a built-in one is found)."""
    module = sys.modules.get(str(payload.get("module", "builtins")))
    found: Any = module
    for part in str(payload.get("qualname") or payload.get("exception", "")).split("."):
        found = getattr(found, part, None) if part and part != "<locals>" else None
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return None
