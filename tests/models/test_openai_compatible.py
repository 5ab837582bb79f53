"""Strands' OpenAI-compatible providers (Ollama, LiteLLM, llama.cpp) with Strands' constructor arguments,
and OpenAIModel's ``client_args``, over real HTTP against recorded streams served on loopback."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import pytest
from model_wire import RECORDINGS, Reply, WireServer, json_reply, recording

from statehitl.models import (
    ContextWindowOverflowException,
    LiteLLMModel,
    LlamaCppModel,
    Model,
    ModelError,
    ModelThrottledException,
    ModelTurn,
    OllamaModel,
    OpenAIModel,
    collect_turn,
)

PROMPT: list[Any] = [{"role": "user", "content": [{"text": "What happened to A-1042?"}]}]
SPEC = {
    "name": "lookup_order",
    "description": "Look up an order.",
    "inputSchema": {"json": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
}
LOOKUP = {"toolUse": {"toolUseId": "call_lhxcdd0u", "name": "lookup_order", "input": {"order_id": "A-1042"}}}


def sse(name: str) -> Reply:
    return Reply(200, {"Content-Type": "text/event-stream"}, (RECORDINGS / name).read_bytes())


def error(name: str) -> Reply:
    return json_reply(recording("openai_compatible_errors.json")[name])


def run(model: Model, messages: list[Any] = PROMPT, **kwargs: Any) -> ModelTurn:
    return asyncio.run(collect_turn(model.stream(messages, **kwargs)))


@pytest.mark.parametrize(("module", "name"), [
    ("statehitl.models.ollama", "OllamaModel"), ("statehitl.models.litellm", "LiteLLMModel"),
    ("statehitl.models.llamacpp", "LlamaCppModel"), ("statehitl.models.anthropic", "AnthropicModel"),
    ("statehitl.models.openai", "OpenAIModel"), ("statehitl.models.bedrock", "BedrockModel"),
    ("statehitl.models.model", "Model"),
])
def test_strands_module_paths_hold_the_same_classes(module: str, name: str) -> None:
    import statehitl.models

    assert getattr(importlib.import_module(module), name) is getattr(statehitl.models, name)


# -- Ollama ---------------------------------------------------------------------------------------------


def test_ollama_tool_call_with_strands_settings(wire_server: WireServer) -> None:
    wire_server.replies.append(sse("ollama_tool_call.sse"))
    model = OllamaModel(wire_server.url, model_id="llama3.1", temperature=0.7, top_p=0.9, max_tokens=256,
                        stop_sequences=["###"], options={"seed": 7, "temperature": 0.1},
                        additional_args={"reasoning_effort": "low"}, ollama_client_args={"headers": {"X-Team": "a"}})
    turn = run(model, tool_specs=[SPEC], system_prompt="Be brief.")

    assert turn.message == {"role": "assistant", "content": [LOOKUP]}
    assert turn.stop_reason == "tool_use"
    assert turn.usage == {"inputTokens": 187, "outputTokens": 21, "totalTokens": 208}
    (request,) = wire_server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["X-Team"] == "a"
    body = request.json()
    assert body["model"] == "llama3.1"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert {key: body[key] for key in ("temperature", "top_p", "max_tokens", "stop", "seed", "reasoning_effort")} == {
        "temperature": 0.7, "top_p": 0.9, "max_tokens": 256, "stop": ["###"], "seed": 7, "reasoning_effort": "low",
    }  # the named settings win over the same options, as in Strands


def test_ollama_settings_its_openai_endpoint_ignores_are_named_in_a_warning(wire_server: WireServer) -> None:
    with pytest.warns(UserWarning, match=r"keep_alive, options\['top_k'\] cannot be sent .*OLLAMA_KEEP_ALIVE"):
        model = OllamaModel(wire_server.url, model_id="llama3.1", keep_alive="10m", options={"top_k": 40})
    assert model.get_config() == {"model_id": "llama3.1", "keep_alive": "10m", "options": {"top_k": 40}}
    wire_server.replies.append(sse("openai_text.sse"))
    run(model)
    assert "top_k" not in wire_server.received[0].json()
    assert "keep_alive" not in wire_server.received[0].json()
    with pytest.warns(UserWarning, match=r"options\['num_ctx'\]"):
        model.update_config(options={"num_ctx": 8192})


def test_ollama_host_is_read_as_the_ollama_client_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert OllamaModel(None, model_id="m").base_url == "http://localhost:11434"
    assert OllamaModel("gpu-box", model_id="m").base_url == "http://gpu-box:11434"
    assert OllamaModel("gpu-box:8000", model_id="m").base_url == "http://gpu-box:8000"
    monkeypatch.setenv("OLLAMA_HOST", "https://ollama.example.com")
    model = OllamaModel(None, model_id="m")
    assert (model.endpoint.scheme, model.endpoint.host, model.endpoint.path) == (
        "https", "ollama.example.com", "/v1/chat/completions")


def test_ollama_unknown_model_says_to_pull_it(wire_server: WireServer) -> None:
    wire_server.replies.append(error("ollama_not_found"))
    with pytest.raises(ModelError, match=r"HTTP 404: model \"llama3.1\" not found.*ollama pull"):
        run(OllamaModel(wire_server.url, model_id="llama3.1"))


def test_ollama_settings_are_checked() -> None:
    with pytest.raises(TypeError, match="needs model_id="):
        OllamaModel("http://localhost:11434")
    with pytest.raises(TypeError, match="temprature"):
        OllamaModel("http://localhost:11434", model_id="m", temprature=0.1)
    with pytest.raises(TypeError, match="verify"):
        OllamaModel("http://localhost:11434", model_id="m", ollama_client_args={"verify": False})


# -- LiteLLM --------------------------------------------------------------------------------------------


def test_litellm_through_a_proxy(wire_server: WireServer) -> None:
    wire_server.replies.append(sse("litellm_tool_call.sse"))
    model = LiteLLMModel(client_args={"api_key": "sk-proxy", "api_base": wire_server.url, "use_litellm_proxy": True},
                         model_id="anthropic/claude-sonnet-4-5", params={"max_tokens": 1000, "temperature": 0.7})
    assert model.get_config()["model_id"] == "litellm_proxy/anthropic/claude-sonnet-4-5"  # as Strands shows it
    turn = run(model, tool_specs=[SPEC])

    assert turn.message["content"] == [
        {"text": "Looking it up."},
        {"toolUse": {"toolUseId": "toolu_01D7FLrfh4GYq7yT1ULFeyMV", "name": "lookup_order",
                     "input": {"order_id": "A-1042"}}},
    ]
    assert turn.usage == {"inputTokens": 412, "outputTokens": 58, "totalTokens": 470}
    (request,) = wire_server.received
    assert request.path == "/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-proxy"
    body = request.json()
    assert body["model"] == "anthropic/claude-sonnet-4-5"  # the proxy gets the id without the prefix
    assert (body["max_tokens"], body["temperature"]) == (1000, 0.7)


def test_litellm_rate_limit_is_throttling(wire_server: WireServer) -> None:
    wire_server.replies.append(error("litellm_rate_limit"))
    model = LiteLLMModel(client_args={"api_base": wire_server.url}, model_id="anthropic/claude-sonnet-4-5")
    with pytest.raises(ModelThrottledException, match=r"HTTP 429.*per-minute rate limit"):
        run(model)


def test_litellm_without_a_proxy_says_to_start_one(monkeypatch: pytest.MonkeyPatch, free_port: int) -> None:
    monkeypatch.setenv("LITELLM_PROXY_API_BASE", f"http://127.0.0.1:{free_port}")
    with pytest.raises(ModelError, match=r"connection refused. LiteLLMModel talks to a LiteLLM proxy"):
        run(LiteLLMModel(model_id="bedrock/us.amazon.nova-lite-v1:0"))


def test_litellm_settings_are_checked() -> None:
    with pytest.raises(TypeError, match="needs model_id="):
        LiteLLMModel(client_args={"api_key": "k"})
    with pytest.raises(TypeError, match="num_retries"):
        LiteLLMModel(client_args={"num_retries": 3}, model_id="m")


# -- llama.cpp ------------------------------------------------------------------------------------------


def test_llamacpp_reasoning_and_text_with_its_own_sampling_params(wire_server: WireServer) -> None:
    wire_server.replies.append(sse("llamacpp_text.sse"))
    model = LlamaCppModel(base_url=wire_server.url + "/", timeout=(5.0, 120.0),
                          params={"temperature": 0.3, "top_k": 10, "repeat_penalty": 1.2, "cache_prompt": True})
    assert model.timeout == 120.0
    turn = run(model)
    assert turn.message["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "The order was refunded."}}},
        {"text": "Order A-1042 was refunded $20."},
    ]
    assert turn.usage == {"inputTokens": 64, "outputTokens": 17, "totalTokens": 81}
    (request,) = wire_server.received
    assert request.path == "/v1/chat/completions"
    assert request.json()["model"] == "default"
    assert {key: request.json()[key] for key in ("temperature", "top_k", "repeat_penalty", "cache_prompt")} == {
        "temperature": 0.3, "top_k": 10, "repeat_penalty": 1.2, "cache_prompt": True}


def test_llamacpp_context_overflow_and_a_loading_server(wire_server: WireServer) -> None:
    wire_server.replies += [error("llamacpp_context"), error("llamacpp_loading")]
    model = LlamaCppModel(base_url=wire_server.url)
    with pytest.raises(ContextWindowOverflowException, match="exceeds the available context size"):
        run(model)
    with pytest.raises(ModelThrottledException, match=r"still loading the model \(HTTP 503\): Loading model"):
        run(model)


def test_llamacpp_settings_are_checked() -> None:
    with pytest.raises(TypeError, match="use_native_token_count"):
        LlamaCppModel(use_native_token_count=True)  # statehitl counts no tokens before a call
    model = LlamaCppModel(model_id="qwen")
    model.update_config(params={"grammar": 'root ::= "yes" | "no"'})
    assert model.get_config() == {"model_id": "qwen", "params": {"grammar": 'root ::= "yes" | "no"'}}


# -- OpenAIModel's client_args ---------------------------------------------------------------------------


def test_openai_client_args_use_the_openai_clients_defaults(wire_server: WireServer,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIModel(client_args={}, model_id="gpt-4o").base_url == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", f"{wire_server.url}/v1")
    wire_server.replies.append(sse("openai_text.sse"))
    model = OpenAIModel(client_args={"organization": "org-1", "default_headers": {"X-Trace": "t"}},
                        model_id="gpt-4o", params={"max_tokens": 100})
    run(model)
    (request,) = wire_server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-env"
    assert (request.headers["OpenAI-Organization"], request.headers["X-Trace"]) == ("org-1", "t")
    assert request.json()["max_tokens"] == 100


def test_openai_client_args_and_direct_settings_are_not_mixed() -> None:
    with pytest.raises(ValueError, match="either client_args= or base_url="):
        OpenAIModel(client_args={"api_key": "k"}, base_url="http://localhost:8000/v1", model_id="m")
    with pytest.raises(TypeError, match="max_retries"):
        OpenAIModel(client_args={"max_retries": 5}, model_id="m")
