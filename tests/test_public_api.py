"""The public API, pinned: a change here is a change users see, so it must be deliberate."""

from __future__ import annotations

import subprocess
import sys

import statehitl.checkpoint
import statehitl.graph
import statehitl.hooks
import statehitl.testing

PUBLIC = {
    statehitl.graph: ["CompiledStateGraph", "END", "GraphRunResult", "NodeContext", "START", "StateGraph",
                      "StateSnapshot", "Status", "append"],
    statehitl.hooks: ["AfterNodeCallEvent", "BeforeNodeCallEvent", "HookEvent", "HookProvider", "HookRegistry",
                      "InterruptibleEvent"],
    statehitl.checkpoint: ["ABSENT", "CheckpointRecord", "Checkpointer", "FileCheckpointer", "FileStorage",
                           "InterruptRecord", "MemoryCheckpointer", "MemoryStorage", "Storage", "storage_from_url",
                           "validate_key", "validate_prefix", "validate_thread_id"],
    statehitl.testing: ["CountingStorage", "StorageCounts", "TransitionRecorder"],
}


def test_each_module_exports_exactly_its_public_names() -> None:
    for module, names in PUBLIC.items():
        assert sorted(module.__all__) == names, module.__name__
        for name in names:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_importing_statehitl_stays_light() -> None:
    """Serverless cold starts pay for every import: the bare package loads nothing heavy."""
    heavy = ["networkx", "pydantic", "boto3", "aiofiles", "opentelemetry"]
    code = f"import sys, statehitl; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_building_a_graph_does_not_load_the_cloud_backends() -> None:
    code = (
        "import sys\n"
        "from statehitl.graph import StateGraph\n"
        "from statehitl.checkpoint import FileCheckpointer\n"
        "print([m for m in ('boto3', 'botocore', 'networkx') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
