"""Amazon Bedrock through the Converse API, whose stream events are already the ones agents consume.

boto3 is imported when a model is built, not when this module is, so agents on other providers never
pay for it. The client blocks, so each call runs in a worker thread (``iterate_in_thread``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, TypedDict

from statehitl.models.base import Model, iterate_in_thread, require_known_options
from statehitl.models.errors import ContextWindowOverflowException, ModelError, ModelThrottledException
from statehitl.models.streaming import block_events
from statehitl.types.content import ContentBlock, Messages
from statehitl.types.streaming import StreamEvent
from statehitl.types.tools import ToolSpec

if TYPE_CHECKING:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError

__all__ = ["DEFAULT_BEDROCK_MODEL_ID", "DEFAULT_BEDROCK_REGION", "BedrockConfig", "BedrockModel"]

DEFAULT_BEDROCK_MODEL_ID = "us.anthropic.claude-sonnet-4-20250514-v1:0"
DEFAULT_BEDROCK_REGION = "us-west-2"

_RETRIES = {"mode": "adaptive", "total_max_attempts": 4}
"""botocore retries throttling and transient errors this many times (with client-side rate limiting)
before the call fails; pass ``boto_client_config=Config(retries=...)`` to change it."""

_CONTEXT_OVERFLOW_MESSAGES = (
    "Input is too long for requested model",
    "input length and `max_tokens` exceed context limit",
    "too many total text bytes",
    "prompt is too long",
)
_BLOCK_KEYS = (
    "text", "toolUse", "toolResult", "image", "document", "video", "reasoningContent", "citationsContent",
    "guardContent", "cachePoint",
)
_TOOL_RESULT_CONTENT_KEYS = ("text", "json", "image", "document", "video")


class BedrockConfig(TypedDict, total=False):
    """What ``update_config`` takes; ``None`` leaves the choice to the model's defaults."""

    model_id: str
    max_tokens: int | None
    temperature: float | None
    top_p: float | None
    stop_sequences: list[str] | None
    additional_request_fields: dict[str, Any] | None
    """Sent as ``additionalModelRequestFields``: model-specific options such as Claude's ``thinking``."""
    streaming: bool
    """``False`` calls ``converse`` (for models without streaming tool use) and replays it as events."""


class BedrockModel(Model):
    """A Bedrock model (``converse_stream``, or ``converse`` with ``streaming=False``).

    Pass ``client`` to reuse a ``bedrock-runtime`` client, or the parts to build one: ``boto_session``
    (credentials), ``region_name`` (else the session's region, ``AWS_REGION``, then us-west-2),
    ``boto_client_config`` (merged over statehitl's retry settings) and ``endpoint_url``.
    """

    def __init__(
        self,
        *,
        model_id: str = DEFAULT_BEDROCK_MODEL_ID,
        region_name: str | None = None,
        boto_session: boto3.Session | None = None,
        client: Any = None,
        boto_client_config: Config | None = None,
        endpoint_url: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop_sequences: list[str] | None = None,
        additional_request_fields: dict[str, Any] | None = None,
        streaming: bool = True,
    ) -> None:
        self.config: BedrockConfig = {
            "model_id": model_id, "max_tokens": max_tokens, "temperature": temperature, "top_p": top_p,
            "stop_sequences": stop_sequences, "additional_request_fields": additional_request_fields,
            "streaming": streaming,
        }
        if client is None:
            client = _make_client(region_name, boto_session, boto_client_config, endpoint_url)
        elif any(part is not None for part in (region_name, boto_session, boto_client_config, endpoint_url)):
            raise ValueError("BedrockModel: pass either client= or the settings to build one, not both")
        self.client = client

    def update_config(self, **model_config: Any) -> None:
        require_known_options("BedrockModel.update_config()", model_config, BedrockConfig.__annotations__)
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> BedrockConfig:
        return self.config

    def format_request(
        self, messages: Messages, tool_specs: list[ToolSpec] | None = None, system_prompt: str | None = None
    ) -> dict[str, Any]:
        """The keyword arguments of ``converse_stream`` / ``converse`` for this conversation."""
        config = self.config
        request: dict[str, Any] = {"modelId": config["model_id"], "messages": _converse_messages(messages)}
        if system_prompt:
            request["system"] = [{"text": system_prompt}]
        if tool_specs:
            request["toolConfig"] = {"tools": [{"toolSpec": spec} for spec in tool_specs], "toolChoice": {"auto": {}}}
        inference = {
            name: value
            for name, value in (
                ("maxTokens", config.get("max_tokens")),
                ("temperature", config.get("temperature")),
                ("topP", config.get("top_p")),
                ("stopSequences", config.get("stop_sequences")),
            )
            if value is not None
        }
        if inference:
            request["inferenceConfig"] = inference
        if config.get("additional_request_fields"):
            request["additionalModelRequestFields"] = config["additional_request_fields"]
        return request

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Call Bedrock in a worker thread and yield its events as they arrive."""
        request = self.format_request(messages, tool_specs, system_prompt)
        async for event in iterate_in_thread(functools.partial(self._events, request)):
            yield event

    def _events(self, request: dict[str, Any]) -> Iterator[StreamEvent]:
        """The blocking call, with botocore's errors turned into ``statehitl.models.errors`` ones."""
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        where = f"model {self.config['model_id']!r} in {self.client.meta.region_name}"
        streaming = self.config.get("streaming", True)
        try:
            if streaming:
                stream = self.client.converse_stream(**request)["stream"]
                try:
                    yield from stream
                finally:
                    stream.close()
            else:
                yield from _converse_response_events(self.client.converse(**request))
        except ClientError as error:
            raise _client_error(error, where, streaming=streaming) from error
        except NoCredentialsError as error:
            raise ModelError(
                f"Bedrock ({where}): no AWS credentials found; configure them (environment, ~/.aws, an "
                "instance role) or pass boto_session="
            ) from error
        except BotoCoreError as error:
            raise ModelError(f"Bedrock call to {where} failed: {error}") from error


def _converse_messages(messages: Messages) -> list[dict[str, Any]]:
    """``messages`` with only what Converse accepts: extra keys (kept by hooks or other providers) are
    dropped, because Bedrock rejects any field it does not know with a ValidationException."""
    return [
        {"role": message["role"], "content": [part for block in message["content"] if (part := _converse_block(block))]}
        for message in messages
    ]


def _converse_block(block: ContentBlock) -> dict[str, Any] | None:
    for key in _BLOCK_KEYS:
        if key in block:
            value: Any = block[key]  # type: ignore[literal-required]
            if key == "toolUse":
                value = {"toolUseId": value["toolUseId"], "name": value["name"], "input": value["input"]}
            elif key == "toolResult":
                value = {
                    "toolUseId": value["toolUseId"],
                    "content": [
                        {name: part[name] for name in _TOOL_RESULT_CONTENT_KEYS if name in part}
                        for part in value["content"]
                    ],
                    **({"status": value["status"]} if "status" in value else {}),
                }
            return {key: value}
    return None


def _converse_response_events(response: dict[str, Any]) -> Iterator[StreamEvent]:
    """A ``converse`` (non-streaming) response replayed as the events ``converse_stream`` would send."""
    message = response["output"]["message"]
    yield {"messageStart": {"role": message["role"]}}
    for block in message["content"]:
        yield from block_events(block) or ()
    yield {"messageStop": {"stopReason": response["stopReason"]}}
    yield {"metadata": {"usage": response.get("usage", {}), "metrics": response.get("metrics", {})}}


def _make_client(
    region_name: str | None, session: boto3.Session | None, config: Config | None, endpoint_url: str | None
) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as error:
        from statehitl._install import install_command

        raise ImportError(f"BedrockModel needs boto3; install it with: {install_command('bedrock')}") from error
    session = session or boto3.Session()
    region = region_name or session.region_name or os.environ.get("AWS_REGION") or DEFAULT_BEDROCK_REGION
    client_config = Config(retries=_RETRIES, user_agent_extra="statehitl")  # type: ignore[arg-type]
    if config is not None:
        client_config = client_config.merge(config)
    return session.client("bedrock-runtime", region_name=region, endpoint_url=endpoint_url, config=client_config)


def _client_error(error: ClientError, where: str, *, streaming: bool) -> ModelError:
    """One of our errors for a Bedrock error response (HTTP error, or an exception event mid-stream)."""
    details: Any = error.response.get("Error", {})
    code = str(details.get("Code", "")).lower()  # exception events mid-stream are camelCase
    message = details.get("Message") or str(error)
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code == "throttlingexception" or status == 429:
        return ModelThrottledException(
            f"Bedrock is throttling requests to {where} and botocore's retries are spent: {message}. Wait and "
            "retry, slow down, or ask for a higher quota (Service Quotas, Amazon Bedrock)"
        )
    if any(overflow in message for overflow in _CONTEXT_OVERFLOW_MESSAGES):
        return ContextWindowOverflowException(f"the conversation is too long for {where}: {message}")
    if code == "accessdeniedexception":
        permission = "bedrock:InvokeModelWithResponseStream" if streaming else "bedrock:InvokeModel"
        return ModelError(
            f"Bedrock denied access to {where}: {message}. The caller's IAM identity needs {permission} on "
            "this model, and the model must be enabled for the account in that region (Bedrock console, "
            "Model access)"
        )
    if "on-demand throughput" in message:
        message += "; use an inference profile id (such as 'us.' + the model id) as model_id"
    return ModelError(f"Bedrock {details.get('Code', 'error')} for {where}: {message}")
