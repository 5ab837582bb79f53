"""OpenTelemetry spans: runs, node calls and checkpoint commits (from the runner, for every machine),
and agent invocations, cycles, model calls and tool calls (from the agent loop).

Span names and attributes follow the GenAI semantic conventions where they exist (``invoke_agent``,
``chat``, ``execute_tool``, ``gen_ai.*``); interrupts are span events. The runner's spans are made
current while they last, so whatever runs inside a node (an agent in a Graph node, its model and
tool calls, the checkpoints it writes) nests under that node's span. Tracing costs nothing unless the
application set up a tracer provider: OpenTelemetry is then already imported, so the check is a
``sys.modules`` lookup, and an application that never touched it does not pay for importing it.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from statehitl.interrupt import Interrupt
    from statehitl.models.streaming import ModelTurn
    from statehitl.types.tools import ToolUse

__all__ = ["ChildSpan", "InvocationTrace", "RunTracer", "run_tracer", "trace_invocation"]


def _tracer() -> Tracer | None:
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return None
    tracer: Tracer = provider.get_tracer("statehitl")
    return tracer


class ChildSpan:
    """A model call's or tool call's span, ended by how the call ended."""

    def __init__(self, span: Span) -> None:
        self.span = span

    def done(self, outcome: Any) -> None:
        from opentelemetry.trace import StatusCode

        if isinstance(outcome, dict):  # a tool result
            self.span.set_attribute("gen_ai.tool.status", outcome["status"])
            if outcome["status"] == "error":
                self.span.set_status(StatusCode.ERROR)
        else:  # a model turn
            turn: ModelTurn = outcome
            self.span.set_attribute("gen_ai.response.finish_reasons", [turn.stop_reason])
            self.span.set_attribute("gen_ai.usage.input_tokens", int(turn.usage.get("inputTokens", 0)))
            self.span.set_attribute("gen_ai.usage.output_tokens", int(turn.usage.get("outputTokens", 0)))
        self.span.end()

    def fail(self, exc: BaseException) -> None:
        from opentelemetry.trace import StatusCode

        self.span.record_exception(exc)
        self.span.set_status(StatusCode.ERROR, str(exc))
        self.span.end()

    def interrupted(self, interrupts: list[Interrupt]) -> None:
        _add_interrupt_events(self.span, interrupts)
        self.span.end()


def _add_interrupt_events(span: Span, interrupts: list[Interrupt]) -> None:
    for i in interrupts:
        span.add_event("interrupt", {"interrupt.id": i.id, "interrupt.name": i.name, "interrupt.source": i.source,
                                     "interrupt.reason": json.dumps(i.reason)})


class InvocationTrace:
    """The spans of one agent call: the invocation, its cycles, and their model and tool calls."""

    def __init__(self, tracer: Tracer, agent: Any, thread_id: str) -> None:
        self.tracer = tracer
        self.model_id = str(getattr(agent.model, "model_id", "") or type(agent.model).__name__)
        self.root = tracer.start_span(
            f"invoke_agent {agent.name}",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.system": "statehitl",
                "gen_ai.agent.name": agent.name,
                "gen_ai.agent.id": agent.agent_id,
                "gen_ai.conversation.id": thread_id,
                "gen_ai.request.model": self.model_id,
            },
        )
        self.cycle: Span | None = None
        self.cycles = 0

    def _child(self, name: str, parent: Span, attributes: dict[str, Any]) -> Span:
        from opentelemetry.trace import set_span_in_context

        return self.tracer.start_span(name, context=set_span_in_context(parent), attributes=attributes)

    def _new_cycle(self) -> Span:
        if self.cycle is not None:
            self.cycle.end()
        self.cycles += 1
        self.cycle = self._child("execute_event_loop_cycle", self.root, {"event_loop.cycle_id": self.cycles})
        return self.cycle

    def model_call(self) -> ChildSpan:
        cycle = self._new_cycle()
        return ChildSpan(self._child(f"chat {self.model_id}", cycle, {
            "gen_ai.operation.name": "chat", "gen_ai.system": "statehitl", "gen_ai.request.model": self.model_id,
        }))

    def tool_call(self, tool_use: ToolUse) -> ChildSpan:
        cycle = self.cycle or self._new_cycle()  # a resume starts with the tools of an earlier cycle
        return ChildSpan(self._child(f"execute_tool {tool_use['name']}", cycle, {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_use["name"],
            "gen_ai.tool.call.id": tool_use["toolUseId"],
        }))

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """Make the invocation's span the current one, so the runner's checkpoint spans nest under it."""
        from opentelemetry.trace import use_span

        with use_span(self.root, end_on_exit=False):
            yield

    def end(self, stop_reason: str, usage: dict[str, int], interrupts: list[Interrupt] | None = None,
            error: BaseException | None = None) -> None:
        from opentelemetry.trace import StatusCode

        _add_interrupt_events(self.root, interrupts or [])
        if self.cycle is not None:
            self.cycle.end()
        self.root.set_attribute("gen_ai.response.finish_reasons", [stop_reason])
        self.root.set_attribute("gen_ai.usage.input_tokens", usage.get("inputTokens", 0))
        self.root.set_attribute("gen_ai.usage.output_tokens", usage.get("outputTokens", 0))
        if error is not None:
            self.root.record_exception(error)
            self.root.set_status(StatusCode.ERROR, str(error))
        self.root.end()


def trace_invocation(agent: Any, thread_id: str) -> InvocationTrace | None:
    """The spans for one call of ``agent``, or None when no tracer provider is set up."""
    tracer = _tracer()
    return None if tracer is None else InvocationTrace(tracer, agent, thread_id)


class RunTracer:
    """The runner's spans. Each is current while it lasts, so what runs inside it nests under it."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    @contextlib.contextmanager
    def span(self, name: str, attributes: dict[str, Any]) -> Iterator[Span]:
        """A span around a block; an error leaving the block is recorded on it (an interrupt is not an
        error: the caller records it as events)."""
        from opentelemetry.trace import StatusCode

        from statehitl.interrupt import InterruptRaised

        with self.tracer.start_as_current_span(name, attributes=attributes, record_exception=False,
                                               set_status_on_exception=False) as span:
            try:
                yield span
            except InterruptRaised:
                raise
            except BaseException as exc:
                span.record_exception(exc)
                span.set_status(StatusCode.ERROR, str(exc))
                raise

    @staticmethod
    def interrupted(span: Span, interrupts: list[Interrupt]) -> None:
        """Record the interrupts a run or node stopped on, as span events."""
        _add_interrupt_events(span, interrupts)


def run_tracer() -> RunTracer | None:
    """The runner's tracer, or None when no tracer provider is set up (then tracing costs nothing)."""
    tracer = _tracer()
    return None if tracer is None else RunTracer(tracer)
