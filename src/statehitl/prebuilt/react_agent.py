"""``create_react_agent``: LangGraph's prebuilt tool-calling agent, a StateGraph on statehitl's runner.

The graph is LangGraph's: node ``"agent"`` calls the chat model (tools bound) on the prompt and the messages, node
``"tools"`` (a ``ToolNode``) runs the calls of its reply, and the agent loops until it replies without a call; the
state is ``messages`` and ``remaining_steps``. ``approve_tools`` is statehitl's: the human approves, edits or rejects
each listed call before it runs (``statehitl.prebuilt.approvals``), durably, answered once, run once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from statehitl.graph import END, StateGraph
from statehitl.graph.message import add_messages
from statehitl.managed import RemainingSteps
from statehitl.prebuilt.tool_node import ToolNode

NEED_MORE_STEPS = "Sorry, need more steps to process this request."

Prompt = str | SystemMessage | Callable[[Any], Any] | Runnable[Any, Any] | None


class AgentState(TypedDict):
    """The agent's state, as LangGraph's: the conversation and the steps the run has left."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps


def structured_state(schema: Any) -> Any:
    """``AgentState`` with ``structured_response`` held as ``schema`` (a pydantic model class, or a JSON schema dict,
    whose answers are dicts), so a stored answer is read back as the same class."""
    held = schema if isinstance(schema, type) else dict[str, Any]
    fields = {**AgentState.__annotations__, "structured_response": NotRequired[held]}
    return TypedDict("AgentStateWithStructuredResponse", fields)  # type: ignore[operator]


def _structured_node(model: Any, response_format: Any) -> Callable[..., Any]:
    """The node that asks the model (tools unbound) for the final answer in ``response_format`` (a schema, or a
    ``(system prompt, schema)`` pair), as LangGraph's ``generate_structured_response``."""
    prompt, schema = response_format if isinstance(response_format, tuple) else (None, response_format)

    def generate_structured_response(state: Any, config: dict[str, Any]) -> dict[str, Any]:
        messages = _messages(state)
        if prompt is not None:
            messages = [SystemMessage(content=prompt), *messages]
        return {"structured_response": model.with_structured_output(schema).invoke(messages, config)}

    return generate_structured_response


def _messages(state: Any) -> list[BaseMessage]:
    return list(state["messages"] if isinstance(state, dict) else state.messages)


def _model_input(prompt: Prompt, state: Any) -> Any:
    """What the model is given: the messages, after the prompt (a system text or message, or what a callable or
    runnable makes of the state)."""
    if prompt is None:
        return _messages(state)
    if isinstance(prompt, str):
        return [SystemMessage(content=prompt), *_messages(state)]
    if isinstance(prompt, SystemMessage):
        return [prompt, *_messages(state)]
    if isinstance(prompt, Runnable):
        return prompt.invoke(state)
    if callable(prompt):
        return prompt(state)
    raise TypeError(f"prompt must be a str, a SystemMessage, a callable or a Runnable, got {type(prompt).__name__}")


def _bound(model: Any, tools: Sequence[BaseTool]) -> Any:
    """The model with the tools bound, as LangGraph binds them: unless the caller bound some already."""
    if not tools or not isinstance(model, BaseChatModel):
        return model
    return model.bind_tools(list(tools))


def _agent_node(model: Any, prompt: Prompt, name: str | None, return_direct: set[str]) -> Callable[..., Any]:
    def agent(state: Any, config: dict[str, Any]) -> dict[str, Any]:
        response = model.invoke(_model_input(prompt, state), config)
        response.name = name
        remaining = state.get("remaining_steps") if isinstance(state, dict) else getattr(state, "remaining_steps", None)
        calls = response.tool_calls if isinstance(response, AIMessage) else []
        direct = bool(calls) and all(c["name"] in return_direct for c in calls)
        if remaining is not None and ((remaining < 1 and direct) or (remaining < 2 and calls)):
            return {"messages": [AIMessage(id=response.id, content=NEED_MORE_STEPS)]}
        return {"messages": [response]}

    return agent


def _after_agent(finish: str) -> Callable[[Any], str]:
    def route(state: Any) -> str:
        last = _messages(state)[-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else finish

    return route


def _after_tools(return_direct: set[str]) -> Callable[[Any], Literal["agent", "__end__"]]:
    def route(state: Any) -> Literal["agent", "__end__"]:
        for message in reversed(_messages(state)):
            if not isinstance(message, ToolMessage):
                break
            if message.name in return_direct and message.status != "error":
                return "__end__"
        return "agent"

    return route


def _schema_of(response_format: Any) -> Any:
    return response_format[1] if isinstance(response_format, tuple) else response_format


def create_react_agent(model: Any, tools: Sequence[BaseTool | Callable[..., Any]] | ToolNode, *, prompt: Prompt = None,
                       response_format: Any = None, state_schema: Any = None, checkpointer: Any = None,
                       store: Any = None,
                       interrupt_before: list[str] | None = None, interrupt_after: list[str] | None = None,
                       name: str | None = None, approve_tools: bool | Sequence[str] = False,
                       responders: list[str] | None = None) -> Any:
    """A compiled tool-calling agent (LangGraph's ``create_react_agent``). ``approve_tools``: True, or the names of
    the tools whose calls wait for a human's ``Approve``/``Edit``/``Reject`` before they run (one interrupt per
    call, bound to its arguments' digest); ``responders``: who may answer them. ``response_format``: a pydantic
    class or JSON schema (or a ``(prompt, schema)`` pair) the final answer is asked for in, once the agent is done,
    into ``structured_response``."""
    if isinstance(model, str):
        raise TypeError("create_react_agent takes a chat model object here (e.g. ChatOpenAI(...)), "
                        f"not the model name {model!r}")
    if isinstance(tools, ToolNode):
        if approve_tools:
            raise ValueError("approve_tools goes to the ToolNode you pass: ToolNode(tools, approve_tools=...)")
        tool_node = tools
    else:
        tool_node = ToolNode(tools, approve_tools=approve_tools, responders=responders)
    tool_list = list(tool_node.tools_by_name.values())
    return_direct = {t.name for t in tool_list if t.return_direct}
    default = AgentState if response_format is None else structured_state(_schema_of(response_format))
    workflow: StateGraph[Any] = StateGraph(state_schema or default)
    workflow.add_node("agent", _agent_node(_bound(model, tool_list), prompt, name, return_direct))
    workflow.set_entry_point("agent")
    finish = END
    if response_format is not None:
        finish = "generate_structured_response"
        workflow.add_node(finish, _structured_node(model, response_format))
        workflow.add_edge(finish, END)
    if tool_list:
        workflow.add_node("tools", tool_node)
        workflow.add_conditional_edges("agent", _after_agent(finish), ["tools", finish])
        if return_direct:
            workflow.add_conditional_edges("tools", _after_tools(return_direct), ["agent", END])
        else:
            workflow.add_edge("tools", "agent")
    else:
        workflow.add_edge("agent", finish)
    return workflow.compile(checkpointer=checkpointer, store=store, interrupt_before=interrupt_before,
                            interrupt_after=interrupt_after, name=name)
