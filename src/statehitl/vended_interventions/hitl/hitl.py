"""``HumanInTheLoop``: ask a human before tool calls run (Strands' vended handler, on statehitl's interrupts).

Which calls are asked about, first match wins: a ``!tool`` entry of ``allowed_tools`` always is; a tool
trusted earlier in the session (``enable_trust``, kept in ``agent.state["hitl:trusted_tools"]``) is not;
``"*"`` or a listed tool is not; then the ``classifier`` decides; without one, every call is asked about.

Without ``ask``, the agent stops with an interrupt named ``strands:human-in-the-loop`` whose reason is the
prompt (``Approve "tool"[ — reason]?\\n  Input: {json}``), and goes on when it is answered. That answer is
statehitl's: stored once and audited, bound to the call's digest, answerable by the app's next call, the
inbox, its page or a ``statehitl worker`` in another process, with ``responders=`` and a deadline
(``expires_in=``, ``on_expire=``). Besides Strands' answers (``y``/``yes``/``True`` approve, ``t``/``trust``
also trusts, anything else refuses) it takes the answer vocabulary: ``Approve``, ``Reject(message)`` (the
reason reaches the model) and ``Edit(input)`` (run with other arguments, held to the tool's schema).
With ``ask`` (``"stdio"`` or a callable, sync or async) the human is asked inline and the agent does not
stop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
from collections.abc import Awaitable
from typing import Any, Literal, Protocol, runtime_checkable

from statehitl.errors import InvalidExpiryError
from statehitl.expiry import expiry
from statehitl.hooks.agent_events import BeforeToolCallEvent
from statehitl.interventions.actions import Confirm, Deny, InterventionAction, Proceed, default_evaluate
from statehitl.interventions.confirm import APPROVAL_ANSWERS, answers_schema
from statehitl.interventions.handler import InterventionHandler
from statehitl.json_schema_check import schema_errors
from statehitl.responders import responders_of
from statehitl.vended_interventions.hitl.classifier import (
    ClassifierResult,
    HumanInTheLoopClassifier,
    LLMClassifierConfig,
    create_llm_risk_classifier,
)

__all__ = ["DEADLINE_REJECTION", "TRUSTED_TOOLS_KEY", "AskCallback", "EvaluateCallback", "HumanInTheLoop"]

logger = logging.getLogger("statehitl.interventions")

TRUSTED_TOOLS_KEY = "hitl:trusted_tools"
"""The ``agent.state`` key of the tools trusted for the session (a list of names)."""

DEADLINE_REJECTION: dict[str, Any] = {"type": "reject", "message": "no one answered before the deadline"}
"""The answer a sweep gives an approval whose ``expires_in`` passed, unless ``on_expire`` says otherwise."""

_TRUST_RESPONSES = frozenset({"t", "trust"})


@runtime_checkable
class AskCallback(Protocol):
    """Asks a human inline: returns their answer (or an awaitable of it); None denies the call."""

    def __call__(self, prompt: str, **kwargs: Any) -> Any | Awaitable[Any]:
        """The human's answer to ``prompt``."""
        ...


@runtime_checkable
class EvaluateCallback(Protocol):
    """Reads an answer: whether it approves (``evaluate``) or trusts (``evaluate_trust``) the call."""

    def __call__(self, response: Any, **kwargs: Any) -> bool:
        """Whether ``response`` approves (or trusts)."""
        ...


def _stdio_ask(include_trust: bool) -> AskCallback:
    """Ask on the terminal. Prompts take turns (one lock across event loops: a handler may serve several
    calls), and ``input`` runs in a thread so the event loop goes on; that thread cannot be cancelled, so
    this is for interactive use, not for runs that may be cancelled while it waits."""
    options = "(y/n/t)" if include_trust else "(y/n)"
    lock = threading.Lock()

    def blocking_ask(prompt: str) -> str:
        with lock:
            return input(f"{prompt} {options}: ").strip()

    async def ask(prompt: str, **kwargs: Any) -> Any:
        return await asyncio.to_thread(blocking_ask, prompt)

    return ask


def _is_trust_response(response: Any) -> bool:
    """``"t"`` or ``"trust"``, in any case, spaces trimmed."""
    return isinstance(response, str) and response.lower().strip() in _TRUST_RESPONSES


class HumanInTheLoop(InterventionHandler):
    """Pause before tool calls for a human's approval (see the module's description).

    Strands' arguments: ``allowed_tools`` (names that run freely, ``"*"`` for all, ``"!name"`` for one that
    is always asked about), ``classifier`` (``True`` or ``LLMClassifierConfig`` for the LLM risk classifier,
    or your own callable), ``enable_trust`` and ``evaluate_trust``, ``evaluate`` and ``ask``. statehitl's:
    ``responders`` (who may answer), ``expires_in`` with ``on_expire`` (default ``DEADLINE_REJECTION``) and
    ``response_schema`` (the answers a custom ``evaluate`` takes, for the inbox's form and every door's check).
    ``name`` is fixed, so an agent has one ``HumanInTheLoop``; subclass it to rename a second one.
    """

    name = "strands:human-in-the-loop"

    def __init__(
        self,
        *,
        allowed_tools: list[str] | None = None,
        classifier: bool | LLMClassifierConfig | HumanInTheLoopClassifier | None = None,
        enable_trust: bool = False,
        evaluate_trust: EvaluateCallback | None = None,
        evaluate: EvaluateCallback | None = None,
        ask: AskCallback | Literal["stdio"] | None = None,
        responders: list[str] | None = None,
        expires_in: float | None = None,
        on_expire: Any = None,
        response_schema: dict[str, Any] | None = None,
    ) -> None:
        if isinstance(allowed_tools, str):  # set("read_file") would be a set of letters
            raise ValueError("allowed_tools must be a list of tool names, not a single string")
        self._allowed_tools = set(allowed_tools or [])
        self._classifier = _resolve_classifier(classifier)
        if self._classifier is not None and "*" in self._allowed_tools:
            logger.warning("classifier has no effect when allowed_tools contains '*' — all tools are already allowed")
        self._classified_tool_use_ids: set[str] = set()
        self._enable_trust = enable_trust
        self._evaluate_trust = evaluate_trust if evaluate_trust is not None else _is_trust_response
        self._evaluate = evaluate if evaluate is not None else default_evaluate
        self._ask: AskCallback | None = _stdio_ask(enable_trust) if ask == "stdio" else ask
        # Mistakes in what statehitl adds fail here, not at the first tool call hours later.
        self._responders = responders_of(self.name, responders)
        if response_schema is None and evaluate is None and evaluate_trust is None:
            response_schema = APPROVAL_ANSWERS
        self._response_schema = response_schema
        self._expires_in, self._on_expire = _deadline(self.name, expires_in, on_expire, response_schema)

    async def before_tool_call(self, event: BeforeToolCallEvent, **kwargs: Any) -> InterventionAction:
        """Proceed for an allowed or trusted call; otherwise ask (``Confirm``, or inline through ``ask``)."""
        tool_name = event.tool_use["name"]
        decided = await self._requires_approval(event)
        if not decided.requires_human_in_the_loop:
            return Proceed()
        reason = f" — {decided.reason}" if decided.reason else ""
        prompt = f'Approve "{tool_name}"{reason}?\n  Input: {json.dumps(event.tool_use["input"])}'
        trustable = self._enable_trust and f"!{tool_name}" not in self._allowed_tools
        if self._ask is None:
            # The answer comes on resume, maybe in another process: trust is recorded when it is read.
            def evaluate(response: Any) -> bool:
                if trustable and self._evaluate_trust(response):
                    self._trust_tool(event, tool_name)
                    return True
                return self._evaluate(response)

            return Confirm(prompt=prompt, evaluate=evaluate, responders=self._responders,
                           expires_in=self._expires_in, on_expire=self._on_expire,
                           response_schema=self._response_schema)
        response = self._ask(prompt)
        if inspect.isawaitable(response):
            response = await response
        if response is None:  # a dismissed dialog: nothing could resume an inline question, so deny
            return Deny(reason=f'Tool "{tool_name}" denied: approval callback returned no response.')
        if trustable and self._evaluate_trust(response):
            self._trust_tool(event, tool_name)
            return Proceed()
        return Confirm(prompt=prompt, response=response, evaluate=self._evaluate)

    async def _requires_approval(self, event: BeforeToolCallEvent) -> ClassifierResult:
        """Whether the call is asked about: ``!tool``, then trusted, ``"*"``, listed, the classifier, asked."""
        tool_name = event.tool_use["name"]
        if f"!{tool_name}" in self._allowed_tools:
            return ClassifierResult(requires_human_in_the_loop=True)
        if tool_name in (event.agent.state.get(TRUSTED_TOOLS_KEY) or []):
            return ClassifierResult(requires_human_in_the_loop=False)
        if "*" in self._allowed_tools or tool_name in self._allowed_tools:
            return ClassifierResult(requires_human_in_the_loop=False)
        if self._classifier is None:
            return ClassifierResult(requires_human_in_the_loop=True)
        tool_use_id = event.tool_use["toolUseId"]
        if tool_use_id in self._classified_tool_use_ids or event.answered(self.name):
            # Classified before this call was asked about (here, or in the process that asked): the
            # question stands, and the model is not asked again.
            return ClassifierResult(requires_human_in_the_loop=True)
        self._classified_tool_use_ids.add(tool_use_id)
        return await self._classify(event)

    async def _classify(self, event: BeforeToolCallEvent) -> ClassifierResult:
        """The classifier's decision; a failure or a malformed result asks the human (fail-closed)."""
        assert self._classifier is not None
        tool_name = event.tool_use["name"]
        try:
            result: Any = self._classifier(event)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            logger.warning("tool=<%s> | classifier failed, defaulting to approval required", tool_name, exc_info=error)
            return ClassifierResult(requires_human_in_the_loop=True)
        if not isinstance(result, ClassifierResult):
            logger.warning("tool=<%s> | classifier returned malformed result, defaulting to approval required",
                           tool_name)
            return ClassifierResult(requires_human_in_the_loop=True)
        if not isinstance(result.requires_human_in_the_loop, bool):
            logger.warning("tool=<%s> | classifier returned a non-boolean decision (%r), defaulting to approval "
                           "required", tool_name, result.requires_human_in_the_loop)
            return ClassifierResult(requires_human_in_the_loop=True)
        return result

    def _trust_tool(self, event: BeforeToolCallEvent, tool_name: str) -> None:
        """Trust ``tool_name`` for the rest of the session (``agent.state``, saved with it)."""
        trusted = event.agent.state.get(TRUSTED_TOOLS_KEY) or []
        if tool_name not in trusted:
            event.agent.state.set(TRUSTED_TOOLS_KEY, [*trusted, tool_name])


def _deadline(name: str, expires_in: float | None, on_expire: Any,
              response_schema: dict[str, Any] | None) -> tuple[float | None, Any]:
    """``expires_in`` and the answer a sweep gives at the deadline (``DEADLINE_REJECTION`` unless told),
    checked: a deadline needs a positive delay, and its answer must be one the question takes."""
    if expires_in is not None and on_expire is None:
        on_expire = DEADLINE_REJECTION
    expiry(name, expires_in, None, on_expire)
    if expires_in is not None and response_schema is not None:
        problems = schema_errors(on_expire, answers_schema(None, response_schema))
        if problems:
            raise InvalidExpiryError(f"interrupt {name!r}: on_expire={on_expire!r} is not an answer it takes: "
                                     f"{'; '.join(problems)}")
    return expires_in, on_expire


def _resolve_classifier(
    classifier: bool | LLMClassifierConfig | HumanInTheLoopClassifier | None,
) -> HumanInTheLoopClassifier | None:
    if classifier is None or classifier is False:
        return None
    if classifier is True:
        return create_llm_risk_classifier()
    if isinstance(classifier, LLMClassifierConfig):
        return create_llm_risk_classifier(classifier)
    if not callable(classifier):
        raise TypeError(f"classifier must be True, an LLMClassifierConfig or a callable, got {classifier!r}")
    return classifier
