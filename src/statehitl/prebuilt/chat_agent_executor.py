"""``create_react_agent``: LangGraph's prebuilt tool-calling agent, a StateGraph on statehitl's runner.

The graph is LangGraph's: node ``"agent"`` calls the chat model (tools bound) on the prompt and the messages, node
``"tools"`` (a ``ToolNode``) runs the calls of its reply, and the agent loops until it replies without a call; the
state is ``messages`` and ``remaining_steps``. ``approve_tools`` is statehitl's: the human approves, edits or rejects
each listed call before it runs (``statehitl.prebuilt.approvals``), durably, answered once, run once.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, create_model
from typing_extensions import TypedDict  # pydantic (a tool's InjectedState schema) needs it before 3.12

from statehitl.graph import END, StateGraph
from statehitl.graph.message import add_messages
from statehitl.managed import RemainingSteps, managed_value
from statehitl.prebuilt.agent_model import ModelCall, Prompt, bound, is_dynamic, structured_node
from statehitl.prebuilt.agent_routes import Routes
from statehitl.prebuilt.tool_node import ToolNode

__all__ = ["AgentState", "AgentStatePydantic", "AgentStateWithStructuredResponse",
           "AgentStateWithStructuredResponsePydantic", "StructuredResponse", "StructuredResponseSchema",
           "create_react_agent", "create_tool_calling_executor", "structured_state"]

StructuredResponse = dict[str, Any] | BaseModel
"""What ``structured_response`` holds: an instance of the pydantic class asked for, or a dict (a JSON schema's)."""
StructuredResponseSchema = dict[str, Any] | type[BaseModel]
"""What ``response_format`` takes: a pydantic class or a JSON schema dict."""


class AgentState(TypedDict):
    """The agent's state, as LangGraph's: the conversation and the steps the run has left."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps


class AgentStatePydantic(BaseModel):
    """``AgentState`` as a pydantic model (LangGraph's)."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps = 25


class AgentStateWithStructuredResponse(AgentState):
    """``AgentState`` with the final answer ``response_format`` asked for."""

    structured_response: StructuredResponse


class AgentStateWithStructuredResponsePydantic(AgentStatePydantic):
    """``AgentStatePydantic`` with the final answer ``response_format`` asked for."""

    structured_response: StructuredResponse


def structured_state(schema: Any) -> Any:
    """``AgentState`` with ``structured_response`` held as ``schema`` (a pydantic model class, or a JSON schema dict,
    whose answers are dicts), so a stored answer is read back as the same class."""
    held = schema if isinstance(schema, type) else dict[str, Any]
    fields = {**AgentState.__annotations__, "structured_response": NotRequired[held]}
    return TypedDict("AgentStateWithStructuredResponse", fields)  # type: ignore[operator]


def _with_hook_input(state_schema: Any) -> Any:
    """The state with a pre-model hook: plus the hook's ``llm_input_messages`` (a channel of its own, which the
    graph neither takes nor returns: LangGraph's input schema of node ``"agent"``)."""
    if isinstance(state_schema, type) and issubclass(state_schema, BaseModel):
        return create_model("CallModelInputSchema", llm_input_messages=(list[AnyMessage], []), __base__=state_schema)
    fields = {**typing.get_type_hints(state_schema, include_extras=True),
              "llm_input_messages": NotRequired[list[AnyMessage]]}
    return TypedDict("CallModelInputSchema", fields)  # type: ignore[operator]


def _data_of(state_schema: Any) -> Any:
    """The state's data fields, what the graph takes and returns (its managed values, ``remaining_steps``, are the
    run's)."""
    hints = typing.get_type_hints(state_schema, include_extras=True)
    return TypedDict(f"{state_schema.__name__}Data",  # type: ignore[operator]
                     {k: NotRequired[v] for k, v in hints.items() if managed_value(v) is None})


def _checked_schema(state_schema: Any, response_format: Any) -> Any:
    if state_schema is None:
        return AgentState if response_format is None else structured_state(_schema_of(response_format))
    required = {"messages", "remaining_steps"} | ({"structured_response"} if response_format is not None else set())
    missing = required - set(typing.get_type_hints(state_schema))
    if missing:
        raise ValueError(f"Missing required key(s) {missing} in state_schema")
    return state_schema


def _schema_of(response_format: Any) -> Any:
    return response_format[1] if isinstance(response_format, tuple) else response_format


Tools = Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | ToolNode
"""What ``create_react_agent`` runs: tools (langchain-core tools, functions, provider built-ins as dicts) or a
``ToolNode``."""


def _tool_node(tools: Tools, approve_tools: bool | Sequence[str],
               responders: list[str] | None) -> tuple[ToolNode, list[Any]]:
    """The tools node, and the provider's built-in tools (dicts) the model is given but no node runs."""
    if isinstance(tools, ToolNode):
        if approve_tools:
            raise ValueError("approve_tools goes to the ToolNode you pass: ToolNode(tools, approve_tools=...)")
        return tools, []
    builtin = [t for t in tools if isinstance(t, dict)]
    runnable = [t for t in tools if not isinstance(t, dict)]
    return ToolNode(runnable, approve_tools=approve_tools, responders=responders), builtin


def _wire(workflow: StateGraph[Any], routes: Routes, hooks: tuple[Any, Any], has_tools: bool) -> None:
    """The edges LangGraph adds, in its order (its drawing lists them so): the hooks', the routes out of the
    post-model hook, the agent and the tools; the last node of the run has none (it ends the run)."""
    pre, post = hooks
    workflow.set_entry_point(routes.entry)
    if pre is not None:
        workflow.add_edge("pre_model_hook", "agent")
    last = "post_model_hook" if post is not None else "agent"
    if post is not None:
        workflow.add_edge("agent", "post_model_hook")
    if has_tools:
        route = routes.after_post_hook if post is not None else routes.after_agent
        targets = [routes.entry, "tools", routes.finish] if post is not None else ["tools", routes.finish]
        workflow.add_conditional_edges(last, route, targets)
        if routes.return_direct:
            workflow.add_conditional_edges("tools", routes.after_tools, [routes.entry, END])
        else:
            workflow.add_edge("tools", routes.entry)
    elif routes.finish != END:  # a node with no edge out ends the run (LangGraph adds no edge to the end)
        workflow.add_edge(last, routes.finish)


def _named_model(model: str) -> Any:
    """The chat model a ``"provider:model"`` name stands for, made by LangChain's ``init_chat_model`` (the
    ``langchain`` package), as LangGraph makes it."""
    try:
        from langchain.chat_models import init_chat_model  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ImportError(f"create_react_agent(model={model!r}): a model given by name needs langchain "
                          "(`pip install langchain`) to make it; or pass a chat model object (e.g. "
                          "ChatOpenAI(...))") from None
    return init_chat_model(model)


def create_react_agent(model: Any, tools: Tools, *, prompt: Prompt = None,
                       response_format: Any = None, pre_model_hook: Any = None, post_model_hook: Any = None,
                       state_schema: Any = None, context_schema: Any = None, checkpointer: Any = None,
                       store: Any = None, interrupt_before: list[str] | None = None,
                       interrupt_after: list[str] | None = None, debug: bool = False,
                       version: Literal["v1", "v2"] = "v2", name: str | None = None,
                       approve_tools: bool | Sequence[str] = False, responders: list[str] | None = None) -> Any:
    """A compiled tool-calling agent (LangGraph's ``create_react_agent``). ``model``: a chat model, a function of
    (state, runtime) returning one, or a ``"provider:model"`` name (made by LangChain's ``init_chat_model``, as
    LangGraph makes it). ``pre_model_hook``/``post_model_hook``: nodes run before/after each model call
    (the pre hook may hand the model ``llm_input_messages`` instead of the state's messages). ``version``: "v2"
    (LangGraph's default) runs each tool call as a task of its own (a ``Send``), "v1" all calls in one task.
    ``approve_tools``: True, or the names of the tools whose calls wait for a human's ``Approve``/``Edit``/``Reject``
    before they run (one interrupt per call, bound to its arguments' digest); ``responders``: who may answer them.
    ``response_format``: a pydantic class or JSON schema (or a ``(prompt, schema)`` pair) the final answer is asked
    for in, once the agent is done, into ``structured_response``."""
    if isinstance(model, str):
        model = _named_model(model)
    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version}. Supported versions are 'v1' and 'v2'.")
    tool_node, builtin = _tool_node(tools, approve_tools, responders)
    tool_list = list(tool_node.tools_by_name.values())
    schema = _checked_schema(state_schema, response_format)
    return_direct = frozenset(t.name for t in tool_list if t.return_direct)
    call = ModelCall(model if is_dynamic(model) else bound(model, tool_list, builtin), prompt, name, return_direct,
                     uses_hook_input=pre_model_hook is not None)
    finish = END if response_format is None else "generate_structured_response"
    routes = Routes("pre_model_hook" if pre_model_hook is not None else "agent", finish, return_direct,
                    post_hook=post_model_hook is not None, send_calls=version == "v2")
    workflow: StateGraph[Any] = (StateGraph(schema, context_schema) if pre_model_hook is None else
                                 StateGraph(_with_hook_input(schema), context_schema, input_schema=_data_of(schema),
                                            output_schema=_data_of(schema)))
    workflow.add_node("agent", call.node())
    for node, hook in (("pre_model_hook", pre_model_hook), ("post_model_hook", post_model_hook)):
        if hook is not None:
            workflow.add_node(node, hook)
    if response_format is not None:
        workflow.add_node(finish, structured_node(call, response_format))
    if tool_list:
        workflow.add_node("tools", tool_node)
    _wire(workflow, routes, (pre_model_hook, post_model_hook), bool(tool_list))
    return workflow.compile(checkpointer=checkpointer, store=store, interrupt_before=interrupt_before,
                            interrupt_after=interrupt_after, debug=debug, name=name)


create_tool_calling_executor = create_react_agent
"""LangGraph's older name for ``create_react_agent``."""
