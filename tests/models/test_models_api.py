"""statehitl.models' public names, pinned, and the promise that the package itself stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import statehitl.models

PUBLIC = [
    "AnthropicModel", "BedrockModel", "ContextWindowOverflowException", "LiteLLMModel", "LlamaCppModel", "Model",
    "ModelError", "ModelThrottledException", "ModelTurn", "OllamaModel", "OpenAIModel", "ScriptedModel",
    "collect_turn",
]


def test_the_package_exports_exactly_its_public_names() -> None:
    assert sorted(statehitl.models.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(statehitl.models, name).__name__ == name


def test_model_errors_are_statehitl_errors() -> None:
    from statehitl.errors import StatehitlError
    from statehitl.models import ContextWindowOverflowException, ModelError, ModelThrottledException

    assert issubclass(ModelError, StatehitlError)
    assert issubclass(ModelThrottledException, ModelError)
    assert issubclass(ContextWindowOverflowException, ModelError)
    assert ModelThrottledException("slow down").message == "slow down"


def test_importing_models_loads_no_provider_client() -> None:
    code = (
        "import sys\n"
        "from statehitl.models import ScriptedModel, collect_turn\n"
        "print([m for m in ('boto3', 'botocore', 'http.client', 'statehitl.models.bedrock',"
        " 'statehitl.models.openai', 'statehitl.models.anthropic', 'statehitl.models.ollama') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="Nope"):
        statehitl.models.Nope  # noqa: B018
