"""Strands' import paths on statehitl: every ``strands`` import of the Strands docs' examples that use only
what statehitl has resolves with ``strands`` replaced by ``statehitl``, what it lacks still fails, and each
of Strands' deeper modules holds statehitl's own objects (not copies), so ``isinstance`` and ``except``
work whichever path the code imported from."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from statehitl import Agent, tool
from statehitl.models import ModelThrottledException as ThrottledFromModels
from statehitl.models import ScriptedModel
from statehitl.types.tools import ToolContext
from strands_doc_imports import MISSING, RESOLVED


def on_statehitl(statement: str) -> str:
    return re.sub(r"^(from|import) strands\b", r"\1 statehitl", statement)


def imports(statement: str) -> Exception | None:
    """Run the import on statehitl; the error it raised, or None."""
    try:
        exec(compile(on_statehitl(statement), "<strands docs>", "exec"), {})
    except Exception as error:
        return error
    return None


def test_the_docs_examples_that_use_what_statehitl_has_import_on_it() -> None:
    failed = {statement: error for example in RESOLVED for statement in example[1:] if (error := imports(statement))}
    broken = [example[0] for example in RESOLVED if set(example[1:]) & set(failed)]
    assert not failed, f"{len(broken)} example(s) no longer import, first {broken[:3]}: {failed}"
    assert len(RESOLVED) == 322
    assert len({statement for example in RESOLVED for statement in example[1:]}) == 59


@pytest.mark.parametrize(("statement", "lacking"), MISSING, ids=[statement for statement, _ in MISSING])
def test_what_statehitl_does_not_have_fails_to_import(statement: str, lacking: str) -> None:
    assert isinstance(imports(statement), ImportError), f"{statement} resolves: is {lacking} really there now?"


def _statehitl(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


# The modules statehitl has for Strands' paths: {name: the statehitl object it must be}, and nothing else.
PATHS: dict[str, dict[str, str]] = {
    "statehitl.session.file_session_manager": {"FileSessionManager": "statehitl.session.FileSessionManager"},
    "statehitl.session.s3_session_manager": {"S3SessionManager": "statehitl.session.S3SessionManager"},
    "statehitl.hooks.events": {name: f"statehitl.hooks.{name}" for name in (
        "AfterInvocationEvent", "AfterModelCallEvent", "AfterMultiAgentInvocationEvent", "AfterNodeCallEvent",
        "AfterToolCallEvent", "AfterToolsEvent", "BeforeInvocationEvent", "BeforeModelCallEvent",
        "BeforeMultiAgentInvocationEvent", "BeforeNodeCallEvent", "BeforeToolCallEvent", "BeforeToolsEvent",
        "MessageAddedEvent", "MultiAgentInitializedEvent")},
    "statehitl.hooks.multiagent": {name: f"statehitl.hooks.{name}" for name in (
        "AfterMultiAgentInvocationEvent", "AfterNodeCallEvent", "BeforeMultiAgentInvocationEvent",
        "BeforeNodeCallEvent", "MultiAgentInitializedEvent")},
    "statehitl.types.interrupt": {"Interrupt": "statehitl.interrupt.Interrupt",
                                  "InterruptResponse": "statehitl.types.agent.InterruptResponse",
                                  "InterruptResponseContent": "statehitl.types.agent.InterruptResponseContent"},
    "statehitl.types.exceptions": {
        "CheckpointException": "statehitl.errors.AgentCheckpointError",
        "ConcurrencyException": "statehitl.errors.AgentBusyError",
        "ContextWindowOverflowException": "statehitl.models.errors.ContextWindowOverflowException",
        "ModelThrottledException": "statehitl.models.errors.ModelThrottledException",
        "SessionException": "statehitl.errors.CheckpointError",
        "SnapshotException": "statehitl.errors.SnapshotError",
        "StorageError": "statehitl.errors.StorageError",
    },
    "statehitl.experimental.checkpoint": {name: f"statehitl.experimental.checkpoint.checkpoint.{name}" for name in (
        "CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition")},
    "statehitl.types.event_loop": {name: f"statehitl.types.streaming.{name}" for name in (
        "Metrics", "StopReason", "Usage")},
    "statehitl.handlers.callback_handler": {name: f"statehitl.handlers.{name}" for name in (
        "CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler")},
    "statehitl.models.model": {"Model": "statehitl.models.Model"},
}
# Strands' modules statehitl had already (its own definitions live there): the names Strands users import.
ALREADY: dict[str, dict[str, str]] = {
    "statehitl.multiagent.graph": {name: f"statehitl.multiagent.{name}" for name in (
        "Graph", "GraphBuilder", "GraphEdge", "GraphNode", "GraphState")},
    "statehitl.multiagent.swarm": {name: f"statehitl.multiagent.{name}" for name in (
        "SharedContext", "Swarm", "SwarmNode")},
    "statehitl.agent.conversation_manager": {name: f"statehitl.agent.{name}" for name in (
        "ConversationManager", "NullConversationManager", "SlidingWindowConversationManager")},
    # Strands' checkpoint, snapshot and storage modules: statehitl defines its classes there
    "statehitl": {"Snapshot": "statehitl.types._snapshot.Snapshot"},
    "statehitl.types": {"Snapshot": "statehitl.types._snapshot.Snapshot"},
    "statehitl.types._snapshot": {name: f"statehitl.types._snapshot.{name}" for name in (
        "ALL_SNAPSHOT_FIELDS", "SNAPSHOT_PRESETS", "SNAPSHOT_SCHEMA_VERSION", "Snapshot", "SnapshotField",
        "SnapshotPreset", "resolve_snapshot_fields")},
    "statehitl.session": {name: f"statehitl.session.snapshot_session_manager.{name}" for name in (
        "BidiAgentSaveLatestStrategy", "MultiAgentSaveLatestStrategy", "SaveLatestStrategy",
        "SnapshotSessionManager", "SnapshotTrigger")},
    "statehitl.storage": {
        "InMemoryStorage": "statehitl.storage.in_memory_storage.InMemoryStorage",
        "LocalFileStorage": "statehitl.storage.local_file_storage.LocalFileStorage",
        "S3Storage": "statehitl.storage.s3_storage.S3Storage",
        "Storage": "statehitl.storage.storage.Storage",
    },
    "statehitl.storage.storage": {"Storage": "statehitl.storage.storage.Storage",
                                  "StorageSearchResult": "statehitl.storage.search.types.StorageSearchResult"},
    "statehitl.storage.search": {name: f"statehitl.storage.search.{module}.{name}" for module, name in (
        ("keyword", "KeywordSearchStrategy"), ("types", "SearchStrategy"), ("types", "StorageSearchResult"),
        ("bm25", "Bm25SearchStrategy"), ("bm25", "Bm25SearchStrategyConfig"))},
}


# Strands 1.62's control layer (strands.interventions, strands.vended_interventions.hitl) and HookOrder, at
# Strands' paths: {module: {name: the statehitl object it must be}}. Each name is one Strands 1.62 has there too.
INTERVENTIONS: dict[str, dict[str, str]] = {
    "statehitl.interventions": {name: f"statehitl.interventions.actions.{name}" for name in (
        "Confirm", "Deny", "Guide", "InterventionAction", "Proceed", "Transform")}
    | {"InterventionHandler": "statehitl.interventions.handler.InterventionHandler",
       "OnError": "statehitl.interventions.handler.OnError"},
    "statehitl.interventions.actions": {name: f"statehitl.interventions.{name}" for name in (
        "Confirm", "Deny", "Guide", "InterventionAction", "Proceed", "Transform")}
    | {"LifecycleEvent": "statehitl.interventions.actions.LifecycleEvent",
       "default_evaluate": "statehitl.interventions.actions.default_evaluate"},
    "statehitl.interventions.handler": {"InterventionHandler": "statehitl.InterventionHandler",
                                        "OnError": "statehitl.interventions.OnError"},
    "statehitl.interventions.registry": {
        "InterventionRegistry": "statehitl.interventions.registry.InterventionRegistry"},
    "statehitl.vended_interventions": {"HumanInTheLoop": "statehitl.vended_interventions.hitl.HumanInTheLoop"},
    "statehitl.vended_interventions.hitl": {
        "HumanInTheLoop": "statehitl.vended_interventions.hitl.hitl.HumanInTheLoop",
        "HumanInTheLoopClassifier": "statehitl.vended_interventions.hitl.classifier.HumanInTheLoopClassifier",
        "LLMClassifierConfig": "statehitl.vended_interventions.hitl.classifier.LLMClassifierConfig"},
    "statehitl.vended_interventions.hitl.hitl": {name: f"statehitl.vended_interventions.hitl.hitl.{name}" for name in (
        "AskCallback", "EvaluateCallback", "HumanInTheLoop")},
    "statehitl.vended_interventions.hitl.classifier": {
        name: f"statehitl.vended_interventions.hitl.classifier.{name}" for name in (
            "ClassifierResult", "HumanInTheLoopClassifier", "LLMClassifierConfig")},
    "statehitl.hooks": {"HookOrder": "statehitl.hooks.registry.HookOrder"},
    "statehitl.hooks.registry": {"HookOrder": "statehitl.hooks.HookOrder"},
}


@pytest.mark.parametrize("module", sorted(INTERVENTIONS))
def test_strands_interventions_paths_hold_statehitls_objects_under_strands_names(module: str) -> None:
    ours, theirs = importlib.import_module(module), importlib.import_module(on_strands(module))
    for name, path in INTERVENTIONS[module].items():
        assert getattr(ours, name) is _statehitl(path), f"{module}.{name}"
        assert hasattr(theirs, name), f"{on_strands(module)} has no {name}: not a Strands name"


@pytest.mark.parametrize("statement", [
    "from strands import Agent, InterventionHandler",
    "from strands.interventions import Deny, InterventionHandler, Proceed",
    "from strands.interventions import Confirm, Guide, Transform",
    "from strands.vended_interventions.hitl import HumanInTheLoop",
    "from strands.vended_interventions.hitl import HumanInTheLoop, LLMClassifierConfig",
    "from strands.vended_interventions.hitl.classifier import ClassifierResult",
    "from strands.hooks import HookOrder",
])
def test_the_interventions_imports_of_strands_docs_resolve_on_statehitl(statement: str) -> None:
    assert imports(statement) is None


@pytest.mark.parametrize("statement", [
    "from strands.vended_interventions import CedarAuthorization",
    "from strands.vended_interventions.cedar import CedarAuthorization",
])
def test_cedar_authorization_fails_to_import_as_a_missing_feature_does(statement: str) -> None:
    assert isinstance(imports(statement), ImportError)


def on_strands(module: str) -> str:
    return "strands" + module.removeprefix("statehitl")


@pytest.mark.parametrize("module", sorted(PATHS))
def test_each_strands_module_exports_exactly_statehitls_own_objects(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(PATHS[module])
    for name, path in PATHS[module].items():
        assert getattr(loaded, name) is _statehitl(path), f"{module}.{name}"


@pytest.mark.parametrize("module", sorted(ALREADY))
def test_the_strands_modules_statehitl_had_hold_the_names_users_import(module: str) -> None:
    loaded = importlib.import_module(module)
    for name, path in ALREADY[module].items():
        assert getattr(loaded, name) is _statehitl(path), f"{module}.{name}"


def test_a_strands_except_clause_catches_statehitls_errors(tmp_path: Any) -> None:
    from statehitl.session.file_session_manager import FileSessionManager
    from statehitl.types.exceptions import ConcurrencyException, ModelThrottledException, SessionException

    with pytest.raises(SessionException, match="session id 'a/b' is not allowed"):
        FileSessionManager(session_id="a/b", storage_dir=tmp_path)

    agent = Agent(model=ScriptedModel([ThrottledFromModels("slow down")]), callback_handler=None)
    with pytest.raises(ModelThrottledException, match="slow down"):
        agent("hi")

    caught: list[BaseException] = []

    @tool(context=True)
    def call_myself(tool_context: ToolContext) -> str:
        """Call the agent that is running this tool."""
        try:
            tool_context.agent("again")
        except ConcurrencyException as error:
            caught.append(error)
        return "refused"

    reply = {"role": "assistant", "content": [{"toolUse": {"name": "call_myself", "input": {}}}]}
    busy = Agent(model=ScriptedModel([reply, "done"]), tools=[call_myself], callback_handler=None)
    assert str(busy("go")) == "done"
    assert len(caught) == 1
    assert "already running a call" in str(caught[0])


# Strands 1.62's modules for checkpoints, snapshots and storage, and the names statehitl has in each.
STRANDS_MODULES: dict[str, tuple[str, ...]] = {
    "experimental.checkpoint": ("CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"),
    "experimental.checkpoint.checkpoint": ("CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"),
    "types._snapshot": ("ALL_SNAPSHOT_FIELDS", "SNAPSHOT_PRESETS", "SNAPSHOT_SCHEMA_VERSION", "Scope", "Snapshot",
                        "SnapshotField", "SnapshotPreset", "VALID_SCOPES", "resolve_snapshot_fields"),
    "types": ("Snapshot",),
    "types.exceptions": ("CheckpointException", "SnapshotException", "StorageError"),
    "session": ("BidiAgentSaveLatestStrategy", "MultiAgentSaveLatestStrategy", "SaveLatestStrategy",
                "SnapshotSessionManager", "SnapshotTrigger"),
    "session.snapshot_session_manager": ("SnapshotSessionManager", "SnapshotTrigger", "SaveLatestStrategy"),
    "storage": ("InMemoryStorage", "LocalFileStorage", "S3Storage", "Storage"),
    "storage.storage": ("Storage", "StorageSearchResult"),
    "storage.in_memory_storage": ("InMemoryStorage",),
    "storage.local_file_storage": ("LocalFileStorage",),
    "storage.s3_storage": ("S3Storage",),
    "storage.search": ("Bm25SearchStrategy", "Bm25SearchStrategyConfig", "KeywordSearchStrategy", "SearchStrategy",
                       "StorageSearchResult"),
    "storage.search.bm25": ("Bm25SearchStrategy", "Bm25SearchStrategyConfig"),
    "storage.search.keyword": ("KeywordSearchStrategy", "STOP_WORDS", "token_overlap_score", "tokenize"),
    "storage.search.types": ("SearchStrategy",),
}


@pytest.mark.parametrize("module", sorted(STRANDS_MODULES))
def test_strands_checkpoint_snapshot_and_storage_names_are_at_strands_paths(module: str) -> None:
    theirs, ours = importlib.import_module(f"strands.{module}"), importlib.import_module(f"statehitl.{module}")
    for name in STRANDS_MODULES[module]:
        assert hasattr(theirs, name), f"strands.{module}.{name} is not Strands' own: fix the list"
        assert hasattr(ours, name), f"statehitl.{module} lacks {name}"
