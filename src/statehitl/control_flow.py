"""What a node raises to hand control up rather than to report an error: an interrupt, a command for the
parent graph, a drain (LangGraph's ``GraphBubbleUp`` family), and what an error handler is told of a failure.
Kept apart from ``errors``, which re-exports them: code that catches broad exceptions in a node lets these
through (``except GraphBubbleUp: raise``), so they are not ``StatehitlError``s.
"""

from __future__ import annotations

from typing import Any


class GraphBubbleUp(Exception):  # LangGraph's name; control flow, not an error
    """What a node raises to stop and hand something up (an interrupt, a command for the parent graph, a
    drain): code that catches broad exceptions in a node lets these through with ``except GraphBubbleUp:
    raise``."""


class GraphInterrupt(GraphBubbleUp):
    """An interrupt stopping a node: what ``interrupt()`` raises until the thread is resumed with an answer.
    Code in a node that catches broad exceptions lets it through with ``except GraphInterrupt: raise``,
    as in LangGraph; the runner catches it and stores the interrupt."""


class ParentCommand(GraphBubbleUp):
    """A node returned ``Command(graph=Command.PARENT)``: inside a subgraph, the subgraph stops there and the
    node that runs it in the parent graph returns ``command`` (its update and goto); at the top, where there
    is no parent, the run fails with it. ``args[0]`` is the command, as in LangGraph."""

    def __init__(self, command: Any, node: str = "", message: str | None = None) -> None:
        super().__init__(command)
        self.command = command
        self.node = node
        self.message = message

    def __str__(self) -> str:
        return self.message or repr(self.command)


class GraphDrained(GraphBubbleUp):
    """The run stopped between two steps because ``RunControl.request_drain()`` was called (a shutdown). Its
    checkpoint is written; ``invoke(None, config)`` goes on from there. ``reason`` is what the drain gave."""

    def __init__(self, reason: str = "shutdown") -> None:
        super().__init__(f"Graph drained: {reason}")
        self.reason = reason


class NodeError:
    """What a node's error handler (``add_node(error_handler=)``) is given by a parameter annotated
    ``NodeError``: which node failed (after its retries) and with what. After a restart the error is the one
    its failed checkpoint recorded: a ``RuntimeError`` whose message names the original type and message."""

    __slots__ = ("error", "node")
    node: str
    error: BaseException

    def __init__(self, node: str, error: BaseException) -> None:
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "error", error)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"NodeError is frozen: cannot assign to {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NodeError) and (self.node, self.error) == (other.node, other.error)

    def __hash__(self) -> int:
        return hash((self.node, self.error))

    def __repr__(self) -> str:
        return f"NodeError(node={self.node!r}, error={self.error!r})"
