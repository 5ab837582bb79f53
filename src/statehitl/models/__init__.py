"""Models: the ``Model`` contract, turn assembly, and the providers.

``ScriptedModel`` (tests, examples, benchmarks) loads with the package; ``BedrockModel`` and
``OpenAIModel`` load on first use, so an agent on one provider never imports another's client, and
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
    from statehitl.models.bedrock import BedrockModel
    from statehitl.models.openai import OpenAIModel

__all__ = [
    "BedrockModel",
    "ContextWindowOverflowException",
    "Model",
    "ModelError",
    "ModelThrottledException",
    "ModelTurn",
    "OpenAIModel",
    "ScriptedModel",
    "collect_turn",
]

_LAZY = {"BedrockModel": "statehitl.models.bedrock", "OpenAIModel": "statehitl.models.openai"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
