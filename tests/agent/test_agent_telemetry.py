"""OpenTelemetry spans of an agent call, read back from the SDK's in-memory exporter."""

from __future__ import annotations

from agent_helpers import answer, uses
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from statehitl import Agent, tool
from statehitl.hooks import BeforeToolCallEvent
from statehitl.models import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    return a + b


def test_invocation_cycle_model_and_tool_spans(spans: InMemorySpanExporter) -> None:
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "3"]), tools=[add], name="calc",
                  callback_handler=None)
    agent("1+2")
    finished = {s.name: s for s in spans.get_finished_spans()}
    root = finished["invoke_agent calc"]
    assert root.attributes is not None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "calc"
    assert root.attributes["gen_ai.usage.output_tokens"] > 0
    cycles = [s for s in spans.get_finished_spans() if s.name == "execute_event_loop_cycle"]
    assert len(cycles) == 2
    assert all(c.parent is not None and c.parent.span_id == root.context.span_id for c in cycles)
    chats = [s for s in spans.get_finished_spans() if s.name == "chat ScriptedModel"]
    assert len(chats) == 2
    assert {c.parent.span_id for c in chats if c.parent} == {c.context.span_id for c in cycles}
    tool_span = finished["execute_tool add"]
    assert tool_span.attributes is not None
    assert tool_span.attributes["gen_ai.tool.call.id"] == "t1"
    assert tool_span.attributes["gen_ai.tool.status"] == "success"
    assert tool_span.parent is not None
    assert tool_span.parent.span_id == cycles[0].context.span_id


def test_interrupts_are_span_events(spans: InMemorySpanExporter) -> None:
    agent = Agent(model=ScriptedModel([uses(("t1", "add", {"a": 1, "b": 2})), "3"]), tools=[add],
                  callback_handler=None)
    agent.add_hook(BeforeToolCallEvent, lambda e: e.interrupt("ok?", reason={"a": 1}))
    result = agent("1+2")
    [root] = [s for s in spans.get_finished_spans() if s.name.startswith("invoke_agent")]
    [event] = root.events
    assert event.name == "interrupt"
    assert event.attributes is not None
    assert event.attributes["interrupt.name"] == "ok?"
    assert event.attributes["interrupt.id"] == result.interrupts[0].id
    assert event.attributes["interrupt.reason"] == '{"a": 1}'
    spans.clear()
    agent(answer(result))
    assert [s.name for s in spans.get_finished_spans()].count("execute_tool add") == 1


def test_no_spans_without_a_tracer_provider_costs_no_import() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from statehitl import Agent\n"
        "from statehitl.models import ScriptedModel\n"
        "Agent(model=ScriptedModel(['hi']), callback_handler=None)('hello')\n"
        "print('opentelemetry' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
