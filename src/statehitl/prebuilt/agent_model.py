"""The nodes of ``create_react_agent`` that call the chat model: ``"agent"`` (the prompt and the conversation, tools
bound) and ``"generate_structured_response"`` (the final answer in the asked-for schema).

The model is a chat model (tools bound unless the caller bound them already) or, LangGraph's dynamic model, a
function of the state and the runtime returning one (awaited if it is a coroutine function). The nodes are
coroutines, so an async prompt, model or tool runs on the run's loop whether the agent was invoked or awaited.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableSequence
from langchain_core.tools import BaseTool

NEED_MORE_STEPS = "Sorry, need more steps to process this request."

Prompt = str | SystemMessage | Callable[[Any], Any] | Runnable[Any, Any] | None


def is_dynamic(model: Any) -> bool:
    """Whether ``model`` is LangGraph's dynamic model: a function choosing the model for each call."""
    return callable(model) and not isinstance(model, Runnable)


def state_value(state: Any, key: str, default: Any = None) -> Any:
    """A key of the state, whether the state is a dict or a model."""
    return state.get(key, default) if isinstance(state, dict) else getattr(state, key, default)


def validate_chat_history(messages: Sequence[BaseMessage]) -> None:
    """Refuse a conversation holding a tool call with no tool message answering it (LangGraph's check: chat
    providers refuse such a history)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    missing = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls if c["id"] not in answered]
    if missing:
        raise ValueError("Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are "
                         f"the first few of those tool calls: {missing[:3]}.\n\nEvery tool call (LLM requesting to "
                         "call a tool) in the message history MUST have a corresponding ToolMessage (result of a "
                         "tool invocation to return to the LLM) - this is required by most LLM providers.")


async def _prompted(prompt: Prompt, state: Any, given: dict[str, Any]) -> Any:
    """What the model is given: the messages after the prompt (a system text or message), or what a function or
    runnable makes of the state (a function may also take ``config``, ``store`` and ``runtime``, from ``given``,
    as a LangGraph node does)."""
    messages = list(state_value(state, "messages"))
    if prompt is None:
        return messages
    if isinstance(prompt, str):
        return [SystemMessage(content=prompt), *messages]
    if isinstance(prompt, SystemMessage):
        return [prompt, *messages]
    if isinstance(prompt, Runnable):
        return await prompt.ainvoke(state, given["config"])
    if callable(prompt):
        params = inspect.signature(prompt).parameters
        made = prompt(state, **{name: value for name, value in given.items() if name in params})
        made = await made if inspect.isawaitable(made) else made
        # a function returning a runnable (a prompt template) has it run on the state, as LangChain's lambdas do
        return await made.ainvoke(state, given["config"]) if isinstance(made, Runnable) else made
    raise ValueError(f"Got unexpected type for `prompt`: {type(prompt)}")


def _bound_tools(model: Any) -> list[Any] | None:
    """The tools a caller bound to the model already (``model.bind_tools(...)``), or None."""
    if isinstance(model, RunnableSequence):
        model = next((s for s in model.steps if isinstance(s, RunnableBinding | BaseChatModel)), model)
    if isinstance(model, RunnableBinding) and "tools" in model.kwargs:
        return list(model.kwargs["tools"])
    return None


def bound(model: Any, tools: Sequence[BaseTool], builtin: Sequence[dict[str, Any]] = ()) -> Any:
    """The model with the tools bound (and ``builtin``, the provider's own tools given as dicts, which only the
    model runs), as LangGraph binds them: unless the caller bound them already (then the same tools, by name, or
    a ValueError saying which differ)."""
    if not tools and not builtin:
        return model
    already = _bound_tools(model)
    if already is None:
        return model.bind_tools([*tools, *builtin]) if hasattr(model, "bind_tools") else model
    if len(already) - len(builtin) != len(tools):
        raise ValueError("Number of tools in the model.bind_tools() and tools passed to create_react_agent must "
                         f"match Got {len(tools)} tools, expected {len(already) - len(builtin)}")
    names = {t.get("function", {}).get("name") if t.get("type") == "function" else t.get("name") for t in already}
    missing = {t.name for t in tools} - names
    if missing:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")
    return model


@dataclass(frozen=True)
class ModelCall:
    """How node ``"agent"`` calls the model."""

    model: Any
    """A chat model or runnable (tools bound), or a function of (state, runtime) returning one."""
    prompt: Prompt
    name: str | None
    return_direct: frozenset[str]
    uses_hook_input: bool = False
    """A ``pre_model_hook`` may hand the model ``llm_input_messages`` instead of the state's messages."""

    async def resolved(self, state: Any, runtime: Any) -> Any:
        """The model for this call: the static one, or what the dynamic function returns for this state."""
        if not is_dynamic(self.model):
            return self.model
        made = self.model(state, runtime)
        return await made if inspect.isawaitable(made) else made

    def model_state(self, state: Any) -> Any:
        """The state the prompt sees: its ``messages`` replaced by the hook's ``llm_input_messages`` if any."""
        messages = state_value(state, "llm_input_messages") if self.uses_hook_input else None
        messages = messages or state_value(state, "messages")
        if messages is None:
            keys = "'llm_input_messages' or 'messages' key" if self.uses_hook_input else "'messages' key"
            raise ValueError(f"Expected input to call_model to have {keys}, but got {state}")
        validate_chat_history(messages)
        if isinstance(state, dict):
            return {**state, "messages": messages}
        return state.model_copy(update={"messages": messages}) if hasattr(state, "model_copy") else state

    def node(self) -> Callable[..., Any]:
        async def agent(state: Any, config: dict[str, Any], runtime: Any, store: Any) -> dict[str, Any]:
            model = await self.resolved(state, runtime)
            given = {"config": config, "store": store, "runtime": runtime}
            response = await model.ainvoke(await _prompted(self.prompt, self.model_state(state), given), config)
            response.name = self.name
            return {"messages": [self._checked(state, response)]}

        return agent

    def _checked(self, state: Any, response: Any) -> Any:
        """The reply, or LangGraph's "need more steps" message when the steps left cannot run its calls."""
        remaining = state_value(state, "remaining_steps")
        calls = response.tool_calls if isinstance(response, AIMessage) else []
        direct = bool(calls) and all(c["name"] in self.return_direct for c in calls)
        if remaining is not None and ((remaining < 1 and direct) or (remaining < 2 and calls)):
            return AIMessage(id=response.id, content=NEED_MORE_STEPS)
        return response


def _chat_model(model: Any) -> Any:
    """The chat model under a binding or a prompt sequence (structured output binds its own schema)."""
    if isinstance(model, RunnableSequence):
        model = next((s for s in model.steps if isinstance(s, RunnableBinding | BaseChatModel)), model)
    return model.bound if isinstance(model, RunnableBinding) else model


def structured_node(call: ModelCall, response_format: Any) -> Callable[..., Any]:
    """The node that asks the model (tools unbound) for the final answer in ``response_format`` (a schema, or a
    ``(system prompt, schema)`` pair), as LangGraph's ``generate_structured_response``."""
    prompt, schema = response_format if isinstance(response_format, tuple) else (None, response_format)

    async def generate_structured_response(state: Any, config: dict[str, Any], runtime: Any) -> dict[str, Any]:
        messages = list(state_value(state, "messages"))
        if prompt is not None:
            messages = [SystemMessage(content=prompt), *messages]
        model = _chat_model(await call.resolved(state, runtime))
        return {"structured_response": await model.with_structured_output(schema).ainvoke(messages, config)}

    return generate_structured_response
