"""Models: the ``Model`` contract, turn assembly, and the providers.

``ScriptedModel`` (tests, examples, benchmarks) loads with the package; the providers load on first
use (``from statehitl.models import AnthropicModel``, or from their own modules under Strands' paths,
``statehitl.models.anthropic``...), so an agent on one provider never imports another's client, and
``import statehitl.models`` never imports boto3.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from statehitl.models.base import Model
from statehitl.models.errors import ContextWindowOverflowException, ModelError, ModelThrottledException
from statehitl.models.scripted import ScriptedModel
from statehitl.models.streaming import ModelTurn, collect_turn

if TYPE_CHECKING:
    from statehitl.models.anthropic import AnthropicModel
    from statehitl.models.bedrock import BedrockModel
    from statehitl.models.litellm import LiteLLMModel
    from statehitl.models.llamacpp import LlamaCppModel
    from statehitl.models.ollama import OllamaModel
    from statehitl.models.openai import OpenAIModel

__all__ = [
    "AnthropicModel",
    "BedrockModel",
    "ContextWindowOverflowException",
    "LiteLLMModel",
    "LlamaCppModel",
    "Model",
    "ModelError",
    "ModelThrottledException",
    "ModelTurn",
    "OllamaModel",
    "OpenAIModel",
    "ScriptedModel",
    "collect_turn",
]

_LAZY = {
    "AnthropicModel": "statehitl.models.anthropic",
    "BedrockModel": "statehitl.models.bedrock",
    "LiteLLMModel": "statehitl.models.litellm",
    "LlamaCppModel": "statehitl.models.llamacpp",
    "OllamaModel": "statehitl.models.ollama",
    "OpenAIModel": "statehitl.models.openai",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
