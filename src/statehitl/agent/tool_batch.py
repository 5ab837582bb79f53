"""The agent loop's ``tools`` node: one batch of tool calls with its hooks and interrupts.

The seed's rules, in the order they apply: ``BeforeToolsEvent`` may interrupt (then nothing runs) or
cancel (every tool gets an error result, no per-tool events); each tool's ``BeforeToolCallEvent`` may
interrupt (that tool does not run and gets no ``AfterToolCallEvent``) or cancel it; a running tool may
interrupt through its ``ToolContext``; the other tools of the batch still run. ``AfterToolsEvent``
fires once per cycle with the results of that cycle. Results of finished tools are kept as the node's
progress, so on resume only the remaining tools run and the model is not called first; the assistant
message and its results join the conversation together, once every tool has a result.
"""

from __future__ import annotations

import time
from typing import Any

from statehitl import interrupt_ids, observe
from statehitl.agent.binary import from_json_safe, to_json_safe
from statehitl.agent.cancellation import TOOL_CANCELLED
from statehitl.agent.loop_state import AgentLoopState, state_update
from statehitl.agent.runtime import LoopRun
from statehitl.errors import InterruptError
from statehitl.hooks.agent_events import AfterToolCallEvent, AfterToolsEvent, BeforeToolCallEvent, BeforeToolsEvent
from statehitl.hooks.registry import cancel_text
from statehitl.interrupt import Interrupt, InterruptContext, InterruptRaised, InterruptScope
from statehitl.position import NodeContext
from statehitl.tools.executors import SequentialToolExecutor
from statehitl.transitions import ToolFinished
from statehitl.types.content import Message
from statehitl.types.tools import AgentTool, ToolContext, ToolResult, ToolUse, error_result


async def run_tools(state: AgentLoopState, ctx: NodeContext) -> dict[str, Any]:
    """The ``tools`` node: run the pending turn's tool calls; its update is the turn and its results."""
    run: LoopRun = ctx.runtime
    runtime = run.runtime
    message: Message = state.turn  # type: ignore[assignment]
    uses: list[ToolUse] = [block["toolUse"] for block in message["content"] if "toolUse" in block]
    results: dict[str, ToolResult] = _kept_results(ctx.progress) if ctx.progress else {}
    cancel = await _before_tools(run, ctx, message, results)
    todo = [use for use in uses if use["toolUseId"] not in results]
    stopped: list[Interrupt] = []
    if cancel is not None:
        cycle = _cancelled(run, todo, *cancel)
    else:
        cycle = {}

        async def call(use: ToolUse, inline: bool) -> ToolResult | list[Interrupt]:
            if sequential and runtime.cancellation.observed():  # between two tools of a sequential batch
                return _cancelled(run, [use], TOOL_CANCELLED, False)[use["toolUseId"]]
            return await call_tool(run, use, ctx.step, ctx.interrupts, inline)

        sequential = isinstance(runtime.tool_executor, SequentialToolExecutor)
        for use, outcome in zip(todo, await runtime.tool_executor.run(todo, call), strict=True):
            if isinstance(outcome, list):
                stopped.extend(outcome)
            else:
                cycle[use["toolUseId"]] = outcome
    results.update(cycle)
    end_turn = await _after_tools(run, todo, cycle)
    if stopped:
        raise InterruptRaised(stopped, progress=_progress(run, results))
    answered: Message = {"role": "user", "content": [{"toolResult": results[u["toolUseId"]]} for u in uses]}
    return _batch_update(run, [message, answered], end_turn)


async def _before_tools(run: LoopRun, ctx: NodeContext, message: Message,
                        results: dict[str, ToolResult]) -> tuple[str, bool] | None:
    """Fire ``BeforeToolsEvent`` (an interrupt in it holds the whole batch); why no tool is to run, if none
    is, and whether a hook said so: its ``cancel``, else a cancel of the call (Strands' check before tools)."""
    runtime = run.runtime
    hooks = runtime.hooks
    if hooks.has_callbacks(BeforeToolsEvent):
        before = BeforeToolsEvent(runtime.agent, message, run.invocation_state)
        site = interrupt_ids.before_tools_hook(ctx.interrupts.prefix, ctx.step)
        raised = await hooks.fire(before, scope=ctx.interrupts.scope(site, "hook", "tools"))
        if raised:
            raise InterruptRaised(raised, progress=_progress(run, results))
        text = cancel_text(before.cancel, "the tool batch was cancelled")
        if text is not None:
            return text, True
    return (TOOL_CANCELLED, False) if runtime.cancellation.observed() else None


async def _invoked(run: LoopRun, use: ToolUse, tool: AgentTool, scope: InterruptScope, inline: bool
                   ) -> tuple[ToolResult, Exception | None] | list[Interrupt]:
    """What the tool itself gave (its failure as an error result the model reads, with the exception the
    ``AfterToolCallEvent`` carries), or the interrupts it raised through its ``ToolContext``."""
    runtime = run.runtime
    span = run.trace.tool_call(use) if run.trace is not None else None
    exception: Exception | None = None
    try:
        context = ToolContext(use, runtime.agent, run.invocation_state, scope, runtime.cancellation.signal)
        result = await tool.invoke(use, context, inline=inline)
    except InterruptRaised as stop:
        if span is not None:
            span.interrupted(stop.interrupts)
        if observe.observers:
            observe.emit(ToolFinished(use["name"], use["toolUseId"], "interrupted"))
        return _interrupted(run, use, stop.interrupts)
    except InterruptError:
        raise  # misuse of interrupt() (a non-JSON reason, a reused name) is the developer's to fix
    except Exception as exc:  # a tool's failure is the model's to read, not the agent's crash
        exception = exc
        result = error_result(use, f"Error: {exc}")
    if span is not None:
        span.done(result)
    return result, exception


def _cancelled(run: LoopRun, uses: list[ToolUse], text: str, by_hook: bool) -> dict[str, ToolResult]:
    """An error result ``text`` for each of ``uses``, none of which runs, announced to the stream: as a
    cancelled tool when a hook cancelled the batch, as a result when the call was cancelled (as Strands)."""
    cycle = {use["toolUseId"]: error_result(use, text) for use in uses}
    if run.emit is not None:
        for use in uses:
            run.emit({"tool_cancel_event": {"tool_use": use, "message": text}} if by_hook
                     else {"tool_result": cycle[use["toolUseId"]]})
    return cycle


async def _after_tools(run: LoopRun, todo: list[ToolUse], cycle: dict[str, ToolResult]) -> Any:
    """Fire ``AfterToolsEvent`` with this cycle's results; the ``end_turn`` a hook set, if any."""
    runtime = run.runtime
    if not runtime.hooks.has_callbacks(AfterToolsEvent):
        return False
    cycle_message: Message = {"role": "user", "content": [{"toolResult": cycle[u["toolUseId"]]}
                                                          for u in todo if u["toolUseId"] in cycle]}
    after = AfterToolsEvent(runtime.agent, cycle_message, run.invocation_state)
    await runtime.hooks.fire(after)
    return after.end_turn


def _batch_update(run: LoopRun, added: list[Message], end_turn: Any) -> dict[str, Any]:
    """The node's update once every tool has a result: the loop goes on to the model, or ends here (a hook's
    ``end_turn``, then a cancel of the call, with ``agent.cancel(message=)``'s text as the last reply)."""
    cancellation = run.runtime.cancellation
    if end_turn:
        added.append(_final_message(end_turn))
        stop_reason = "end_turn"
    elif cancellation.ends_cycle():
        if cancellation.message is not None:
            added.append({"role": "assistant", "content": [{"text": cancellation.message}]})
        stop_reason = "cancelled"
    else:
        stop_reason = "tool_use"
    return {"messages": added, "turn": None, "stop_reason": stop_reason, **state_update(run.runtime.state)}


def _progress(run: LoopRun, results: dict[str, ToolResult]) -> dict[str, Any] | None:
    """What the batch keeps when it stops (a ``ToolBatch``): finished results, and agent.state if hooks or
    tools changed it; None when neither."""
    changed = run.runtime.state.changed
    if not results and not changed:
        return None
    from statehitl.progress import ToolBatch  # the record kinds load when a batch first stops, not at import

    agent_state = to_json_safe(run.runtime.state.get()) if changed else None
    return ToolBatch(results=to_json_safe(results), agent_state=agent_state).stored()


def _kept_results(progress: Any) -> dict[str, ToolResult]:
    """The results of the finished calls of a batch that stopped (its ``ToolBatch``)."""
    from statehitl.progress import ToolBatch

    batch = ToolBatch.load(progress, "what the agent's tool batch kept")
    results: dict[str, ToolResult] = from_json_safe(batch.results)
    return dict(results)


def _final_message(end_turn: Any) -> Message:
    if isinstance(end_turn, str):
        return {"role": "assistant", "content": [{"text": end_turn}]}
    if isinstance(end_turn, list):
        return {"role": "assistant", "content": end_turn}
    return {"role": "assistant", "content": [{"text": "the turn was ended after the tool results"}]}


async def call_tool(
    run: LoopRun, use: ToolUse, step: int, interrupts: InterruptContext, inline: bool
) -> ToolResult | list[Interrupt]:
    """One tool call with its hooks: its result, or the interrupts that stopped it (also the path of a
    direct call, ``agent.tool.<name>()``). ``step`` and ``interrupts`` place its interrupt ids."""
    runtime = run.runtime
    hooks = runtime.hooks
    name, use_id = use["name"], use["toolUseId"]
    tool = runtime.tools.get(name)
    cancel_message: str | None = None
    if hooks.has_callbacks(BeforeToolCallEvent):
        before = BeforeToolCallEvent(runtime.agent, tool, use, run.invocation_state)
        site = interrupt_ids.before_tool_hook(interrupts.prefix, step, use_id)
        raised = await hooks.fire(before, scope=interrupts.scope(site, "hook", name))
        if raised:
            return _interrupted(run, use, raised)
        use, tool = before.tool_use, before.selected_tool
        cancel_message = cancel_text(before.cancel_tool, f"the call of tool {name!r} was cancelled")
        if cancel_message is not None and run.emit is not None:
            run.emit({"tool_cancel_event": {"tool_use": use, "message": cancel_message}})
    while True:
        started = time.perf_counter()
        exception: Exception | None = None
        if cancel_message is not None:
            result = error_result(use, cancel_message)
        elif tool is None:
            result = error_result(use, f"Error: tool {name!r} is not one of this agent's tools "
                                       f"({', '.join(runtime.tools.names) or 'it has none'})")
        else:
            scope = interrupts.scope(interrupt_ids.tool_call(interrupts.prefix, step, use_id), "tool", name)
            invoked = await _invoked(run, use, tool, scope, inline)
            if isinstance(invoked, list):
                return invoked
            result, exception = invoked
        seconds = time.perf_counter() - started
        if hooks.has_callbacks(AfterToolCallEvent):
            after = AfterToolCallEvent(runtime.agent, tool, use, run.invocation_state, result, exception,
                                       cancel_message, seconds)
            await hooks.fire(after)
            if after.retry and cancel_message is None and not runtime.cancellation.observed():
                continue  # a cancelled call is not retried (Strands: cancellation is terminal)
            result = after.result
        run.metrics.add_tool(name, result["status"] == "success", seconds)
        if observe.observers:
            observe.emit(ToolFinished(name, use_id, result["status"]))
        if run.emit is not None:
            run.emit({"tool_result": result})
        return result


def _interrupted(run: LoopRun, use: ToolUse, interrupts: list[Interrupt]) -> list[Interrupt]:
    """A tool call's interrupts, announced to the stream as Strands announces them."""
    if run.emit is not None:
        run.emit({"tool_interrupt_event": {"tool_use": use, "interrupts": interrupts}})
    return interrupts
