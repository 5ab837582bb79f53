"""LangGraph's ``langgraph.managed``: state keys the run fills in, not the nodes.

``remaining_steps: RemainingSteps`` in a state schema gives every node (and every conditional edge's path)
how many steps this invocation may still take before it hits its step limit (``recursion_limit``): the
first step's nodes see ``limit - 1``, each later step one less, the last possible step 0; a path function
at START sees ``limit``. ``IsLastStep`` is LangGraph's flag beside it, true where ``RemainingSteps`` is 1.
Such a key is never stored, never in the values a run returns, and a node or the input that writes it is
refused (LangGraph ignores the write).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Annotated, Any, get_args, get_origin

from statehitl.errors import InvalidUpdateError

__all__ = ["IsLastStep", "IsLastStepManager", "ManagedValue", "RemainingSteps", "RemainingStepsManager",
           "managed_value", "refuse_writes", "values_of"]


class ManagedValue(ABC):
    """A key the run fills in: its value is computed from how many steps remain."""

    name: str = ""
    """The annotation a program writes (``RemainingSteps``), for messages."""

    @staticmethod
    @abstractmethod
    def value(remaining: int) -> Any:
        """The key's value when ``remaining`` steps remain (LangGraph's ``stop - step``)."""


class RemainingStepsManager(ManagedValue):
    name = "RemainingSteps"

    @staticmethod
    def value(remaining: int) -> int:
        return remaining


class IsLastStepManager(ManagedValue):
    name = "IsLastStep"

    @staticmethod
    def value(remaining: int) -> bool:
        return remaining == 1


RemainingSteps = Annotated[int, RemainingStepsManager]
IsLastStep = Annotated[bool, IsLastStepManager]


def values_of(managed: Mapping[str, type[ManagedValue]], remaining: int) -> dict[str, Any]:
    """The managed keys' values when ``remaining`` steps remain."""
    return {name: manager.value(remaining) for name, manager in managed.items()}


def refuse_writes(managed: Mapping[str, type[ManagedValue]], fields: Mapping[str, Any], writer: str) -> None:
    """Refuse a write to a managed key (``writer``: who wrote it, for the message): the run sets it."""
    written = [k for k in fields if k in managed]
    if written:
        raise InvalidUpdateError(f"{writer} wrote {written}, which the run fills in (statehitl.managed: "
                                 f"{', '.join(managed[k].name for k in written)}); leave it out")


def managed_value(annotation: Any) -> type[ManagedValue] | None:
    """The manager an annotation names (``RemainingSteps``...), or None for an ordinary channel."""
    if get_origin(annotation) is not Annotated:
        return None
    for extra in get_args(annotation)[1:]:
        if isinstance(extra, type) and issubclass(extra, ManagedValue):
            return extra
    return None
